"""The ``precision`` inference setting: bfloat16 matrix products (the encoder's, the heads', the span stages') where the device has them natively
(docs/speed.md, "bfloat16"), float32 elsewhere, with --int8, and by default."""

from __future__ import annotations

import json
import pickle
import shutil
from dataclasses import replace

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import spandep
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.hardware import native_bfloat16
from spandep.models import base
from spandep.options import InferenceOptions
from spandep.storage.model_io import load_model

from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, write_config


def matrix_modules(model) -> dict[str, torch.nn.Module]:
    """The modules whose matrix products a parse runs in its precision: the encoder, the output heads, and the span
    proposal and the word scorer of a span model or the Biaffine model's scorer (their arc projection: a scorer runs
    through ``score``, not ``forward``); a span model's linker always runs in float32."""
    modules = {"encoder": model.encoder, **{f"head {name}": head for name, head in model.heads.items()}}
    if getattr(model, "proposal", None) is not None:
        modules["proposal"] = model.proposal
    for name in ("word_scorer", "scorer"):
        if getattr(model, name, None) is not None:
            modules[name] = getattr(model, name).arc_dep
    return modules


def autocast_seen(model, options: InferenceOptions, monkeypatch: pytest.MonkeyPatch, native: bool) -> set[bool]:
    """Parse a few dev sentences with ``options``, the device taken to compute bfloat16 natively or not; whether
    autocast was on while the modules of :func:`matrix_modules` ran (each of them runs), and that the encoder's
    vectors came back in float32."""
    monkeypatch.setattr(base, "native_bfloat16", lambda device: native)
    seen: dict[str, set[bool]] = {}

    def record(name):
        return lambda module, inputs, output: seen.setdefault(name, set()).add(torch.is_autocast_enabled("cpu"))

    modules = matrix_modules(model)
    hooks = [module.register_forward_hook(record(name)) for name, module in modules.items()]
    if getattr(model, "linker", None) is not None:
        hooks.append(model.linker.register_forward_hook(record("linker")))
    sentences = list(read_conllu(DEV))[:6]
    parses = model.parse(sentences, options)
    for hook in hooks:
        hook.remove()
    assert all(sorted(p.heads).count(0) >= 1 and len(p.heads) == len(s) for p, s in zip(parses, sentences))
    assert set(seen) - {"linker"} == set(modules), f"modules that never ran: {set(modules) - set(seen)}"
    assert seen.get("linker", {False}) == {False}  # the linker in float32 whatever the precision
    seen.pop("linker", None)
    vectors = next(model.encoded_batches(sentences, model.settings(options)))[2]  # (batch, 1 + n, width)
    assert vectors.dtype == torch.float32
    return set().union(*seen.values())


@pytest.mark.parametrize("kind", ["biaffine", "span"])
def test_bfloat16_runs_every_matrix_product_under_autocast_only_where_native(tiny_models, monkeypatch, kind):
    model = load_model(tiny_models[kind])
    assert model.settings().precision == "float32"  # the default: as every model before the setting
    assert autocast_seen(model, InferenceOptions(), monkeypatch, native=True) == {False}
    assert autocast_seen(model, InferenceOptions(precision="bfloat16"), monkeypatch, native=True) == {True}
    assert autocast_seen(model, InferenceOptions(precision="bfloat16"), monkeypatch, native=False) == {False}
    model.encoder.int8 = True  # as storage.int8.dynamic_int8 marks it: quantised layers take float32 only
    assert autocast_seen(model, InferenceOptions(precision="bfloat16"), monkeypatch, native=True) == {False}


def test_a_saved_precision_is_the_default_and_a_given_one_wins(tiny_models, tmp_path, monkeypatch):
    folder = tmp_path / "model"
    shutil.copytree(tiny_models["span"], folder)
    config = json.loads((folder / "config.json").read_text())
    config["model"]["inference"]["precision"] = "bfloat16"
    (folder / "config.json").write_text(json.dumps(config))
    model = load_model(folder)
    assert model.settings().precision == "bfloat16"
    assert autocast_seen(model, InferenceOptions(), monkeypatch, native=True) == {True}
    assert autocast_seen(model, InferenceOptions(precision="float32"), monkeypatch, native=True) == {False}
    nlp = spandep.load(folder, precision="float32")
    assert nlp.model.settings(nlp.options).precision == "float32"


ANNOTATING = "word_scorer = { arc_mlp = 16, rel_mlp = 8 }\n[heads.upos]\n\n[heads.feats]\nhidden = 8\n\n[heads.lemma]\nchars = 6\ncontext = 4\n"


