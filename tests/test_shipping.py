"""What a shipped model needs: the joint UPOS head, frozen encoder layers, int8 storage and int8 inference, device choice."""

from __future__ import annotations

import os
import stat
from dataclasses import replace

import pytest
import torch

from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, TRAIN, write_config
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_valid_tree
from spandep.errors import ModelError, OptionError, OutputError
from spandep.data.sentence import Sentence, Token
from spandep.models.heads import IGNORE as NO_TAG
from spandep.models.heads import HeadInput
from spandep.models.heads.upos import UposTagger
from spandep.quantised import SCALE_SUFFIX, dequantize, quantize
from spandep.storage.model_io import load_model, resolve_device, save_model
from spandep.pipeline.predict import parse_stream
from spandep.training.config import load_config
from spandep.training.trainer import Trainer


def test_unknown_gold_tags_are_ignored_by_the_loss() -> None:
    tagger = UposTagger(4, ["NOUN", "VERB"], dropout=0.0)
    sentence = Sentence([Token(i + 1, "w", upos=tag) for i, tag in enumerate(["VERB", "_", "X"])])
    assert tagger.gold_ids(sentence) == [1, NO_TAG, NO_TAG]
    x = torch.randn(1, 4, 4, requires_grad=True)  # (batch, 1 + n, d)
    inputs = HeadInput.of(x, torch.ones(1, 4, dtype=torch.bool), [["w"] * 3])
    known = torch.tensor([[NO_TAG, 0, NO_TAG, NO_TAG]])  # (batch, 1 + n): only word 1 has a gold tag
    expected = torch.nn.functional.cross_entropy(tagger(inputs)[0, 1:2], torch.tensor([0]))
    assert torch.allclose(tagger.loss(inputs, known), expected)
    nothing = tagger.loss(inputs, torch.full((1, 4), NO_TAG))
    nothing.backward()  # no gold tag at all: a zero that still backpropagates
    assert nothing.item() == 0.0


def test_predict_returns_one_known_tag_per_word() -> None:
    tagger = UposTagger(4, ["NOUN", "VERB", "DET"]).eval()
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])  # (batch, 1 + n)
    tags = tagger.predict(HeadInput.of(torch.randn(2, 4, 4), mask, [["a", "b"], ["c"]]))
    assert [len(t) for t in tags] == [2, 1] and all(t in tagger.tags for row in tags for t in row)


@pytest.fixture(scope="module")
def tagged_run(tmp_path_factory, tiny_transformer_dir):
    """A tiny span parser with a tagging head over the tiny transformer, its lowest layer frozen."""
    root = tmp_path_factory.mktemp("tagged")
    cfg_path = write_config(root / "c.toml", root / "run", "transformer", tiny_transformer_dir, pretrained=True,
                            model=TINY_SPAN + "\n[heads.upos]\n", encoder_extra="freeze_layers = 1\n", epochs=3)
    trainer = Trainer(load_config(cfg_path))
    trainer.run()
    return trainer, root


@pytest.mark.slow
@pytest.mark.parametrize("parser", [TINY_SPAN, TINY_BIAFFINE], ids=["span", "biaffine"])
def test_the_tagger_learns_and_fills_only_missing_upos(tmp_path, parser) -> None:
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=parser + "\n[heads.upos]\n", epochs=8, lr=1e-2))
    trainer = Trainer(cfg)
    trainer.run()
    model = trainer.model
    tagger = model.heads["upos"]
    assert "NOUN" in tagger.tags
    gold = list(read_conllu(TRAIN))  # seen in training: the head must at least fit them
    blank = [replace(s, words=[replace(w, upos="_") for w in s.words]) for s in gold]
    tagged = list(parse_stream(model, blank))
    assert [len(s) for s in tagged] == [len(s) for s in gold]
    assert all(t in tagger.tags for s in tagged for t in s.upos)
    words = sum(len(s) for s in gold)
    right = sum(a == b for s, g in zip(tagged, gold) for a, b in zip(s.upos, g.upos))
    majority = max(sum(t == tag for s in gold for t in s.upos) for tag in tagger.tags)
    assert right > majority, (right, majority, words)  # better than always guessing the most frequent tag
    kept = list(parse_stream(model, gold))
    assert [s.upos for s in kept] == [s.upos for s in gold]  # given UPOS is never replaced


def test_frozen_layers_do_not_train_and_do_not_ship(tagged_run, tiny_transformer_dir) -> None:
    trainer, root = tagged_run
    model = trainer.model
    layers = model.encoder.transformer.encoder.layer
    assert not any(p.requires_grad for p in layers[0].parameters())
    assert all(p.requires_grad for p in layers[1].parameters())
    from transformers import AutoModel

    pretrained = AutoModel.from_pretrained(tiny_transformer_dir)
    for (name, p), q in zip(layers[0].named_parameters(), pretrained.encoder.layer[0].parameters()):
        assert torch.equal(p, q), name  # untouched by three epochs of training
    save_model(model, root / "compact", compact=True)
    import json

    shipped = json.loads((root / "compact" / "config.json").read_text())["compact"]["from_base"]
    assert any(".encoder.layer.0." in k for k in shipped) and not any(".encoder.layer.1." in k for k in shipped)
    again = load_model(root / "compact")
    sentences = list(read_conllu(DEV))
    a = [(s.heads, s.upos) for s in parse_stream(model, sentences)]
    b = [(s.heads, s.upos) for s in parse_stream(again, sentences)]
    assert sum(x == y for x, y in zip(a, b)) >= len(a) - 1  # float16 storage may flip a near tie at most


