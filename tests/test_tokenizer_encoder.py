"""The tokenizer's opt-in encoder features (issue 47): each character reads the hidden state of the word piece that
covers it, from the first layers of a base encoder (here the tiny random BERT of conftest)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from conftest import DEV, FIXTURES, TRAIN
from spandep.cli.main import app
from spandep.errors import ModelError
from spandep.tokenization import encoder_features
from spandep.tokenization.corpus import lossless_problems, raw_text, read_paragraphs
from spandep.tokenization.encoder_features import PieceVectors, cached_vectors
from spandep.tokenization.text import paragraphs
from spandep.tokenization.trained import load_tokenizer

SMALL = ["--embedding", "8", "--hidden", "8", "--layers", "1", "--window", "64", "--augment", "0"]
TEXT = "Don't stop. We've e-mailed Dr. Smith, unbelievably!\n\nA new paragraph: 中文分词。"


def _train(tmp_path, encoder, *more: str):
    out = tmp_path / "run"
    args = ["train-tokenizer", str(TRAIN), "--dev", str(DEV), "-o", str(out), *SMALL, "--encoder", str(encoder), *more]
    return out, CliRunner().invoke(app, args)


def test_each_character_gets_its_pieces_vector(tiny_transformer_dir):
    pieces = PieceVectors("tiny", str(tiny_transformer_dir), 1)
    text = "  spandepification words  x"
    vectors = pieces.vectors(text, [(2, len(text))])  # (n_chars, width + 1)
    assert vectors.shape == (len(text), pieces.width + 1)
    enc = pieces.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    starts = sorted(s for s, e in enc["offset_mapping"] if e > s)
    assert np.flatnonzero(vectors[:, -1]).tolist() == starts and len(starts) > 3  # "spandepification": 4 pieces
    for s, e in enc["offset_mapping"]:
        assert np.array_equal(vectors[s:e, :-1], np.repeat(vectors[s : s + 1, :-1], e - s, axis=0))
    spaces = [i for i, c in enumerate(text) if c.isspace()]
    assert not vectors[spaces].any() and vectors[starts, :-1].any(axis=1).all()
    alone = pieces.vectors("words  x", [(0, 8)])  # (8, width + 1): the same words, another paragraph
    assert not np.allclose(alone[0, :-1], vectors[19, :-1], atol=1e-5)  # the context reaches the vectors


def test_long_paragraphs_are_read_in_windows(tiny_transformer_dir):
    pieces = PieceVectors("tiny", str(tiny_transformer_dir), 2)
    assert pieces.window + 2 * pieces.context + 2 <= 64  # the tiny BERT has 64 positions
    text = " ".join(f"word{i}" for i in range(200))
    vectors = pieces.vectors(text, [(0, len(text))])  # (n_chars, width + 1)
    covered = [i for i, c in enumerate(text) if not c.isspace()]
    assert vectors[covered, :-1].any(axis=1).all()


def test_train_save_load_and_tokenize_losslessly(tmp_path, tiny_transformer_dir):
    out, result = _train(tmp_path, tiny_transformer_dir, "--epochs", "1", "--encoder-layers", "1")
    assert result.exit_code == 0, result.output
    folder = out / "tokenizer"
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["net"]["encoder"] == str(tiny_transformer_dir) and config["net"]["encoder_layers"] == 1
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "mwt.json"]  # no base weights
    stored = load_file(str(folder / "model.safetensors"))
    assert stored["pieces.weight"].shape == (8, 32 + 1) and not any("encoder" in k or "layer." in k for k in stored)
    tokenizer = load_tokenizer(out)
    assert tokenizer.pieces is not None and tokenizer.pieces.layers == 1
    sentences = tokenizer.tokenize(TEXT)
    assert lossless_problems(TEXT, sentences) == []  # every character back, in order, each in one token
    paras = paragraphs(TEXT)
    ids = torch.from_numpy(tokenizer.vocab.encode(TEXT))[None]  # (1, n_chars, 2)
    vectors = torch.from_numpy(tokenizer.pieces.vectors(TEXT, paras))[None]  # (1, n_chars, 33)
    lengths = torch.tensor([len(TEXT)])  # (1,)
    with torch.no_grad():
        assert not torch.allclose(tokenizer.net(ids, lengths, vectors), tokenizer.net(ids, lengths, torch.zeros_like(vectors)))


def test_encoder_precision_is_saved_loaded_and_used_only_where_native(tmp_path, tiny_transformer_dir, monkeypatch):
    out, result = _train(tmp_path, tiny_transformer_dir, "--epochs", "1", "--encoder-layers", "1")
    assert result.exit_code == 0, result.output
    tokenizer = load_tokenizer(out)
    assert tokenizer.pieces.precision == "float32" and "encoder_precision" not in json.loads((out / "tokenizer" / "config.json").read_text(encoding="utf-8"))
    paras = paragraphs(TEXT)
    exact = tokenizer.pieces.vectors(TEXT, paras)  # (n_chars, width + 1)
    monkeypatch.setattr(encoder_features, "native_bfloat16", lambda device: True)
    fast = load_tokenizer(out, precision="bfloat16")
    rounded = fast.pieces.vectors(TEXT, paras)  # (n_chars, width + 1): bfloat16 products, float32 out
    assert rounded.dtype == np.float32 and not np.array_equal(rounded, exact) and np.allclose(rounded, exact, atol=0.1)
    fast.save(tmp_path / "saved", {})
    assert json.loads((tmp_path / "saved" / "config.json").read_text(encoding="utf-8"))["encoder_precision"] == "bfloat16"
    assert load_tokenizer(tmp_path / "saved").pieces.precision == "bfloat16"
    monkeypatch.setattr(encoder_features, "native_bfloat16", lambda device: False)
    emulated = load_tokenizer(tmp_path / "saved")  # a processor without native bfloat16 reads in float32
    assert emulated.pieces.precision == "bfloat16" and np.array_equal(emulated.pieces.vectors(TEXT, paras), exact)
    with pytest.raises(ValueError, match="encoder precision must be 'float32' or 'bfloat16', not 'float16'"):
        PieceVectors("tiny", str(tiny_transformer_dir), 1, "float16")


def test_the_cached_vectors_are_the_ones_a_tokenizer_computes(tmp_path, tiny_transformer_dir):
    pieces = PieceVectors("tiny", str(tiny_transformer_dir), 2)
    text = raw_text(read_paragraphs(DEV))
    spans = paragraphs(text)
    cached = cached_vectors(pieces, text, spans, tmp_path, "dev")  # (n_chars, width + 1)
    assert isinstance(cached, np.memmap) and pieces.known[text] is cached
    fresh = PieceVectors("tiny", str(tiny_transformer_dir), 2).vectors(text, spans)  # (n_chars, width + 1)
    np.testing.assert_allclose(cached, fresh, atol=1e-5)
    assert cached_vectors(pieces, text, spans, tmp_path, "dev").filename == cached.filename
    assert len(list(tmp_path.glob("*.npy"))) == 1


def test_a_resumed_run_reuses_the_cache(tmp_path, tiny_transformer_dir, monkeypatch):
    out, result = _train(tmp_path, tiny_transformer_dir, "--epochs", "1", "--encoder-layers", "2")
    assert result.exit_code == 0, result.output
    files = {p.name: p.stat().st_mtime_ns for p in (out / "cache").iterdir()}
    assert sorted(name.split("-")[0] for name in files) == ["dev", "train"]

    def recompute(*args, **kwargs):
        raise AssertionError("the cached vectors were computed again")

    monkeypatch.setattr(encoder_features.PieceVectors, "fill", recompute)
    _, again = _train(tmp_path, tiny_transformer_dir, "--epochs", "2", "--encoder-layers", "2")
    assert again.exit_code == 0, again.output
    assert {p.name: p.stat().st_mtime_ns for p in (out / "cache").iterdir()} == files
    record = json.loads((out / "record.json").read_text(encoding="utf-8"))
    assert [h["epoch"] for h in record["history"]] == [1, 2]


def test_augmentation_beside_encoder_features_is_drawn_once(tmp_path, tiny_transformer_dir, monkeypatch):
    """With --encoder, --augment adds one fixed draw of variants beside the training text: the cached vectors cover
    both, and a resumed run finds them (the same draw) instead of computing them again."""
    from spandep.tokenization.variants import training_paragraphs
    from spandep.training.tokenizer import TrainSettings

    out, result = _train(tmp_path, tiny_transformer_dir, "--epochs", "1", "--encoder-layers", "1", "--augment", "1")
    assert result.exit_code == 0, result.output
    paras = read_paragraphs(TRAIN)
    drawn = training_paragraphs(paras, 1.0, TrainSettings().seed, 0)
    assert drawn != paras
    (cache,) = (out / "cache").glob("train-*.npy")
    assert np.load(cache, mmap_mode="r").shape[0] == sum(len(p.text) for p in paras + drawn)

    def recompute(*args, **kwargs):
        raise AssertionError("the cached vectors were computed again")

    monkeypatch.setattr(encoder_features.PieceVectors, "fill", recompute)
    _, again = _train(tmp_path, tiny_transformer_dir, "--epochs", "2", "--encoder-layers", "1", "--augment", "1")
    assert again.exit_code == 0, again.output


def test_a_tokenizer_without_encoder_features_loads_without_an_encoder():
    tokenizer = load_tokenizer(FIXTURES / "tokenizer_before_features")
    assert tokenizer.pieces is None and not hasattr(tokenizer.net, "pieces")


def test_a_base_name_needs_a_resolver(tmp_path, tiny_transformer_dir):
    out, result = _train(tmp_path, tiny_transformer_dir, "--epochs", "1", "--encoder-layers", "1")
    assert result.exit_code == 0, result.output
    config_path = out / "tokenizer" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["net"]["encoder"] = "some-base"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelError, match="'some-base', which is no local folder"):
        load_tokenizer(out)
    named = load_tokenizer(out, encoder_folder=lambda name: str(tiny_transformer_dir))
    assert named.pieces.name == "some-base" and lossless_problems(TEXT, named.tokenize(TEXT)) == []


@pytest.mark.parametrize("more,expected", [
    (["--encoder-layers", "0"], "--encoder-layers"),
    (["--encoder-layers", "65"], "--encoder-layers"),
    (["--encoder-layers", "3"], "encoder layers must be in [1, 2]"),
])
def test_encoder_options_are_one_line_errors(tmp_path, tiny_transformer_dir, more, expected):
    _, result = _train(tmp_path, tiny_transformer_dir, *more)
    assert result.exit_code == 2 and result.output.count("\n") == 1 and expected in result.output, result.output


def test_an_unknown_encoder_is_a_one_line_error(tmp_path):
    _, result = _train(tmp_path, tmp_path / "no-such-encoder")
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "--encoder" in result.output, result.output


def test_a_model_whose_tokenizer_names_a_base_parses_raw_text(tmp_path, tiny_models):
    """spandep.load resolves the encoder of a model folder's tokenizer by the base's name (encoders.bases)."""
    import shutil

    import spandep
    from spandep.encoders.bases import MINILM_ALIAS, resolve_model_path
    from spandep.tokenization.model import CharTagger, CharVocab, NetConfig
    from spandep.tokenization.mwt import MwtLexicon
    from spandep.tokenization.trained import TrainedTokenizer

    pieces = PieceVectors(MINILM_ALIAS, resolve_model_path(MINILM_ALIAS), 1)
    config = NetConfig(embedding=8, hidden=8, layers=1, dropout=0.0, encoder=MINILM_ALIAS, encoder_layers=1)
    vocab = CharVocab.build([TEXT], min_count=1)
    torch.manual_seed(0)
    tokenizer = TrainedTokenizer(vocab, CharTagger(len(vocab), config, pieces.width), MwtLexicon.learn([]), pieces=pieces)
    model = tmp_path / "model"
    shutil.copytree(tiny_models["biaffine"], model)
    shutil.rmtree(model / "tokenizer", ignore_errors=True)
    tokenizer.save(model / "tokenizer", {})
    nlp = spandep.load(model)
    assert nlp.tokenizer.pieces.name == MINILM_ALIAS and nlp.tokenizer.pieces.precision == "float32"  # as saved
    text = "Dr. Smith came. She left!"
    doc = nlp(text)
    assert doc.text == text and "".join(w.text for s in doc for w in s) == text.replace(" ", "")
    # a precision asked for is the tokenizer's too
    assert spandep.load(model, precision="bfloat16").tokenizer.pieces.precision == "bfloat16"


def test_a_parser_and_encoder_features_over_one_base_share_its_tokenizer(tiny_transformer_dir):
    """One tokenizer object per base folder while anything holds it (XLM-R's holds about 0.29 GB): the parser's
    encoder and the tokenizer's encoder features of one model, or two models of one base, read the same pieces."""
    import gc

    from spandep.encoders.transformer import TransformerEncoder
    from spandep.tokenization.encoder_features import _TOKENIZERS, piece_tokenizer

    pieces = PieceVectors("tiny", str(tiny_transformer_dir), 1)
    encoder = TransformerEncoder(str(tiny_transformer_dir), pretrained=False)
    assert encoder.tokenizer is pieces.tokenizer is piece_tokenizer(str(tiny_transformer_dir) + "/.")
    del pieces, encoder
    gc.collect()
    assert str(tiny_transformer_dir.resolve()) not in _TOKENIZERS  # held by nothing: gone, not kept for the process
