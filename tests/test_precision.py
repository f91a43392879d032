"""The ``precision`` inference setting: bfloat16 matrix products in the encoder where the device has them natively
(docs/speed.md, "bfloat16"), float32 elsewhere, with --int8, and by default."""

from __future__ import annotations

import json
import pickle
import shutil

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


def autocast_seen(model, options: InferenceOptions, monkeypatch: pytest.MonkeyPatch, native: bool) -> set[bool]:
    """Parse a few dev sentences with ``options``, the device taken to compute bfloat16 natively or not; whether
    autocast was on while the encoder ran, and that its vectors came back in float32."""
    monkeypatch.setattr(base, "native_bfloat16", lambda device: native)
    seen: set[bool] = set()

    def record(module, inputs, output):
        seen.add(torch.is_autocast_enabled("cpu"))

    def check_float(module, inputs, output):
        assert output.dtype == torch.float32

    hooks = [model.encoder.register_forward_hook(record)]
    sentences = list(read_conllu(DEV))[:6]
    parses = model.parse(sentences, options)
    for hook in hooks:
        hook.remove()
    assert all(sorted(p.heads).count(0) >= 1 and len(p.heads) == len(s) for p, s in zip(parses, sentences))
    vectors = next(model.encoded_batches(sentences, model.settings(options)))[2]  # (batch, 1 + n, width)
    assert vectors.dtype == torch.float32
    return seen


@pytest.mark.parametrize("kind", ["biaffine", "span"])
def test_bfloat16_runs_the_encoder_under_autocast_only_where_native(tiny_models, monkeypatch, kind):
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