def test_device_names_are_checked() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(OptionError, match="device must be cpu, cuda, cuda:N or auto, not 'toaster'"):
        resolve_device("toaster")
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="--device cpu"):
            resolve_device("cuda")


def test_int8_storage_round_trips_within_half_a_step() -> None:
    torch.manual_seed(0)
    w = torch.randn(6, 10) * torch.linspace(0.01, 3.0, 6)[:, None]  # (rows, cols) rows of very different scales
    state = {"encoder.transformer.encoder.layer.0.attention.self.query.weight": w, "proposal.start_word.weight": w}
    stored, names = quantize(state, {"encoder.transformer.encoder.layer.0.attention.self.query.weight"}, min_elements=0)
    assert names == ["encoder.transformer.encoder.layer.0.attention.self.query.weight"]  # only the candidates
    assert stored[names[0]].dtype == torch.int8 and torch.equal(stored["proposal.start_word.weight"], w)
    back = dequantize(stored, names)
    step = w.abs().amax(1, keepdim=True) / 127  # (rows, 1)
    assert set(back) == set(state) and bool(((back[names[0]] - w).abs() <= step * 0.51 + 1e-3).all())
    biaffine = torch.randn(3, 5, 5) * torch.linspace(0.01, 3.0, 3)[:, None, None]  # (labels, d, d): a row is [l, i, :]
    stored, names = quantize({"linker.label_attn.weight": biaffine}, {"linker.label_attn.weight"}, min_elements=0)
    assert stored[names[0]].shape == (3, 5, 5) and stored[names[0] + SCALE_SUFFIX].shape == (3, 5)
    step = biaffine.abs().amax(-1, keepdim=True) / 127  # (labels, d, 1)
    assert bool(((dequantize(stored, names)[names[0]] - biaffine).abs() <= step * 0.51 + 1e-3).all())


def test_an_int8_copy_loads_and_parses_like_the_model(tagged_run, monkeypatch) -> None:
    trainer, root = tagged_run
    monkeypatch.setattr("spandep.storage.model_io.quantize", lambda state, names: quantize(state, names, min_elements=0))  # tiny matrices
    save_model(trainer.model, root / "int8", compact=True, int8="encoder")
    import json

    stored = json.loads((root / "int8" / "config.json").read_text())["compact"]["int8"]
    assert any(".transformer.encoder.layer.1." in k for k in stored) and all(".transformer." in k for k in stored)
    again = load_model(root / "int8")
    sentences = list(read_conllu(DEV))
    a = [s.heads for s in parse_stream(trainer.model, sentences)]
    b = [s.heads for s in parse_stream(again, sentences)]
    assert [len(h) for h in a] == [len(h) for h in b]
    same = sum(x == y for ha, hb in zip(a, b) for x, y in zip(ha, hb))
    assert same >= 0.9 * sum(len(h) for h in a)


def test_int8_inference_parses_every_sentence_into_a_tree(tagged_run, tiny_models) -> None:
    _, root = tagged_run
    save_model(tagged_run[0].model, root / "full")
    model = load_model(root / "full", int8=True)
    assert "DynamicQuantizedLinear" in repr(model.encoder.transformer)
    sentences = list(read_conllu(DEV))
    parsed = list(parse_stream(model, sentences))
    assert [len(s) for s in parsed] == [len(s) for s in sentences]
    assert all(is_valid_tree(s.heads) for s in parsed)
    with pytest.raises(ModelError, match="pretrained \\(transformer\\) encoder"):
        load_model(tiny_models["biaffine"], int8=True)  # a BiLSTM model


def test_a_saved_model_folder_is_readable_by_others_as_the_umask_allows(tiny_models, tmp_path) -> None:
    old = os.umask(0o022)
    try:
        save_model(load_model(tiny_models["span"]), tmp_path / "copy")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [tmp_path / "copy", *(tmp_path / "copy").iterdir()]}
    assert modes["copy"] == 0o755 and modes["model.safetensors"] == 0o644 and modes["config.json"] == 0o644


def test_a_model_folder_that_cannot_be_made_is_an_output_error(tiny_models, tmp_path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(OutputError, match="cannot write .*file.*choose a writable folder"):
        save_model(load_model(tiny_models["span"]), tmp_path / "file" / "model")
    assert (tmp_path / "file").read_text() == "not a folder"