@pytest.mark.parametrize("kind", ["biaffine", "span"])
def test_bfloat16_reaches_the_heads_and_every_scorer_and_the_scores_stay_float(tmp_path, monkeypatch, kind):
    """A model with output heads (and, a span model, a word scorer whose arcs and labels the parse reads): under
    bfloat16 every one of them runs under autocast, each parse is a tree with each head's column and its head
    scores are float, and the parse agrees with float32's on most words (random weights: near-ties may differ)."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    table = (TINY_SPAN + ANNOTATING) if kind == "span" else TINY_BIAFFINE + ANNOTATING.split("\n", 1)[1]
    Trainer(load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=table, epochs=1))).run()
    model = load_model(tmp_path / "run" / "model")
    options = InferenceOptions(precision="bfloat16", **({"arc_weight": 1.0, "label_source": "word"} if kind == "span" else {}))
    assert set(matrix_modules(model)) >= {"head upos", "head feats", "head lemma"}
    assert autocast_seen(model, options, monkeypatch, native=True) == {True}
    sentences = list(read_conllu(DEV))[:20]
    low, full = model.parse(sentences, options), model.parse(sentences, replace(options, precision="float32"))
    for sentence, parse in zip(sentences, low):
        assert len(parse.heads) == len(sentence) and sorted(parse.heads).count(0) >= 1
        assert set(parse.columns) == set(model.heads) and all(len(values) == len(sentence) for values in parse.columns.values())
        assert parse.scores is not None and parse.scores.head_scores.dtype == np.float64
    words = [(h, label) for p in full for h, label in zip(p.heads, p.labels)]
    same = sum(a == b for a, b in zip(words, [(h, label) for p in low for h, label in zip(p.heads, p.labels)]))
    assert same >= 0.9 * len(words)


def test_a_bad_precision_is_one_line():
    with pytest.raises(ValueError, match="precision"):
        InferenceOptions(precision="float16")
    result = CliRunner().invoke(app, ["parse", str(DEV), "--precision", "float16"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["spandep: error: --precision: unknown precision 'float16'; use float32 or bfloat16"]


def test_native_bfloat16_answers_for_each_device_kind():
    assert native_bfloat16(torch.device("meta")) is False
    assert isinstance(native_bfloat16(torch.device("cpu")), bool)


@pytest.fixture(scope="module")
def transformer_models(tmp_path_factory, tiny_transformer_dir):
    """One-epoch Biaffine and span models over the tiny random transformer: ``{"biaffine": folder, "span": folder}``."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("transformer_models")
    models = {}
    for name, table in (("biaffine", TINY_BIAFFINE), ("span", TINY_SPAN)):
        config = write_config(root / f"{name}.toml", root / name, "transformer", tiny_transformer_dir, model=table, epochs=1)
        Trainer(load_config(config)).run()
        models[name] = root / name / "model"
    return models


@pytest.mark.parametrize("kind", ["biaffine", "span"])
def test_a_pipeline_that_parses_in_bfloat16_holds_its_encoder_in_it_and_parses_the_same(transformer_models, monkeypatch, kind):
    """spandep.load with precision bfloat16 (on a CPU taken to have it natively) keeps the pretrained module's linear
    weights in bfloat16 only; its parses are those of the float32 weights under autocast, bit for bit; a float32
    parse is refused in one line; without native bfloat16, or with precision float32, nothing is held."""
    from spandep.storage import precision

    monkeypatch.setattr(base, "native_bfloat16", lambda device: True)
    monkeypatch.setattr(precision, "native_bfloat16", lambda device: True)
    sentences = list(read_conllu(DEV))[:8]
    plain = load_model(transformer_models[kind])
    expected = plain.parse(sentences, InferenceOptions(precision="bfloat16"))
    nlp = spandep.load(transformer_models[kind], precision="bfloat16")
    linear = [m for m in nlp.model.encoder.pretrained_module().modules() if isinstance(m, torch.nn.Linear)]
    assert nlp.model.encoder.held_bfloat16 and linear and {m.weight.dtype for m in linear} == {torch.bfloat16}
    got = nlp.model.parse(sentences, nlp.options)
    assert [pickle.dumps(p) for p in got] == [pickle.dumps(p) for p in expected]  # heads, labels, scores, columns
    with pytest.raises(ValueError, match="holds its encoder in bfloat16"):
        nlp.parse_tokens([["a", "b"]], precision="float32")
    assert not spandep.load(transformer_models[kind], precision="float32").model.encoder.held_bfloat16
    monkeypatch.setattr(precision, "native_bfloat16", lambda device: False)
    assert not spandep.load(transformer_models[kind], precision="bfloat16").model.encoder.held_bfloat16


def test_release_leaves_a_mapped_tensor_reading_the_same_and_an_allocated_one_alone(tmp_path):
    """``release`` advises the kernel to drop a memory-mapped tensor's pages (read again from the file when touched):
    its values stay; a tensor torch allocated is not touched (``False``)."""
    from safetensors.torch import load_file, save_file

    from spandep.malloc import release

    values = torch.randn(300_000)
    save_file({"w": values}, tmp_path / "w.safetensors")
    mapped = load_file(tmp_path / "w.safetensors")["w"]
    assert not mapped.untyped_storage().resizable()  # safetensors maps the file
    release(mapped)
    assert torch.equal(mapped, values)
    allocated = values.clone()
    assert release(allocated) is False and torch.equal(allocated, values)


def test_word_chars_keep_float32_when_the_character_lstm_gives_bfloat16(monkeypatch):
    """Under autocast the character LSTM may answer in bfloat16 (oneDNN's choice, by batch); the word vectors it fills
    stay float32, as the head's other features are."""
    from spandep.encoders.chars import CharLSTM
    from spandep.models.heads.context import WordChars

    chars = WordChars(["<pad>", "<unk>", "<root>", "a", "b"], 8)
    real = CharLSTM.forward
    monkeypatch.setattr(CharLSTM, "forward", lambda self, ids: real(self, ids).to(torch.bfloat16))
    mask = torch.tensor([[True, True, True], [True, True, False]])  # (2, 1 + n)
    with torch.inference_mode():
        out = chars([["ab", "ba"], ["a"]], mask)  # (2, 3, 8)
    assert out.dtype == torch.float32 and out.shape == (2, 3, 8)
    assert bool(out[0, 1].abs().sum() > 0) and bool((out[1, 2] == 0).all()) and bool((out[:, 0] == 0).all())
