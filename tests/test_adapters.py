"""Adapters over a frozen transformer (LoRA with peft): what trains, what ships, and that a shipped copy parses as the
trained model did (tiny random transformer, CPU, seconds)."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from conftest import DEV, TINY_SPAN, train_interrupted, write_config
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_valid_tree
from spandep.encoders.adapters import adapter_parameters
from spandep.errors import InputFormatError, ModelError
from spandep.storage.model_io import load_model, save_model
from spandep.pipeline.predict import parse_stream
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

LORA = 'adapter = { type = "lora", r = 4, alpha = 8, targets = ["query", "key", "value", "output.dense", "intermediate.dense"] }\n'
LORA_HEADS = TINY_SPAN + "\n[heads.upos]\n\n[heads.lemma]\ncasing = 4\nsuffix = 4\n"


def lora_config(tmp_path, name="run", encoder_extra=LORA, **training):
    """The tiny span parser with UPOS and lemma heads over the tiny transformer, a LoRA adapter on it."""
    path = write_config(tmp_path / f"{name}.toml", tmp_path / name, "transformer", training.pop("model_dir"), pretrained=True,
                        model=LORA_HEADS, encoder_extra=encoder_extra, **training)
    return load_config(path)


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory, tiny_transformer_dir):
    """Two epochs of the tiny LoRA span parser (a few steps) and its folder."""
    root = tmp_path_factory.mktemp("lora")
    trainer = Trainer(lora_config(root, model_dir=tiny_transformer_dir, epochs=2))
    trainer.run()
    return trainer, root


def parses(model, sentences):
    """Each word's head, label, UPOS tag and lemma, the tags and lemmas predicted (the input's blanked)."""
    blank = [replace(s, words=[replace(w, upos="_", lemma="_") for w in s.words]) for s in sentences]
    return [[(w.head, w.deprel, w.upos, w.lemma) for w in s.words] for s in parse_stream(model.eval(), blank)]


@pytest.mark.parametrize(
    "adapter, message",
    [
        ('adapter = { type = "dora" }\n', "adapter type: unknown adapter type 'dora'; known: lora"),
        ("adapter = { r = 8 }\n", "adapter type missing: give one of lora"),
        ('adapter = { type = "lora", rank = 8 }\n', "adapter key\\(s\\) rank do not apply to type 'lora'; known: r, alpha"),
        ('adapter = { type = "lora", r = 0 }\n', "adapter r must be an int ≥ 1, not 0"),
        ('adapter = { type = "lora", targets = [] }\n', 'adapter targets must be "all-linear" or a list of module names'),
        ('adapter = "lora"\n', 'adapter must be a table such as { type = "lora" }'),
        ('freeze_layers = 1\nadapter = { type = "lora" }\n', "do not apply with an adapter"),
    ],
)
def test_a_wrong_adapter_is_a_clear_error(tmp_path, tiny_transformer_dir, adapter, message) -> None:
    with pytest.raises(InputFormatError, match=message):
        lora_config(tmp_path, model_dir=tiny_transformer_dir, encoder_extra=adapter)


def test_an_adapter_table_takes_its_defaults(tmp_path, tiny_transformer_dir) -> None:
    path = write_config(tmp_path / "c.toml", tmp_path / "run", "transformer", tiny_transformer_dir,
                        encoder_extra='[encoder.adapter]\ntype = "lora"\nr = 2\n')
    assert load_config(path)["encoder"]["adapter"] == {"type": "lora", "r": 2}  # the rest from LoraAdapter's defaults
    from spandep.models import build_model, config_from_data

    encoder = build_model(config_from_data(load_config(path), list(read_conllu(DEV)))).encoder
    assert encoder.export_config()["adapter"] == {"type": "lora", "r": 2, "alpha": 32, "dropout": 0.1, "targets": "all-linear"}


def test_only_the_adapter_mix_parser_and_heads_train(lora_run) -> None:
    trainer, _ = lora_run
    model = trainer.model
    pretrained = {id(p) for p in model.pretrained_parameters()}
    added = {id(p) for p in adapter_parameters(model.encoder.transformer)}
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    assert added and added <= trainable and not added & pretrained
    assert trainable == {id(p) for p in model.parameters()} - pretrained  # every pretrained weight is frozen
    assert {id(p) for p in model.encoder.transformer.parameters() if p.requires_grad} == added
    assert all(p.requires_grad for p in [*model.encoder.mix.parameters(), *model.heads.parameters(), *model.proposal.parameters()])
    (group,) = trainer.optimizer.param_groups  # no pretrained weight trains: one group, at [training] lr
    assert group["base_lr"] == trainer.cfg["training"]["lr"]
    assert {id(p) for p in group["params"]} == trainable


@pytest.mark.slow
def test_a_compact_export_ships_only_the_adapter_and_parses_as_the_trained_model(lora_run) -> None:
    trainer, root = lora_run
    model = trainer.model.eval()
    save_model(model, root / "full")
    for flags, name in (([], "compact"), (["--int8"], "int8")):
        result = CliRunner().invoke(app, ["export", str(root / "full"), str(root / name), *flags])
        assert result.exit_code == 0, result.output
    state = {k: v for k, v in model.state_dict().items()}
    pretrained = {id(p) for p in model.pretrained_parameters()}
    base_keys = {k for k, p in model.named_parameters() if id(p) in pretrained}
    config = json.loads((root / "compact" / "config.json").read_text())
    stored = load_file(str(root / "compact" / "model.safetensors"))
    assert set(config["compact"]["from_base"]) == base_keys and set(stored) == set(state) - base_keys
    assert not any(".base_layer." in k for k in stored)
    assert all(stored[k].abs().sum() > 0 for k in stored if ".lora_B." in k)  # trained away from their zero start
    assert json.loads((root / "int8" / "config.json").read_text())["compact"]["int8"] == []  # nothing pretrained to store
    base_bytes = 2 * sum(state[k].numel() for k in base_keys)  # the base weights in float16
    shipped = (root / "compact" / "model.safetensors").stat().st_size
    assert shipped < 2 * sum(v.numel() for v in stored.values()) + 64_000 < base_bytes

    with torch.no_grad():  # the trained model with the weights a compact copy stores (float16), for exact equality
        for p in model.parameters():
            if id(p) not in pretrained:
                p.copy_(p.half().float())
    sentences = list(read_conllu(DEV))
    expected = parses(model, sentences)
    for name in ("full", "compact", "int8"):
        loaded = load_model(root / name)
        assert loaded.encoder.merged and "lora" not in repr(loaded.encoder.transformer).lower()  # plain weights again
        assert parses(loaded, sentences) == expected, name
    unmerged = load_model(root / "compact", merge_adapter=False)
    assert parses(unmerged, sentences) == expected

    fast = load_model(root / "compact", int8=True)  # int8 computation: approximate, but trees
    assert "DynamicQuantizedLinear" in repr(fast.encoder.transformer)
    assert all(is_valid_tree(s.heads) for s in parse_stream(fast, sentences))
    with pytest.raises(ModelError, match="merge_adapter=False"):
        save_model(load_model(root / "compact"), root / "again")


def test_a_compact_model_held_in_bfloat16_merges_its_adapter_a_layer_at_a_time_and_parses_the_same(lora_run, monkeypatch) -> None:
    """spandep.load with precision bfloat16 (a CPU taken to have it natively) of a compact LoRA model, whose base weights
    are memory-mapped from the base's file: the adapter merged a layer at a time straight into bfloat16 weights, each
    memory-mapped pretrained tensor handed to ``release`` once copied; the parses are those of the float32 merged
    weights under autocast, bit for bit."""
    import spandep
    from spandep.models import base
    from spandep.options import InferenceOptions
    from spandep.storage import precision

    trainer, root = lora_run
    save_model(trainer.model.eval(), root / "held-full")
    assert CliRunner().invoke(app, ["export", str(root / "held-full"), str(root / "held")]).exit_code == 0
    monkeypatch.setattr(base, "native_bfloat16", lambda device: True)
    monkeypatch.setattr(precision, "native_bfloat16", lambda device: True)
    released: list[torch.Tensor] = []
    monkeypatch.setattr(precision, "release", lambda tensor: released.append(tensor) or False)
    sentences = list(read_conllu(DEV))[:8]
    expected = load_model(root / "held").parse(sentences, InferenceOptions(precision="bfloat16"))
    assert not released  # a plain load holds nothing
    nlp = spandep.load(root / "held", precision="bfloat16")
    encoder = nlp.model.encoder
    linear = [m for m in encoder.pretrained_module().modules() if isinstance(m, torch.nn.Linear)]
    assert encoder.held_bfloat16 and encoder.merged and "lora" not in repr(encoder.transformer).lower()
    assert linear and {m.weight.dtype for m in linear} == {torch.bfloat16}
    assert [pickle.dumps(p) for p in nlp.model.parse(sentences, nlp.options)] == [pickle.dumps(p) for p in expected]
    mapped = [t for t in released if not t.untyped_storage().resizable()]  # read from the base's file, not allocated
    assert len(released) == sum(1 for _ in encoder.pretrained_module().parameters()) + sum(1 for _ in encoder.pretrained_module().buffers())
    assert len(mapped) == sum(1 for _ in encoder.pretrained_module().parameters())  # every weight (buffers: made by the model)
    embeddings = [m.weight for m in encoder.pretrained_module().modules() if isinstance(m, torch.nn.Embedding)]
    assert embeddings and all(not e.untyped_storage().resizable() and e.dtype == torch.float32 for e in embeddings)  # still mapped


@pytest.mark.slow
def test_an_int8_all_export_stores_the_adapter_and_parser_in_int8_and_parses_nearly_alike(lora_run, monkeypatch) -> None:
    trainer, root = lora_run
    monkeypatch.setattr("spandep.storage.model_io.ALL_MIN_ELEMENTS", 0)  # the tiny model's matrices are small
    save_model(trainer.model.eval(), root / "full-for-int8")
    for flags, name in ((["--int8-all"], "int8-all"), ([], "compact-for-int8")):
        result = CliRunner().invoke(app, ["export", str(root / "full-for-int8"), str(root / name), *flags])
        assert result.exit_code == 0, result.output
    names = json.loads((root / "int8-all" / "config.json").read_text())["compact"]["int8"]
    assert any(".lora_A." in k for k in names) and any(k.startswith("proposal.") for k in names)
    assert any(k.startswith("heads.") for k in names)
    stored = load_file(str(root / "int8-all" / "model.safetensors"))
    assert all(stored[k].dtype == torch.int8 for k in names) and all(stored[k].dim() >= 2 for k in names)
    assert (root / "int8-all" / "model.safetensors").stat().st_size < (root / "compact-for-int8" / "model.safetensors").stat().st_size
    sentences = list(read_conllu(DEV))
    a, b = parses(load_model(root / "compact-for-int8"), sentences), parses(load_model(root / "int8-all"), sentences)
    same = sum(x == y for ha, hb in zip(a, b) for x, y in zip(ha, hb))
    assert same >= 0.9 * sum(len(h) for h in a)
    result = CliRunner().invoke(app, ["export", str(root / "full-for-int8"), str(root / "x"), "--int8-all", "--full"])
    assert result.exit_code == 2 and "--int8-all needs --compact" in result.output


@pytest.mark.slow
def test_training_with_an_adapter_resumes_to_identical_weights(tmp_path, monkeypatch, tiny_transformer_dir) -> None:
    def config(name):
        return lora_config(tmp_path, name, model_dir=tiny_transformer_dir, epochs=2, checkpoint_every=1, patience=9)

    straight = Trainer(config("a"))
    straight.run()
    train_interrupted(config("b"), monkeypatch, at_call=straight.batches_per_epoch + 2)  # mid-epoch 2
    resumed = Trainer(config("b")).run()
    assert resumed["step"] == straight.total_steps
    a = load_model(tmp_path / "a" / "model", merge_adapter=False).state_dict()
    b = load_model(tmp_path / "b" / "model", merge_adapter=False).state_dict()
    assert a.keys() == b.keys() and any(".lora_B." in k for k in a)
    assert all(torch.equal(a[k], b[k]) for k in a)
