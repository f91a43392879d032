"""Tiny end-to-end training runs: learning happens, checkpoints resume exactly, models reload identically."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, train_interrupted, write_config
from spandep.data.conllu import read_conllu
from spandep.errors import OptionError
from spandep.storage.model_io import load_model, save_model
from spandep.pipeline.predict import parse_stream
from spandep.training.averaging import WeightAverage
from spandep.training.checkpoint import changed_settings
from spandep.training.config import load_config
from spandep.training.trainer import Trainer, lr_factor


def test_lr_schedule_warms_up_then_decays_to_zero():
    total = 100
    f = [lr_factor(s, total, 0.1) for s in range(total)]
    assert f[0] == pytest.approx(0.1) and f[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(f[9:], f[10:]))
    assert f[-1] == pytest.approx(1 / 90)


@pytest.mark.slow
def test_biaffine_overfits_a_tiny_treebank(tmp_path):
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", epochs=1))
    cfg["training"]["lr"] = 1e-2
    trainer = Trainer(cfg)
    batch = trainer._batch(list(range(8)))
    first = trainer.model.eval().loss(batch).item()
    trainer.model.train()
    for _ in range(80):
        trainer._step(batch, trainer.total_steps // 2)
    assert trainer.model.eval().loss(batch).item() < 0.2 * first


def _weights(directory):
    return {k: v.clone() for k, v in load_model(directory).state_dict().items()}


@pytest.mark.slow
@pytest.mark.parametrize("model_table, ema", [(TINY_BIAFFINE, 0.0), (TINY_SPAN, 0.0), (TINY_BIAFFINE, 0.9)],
                         ids=["biaffine", "span", "biaffine-ema"])
def test_interrupted_training_resumes_to_identical_weights(tmp_path, monkeypatch, model_table, ema):
    def config(name):
        return load_config(write_config(tmp_path / f"{name}.toml", tmp_path / name, "bilstm", model=model_table,
                                        checkpoint_every=2, patience=9, ema=ema))

    straight = Trainer(config("a"))
    straight.run()

    cfg_b = config("b")
    train_interrupted(cfg_b, monkeypatch, at_call=7)  # mid-epoch 2, after the checkpoint of step 6
    resumed = Trainer(cfg_b).run()
    assert resumed["step"] == straight.total_steps
    a, b = _weights(tmp_path / "a" / "model"), _weights(tmp_path / "b" / "model")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    last_a, last_b = _last_checkpoint(tmp_path / "a"), _last_checkpoint(tmp_path / "b")  # weights, moments, averages
    assert last_a.keys() == last_b.keys() and all(torch.equal(last_a[k], last_b[k]) for k in last_a)
    assert any(k.startswith("extra.") for k in last_a) == bool(ema)


def _last_checkpoint(run):
    name = json.loads((run / "checkpoint" / "latest.json").read_text())["name"]
    return load_file(str(run / "checkpoint" / f"{name}.safetensors"))


def test_with_ema_the_saved_model_holds_the_averaged_weights_and_training_goes_on_from_its_own(tmp_path):
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", epochs=1, ema=0.9))
    trainer = Trainer(cfg)
    trainer.run()
    saved = load_model(tmp_path / "run" / "model").state_dict()
    own = dict(trainer.model.named_parameters())
    assert trainer.average is not None and trainer.average.shadow
    for name, average in trainer.average.shadow.items():
        assert torch.equal(saved[name], average)
    assert any(not torch.equal(own[name], average) for name, average in trainer.average.shadow.items())


def test_weight_average_follows_its_formula_and_gives_the_weights_back():
    layer = torch.nn.Linear(2, 2)
    start = layer.weight.detach().clone()
    average = WeightAverage(layer, 0.5)
    with torch.no_grad():
        layer.weight.add_(1.0)
    average.update(1)  # d = min(0.5, 1 - 1/1) = 0: the weights after the first step, the initial ones left out
    assert torch.allclose(average.shadow["weight"], start + 1.0)
    with torch.no_grad():
        layer.weight.add_(1.0)
    average.update(100)  # min(0.5, 1 - 1/100) = 0.5: halfway to the new weights
    assert torch.allclose(average.shadow["weight"], start + 1.5)
    own = layer.weight.detach().clone()
    with average.applied():
        assert torch.allclose(layer.weight, start + 1.5)
    assert torch.equal(layer.weight, own)


@pytest.mark.slow
def test_a_run_resumes_with_more_epochs_but_not_with_other_settings(tmp_path, monkeypatch):
    path = write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", checkpoint_every=2, patience=9)
    train_interrupted(load_config(path), monkeypatch, at_call=3)
    saved = (tmp_path / "run" / "config.json").read_text()
    other = load_config(path)
    other["training"]["lr"] = 5e-3
    other["encoder"]["hidden"] = 32  # a checkpoint of another shape would not even load
    with pytest.raises(OptionError, match=r"\[encoder\] hidden: 16 → 32; \[training\] lr: 0\.002 → 0\.005\)"):
        Trainer(other).run()
    assert (tmp_path / "run" / "config.json").read_text() == saved  # nothing in the folder was touched
    longer = load_config(path)
    longer["training"]["epochs"] = 3
    trainer = Trainer(longer)
    assert trainer.run()["step"] == trainer.total_steps


def test_resume_check_lists_changed_settings_but_not_those_a_later_version_added():
    saved = {"model": {"k": 5}, "training": {"lr": 1e-3, "epochs": 10}, "inference": {"k": 2}}
    now = {"model": {"k": 5, "new_setting": 1}, "training": {"lr": 1e-3, "epochs": 30}, "inference": {"k": 5}}
    assert changed_settings(saved, now) == []
    assert changed_settings(saved, {**now, "model": {}}) == ["[model] k: 5 → None"]


@pytest.mark.slow
def test_saved_transformer_model_reloads_with_same_predictions(tmp_path, tiny_transformer_dir):
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "transformer", tiny_transformer_dir, epochs=1))
    trainer = Trainer(cfg)
    trainer.run()
    model = trainer.model.eval()
    save_model(model, tmp_path / "saved")
    again = load_model(tmp_path / "saved")
    sentences = list(read_conllu(DEV))
    a = [(s.heads, s.deprels) for s in parse_stream(model, sentences)]
    b = [(s.heads, s.deprels) for s in parse_stream(again, sentences)]
    assert a == b
    assert (tmp_path / "saved" / "encoder" / "tokenizer.json").exists()


# ----------------------------------------------------------------------------------------- span-span parser
@pytest.mark.slow
def test_span_parser_trains_saves_and_reloads_with_same_trees(tmp_path):
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=2))
    trainer = Trainer(cfg)
    batch = trainer._batch(list(range(8)))
    torch.manual_seed(0)
    first = trainer.model.loss(batch).item()
    state = trainer.run()
    assert [h["epoch"] for h in state["history"]] == [1, 2]
    assert load_model(tmp_path / "run" / "model").name == "span"
    save_model(trainer.model, tmp_path / "saved")
    again = load_model(tmp_path / "saved")
    assert again.name == "span" and again.inference.k == 2
    sentences = list(read_conllu(DEV))
    a = [(s.heads, s.deprels) for s in parse_stream(trainer.model, sentences)]
    b = [(s.heads, s.deprels) for s in parse_stream(again, sentences)]
    assert a == b and len(a) == len(sentences)
    torch.manual_seed(0)
    assert trainer.model.train().loss(batch).item() < first


@pytest.mark.slow
def test_span_parser_with_the_faithful_inline_linker_trains_and_reloads(tmp_path, tiny_transformer_dir):
    model = (
        'type = "span"\nspan_mlp = 16\nquery_rate = 0.5\n'
        f'linker = {{ format = "inline", model = "{tiny_transformer_dir}", pretrained = false, max_len = 64 }}\n'
    )
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=model, epochs=1))
    cfg["data"]["max_train_sentences"] = 12
    trainer = Trainer(cfg)
    trainer.run()
    save_model(trainer.model, tmp_path / "saved")
    assert (tmp_path / "saved" / "linker" / "tokenizer.json").exists()
    again = load_model(tmp_path / "saved")
    sentences = list(read_conllu(DEV))
    a = [(s.heads, s.deprels) for s in parse_stream(trainer.model.eval(), sentences)]
    b = [(s.heads, s.deprels) for s in parse_stream(again, sentences)]
    assert a == b


def test_model_keys_must_fit_the_model_type(tmp_path):
    from spandep.errors import InputFormatError

    with pytest.raises(InputFormatError, match="do not apply"):
        load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model='type = "span"\narc_mlp = 3\n'))


def test_a_config_can_take_another_as_its_base(tmp_path):
    """`base` merges table by table (inline tables too) and is read relative to the config's own folder."""
    (tmp_path / "recipes").mkdir()
    write_config(tmp_path / "recipes" / "base.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=3)
    child = tmp_path / "child.toml"
    child.write_text('base = "recipes/base.toml"\n[model]\nlinker = { mutual_weight = 0.0 }\n[training]\noutput = "elsewhere"\n')
    parent, cfg = load_config(tmp_path / "recipes" / "base.toml"), load_config(child)
    assert cfg["model"]["linker"] == {**parent["model"]["linker"], "mutual_weight": 0.0}
    assert cfg["training"]["output"].endswith("elsewhere") and cfg["training"]["epochs"] == 3
    assert cfg["data"] == parent["data"] and cfg["encoder"] == parent["encoder"]


def test_a_config_can_take_several_bases_in_order(tmp_path):
    """`base = [...]`: each base over the ones before it, the config over them all."""
    write_config(tmp_path / "a.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=3)
    (tmp_path / "b.toml").write_text('[training]\nepochs = 5\nlr = 0.5\n')
    (tmp_path / "c.toml").write_text('base = ["a.toml", "b.toml"]\n[training]\nlr = 0.25\n')
    cfg = load_config(tmp_path / "c.toml")
    assert (cfg["training"]["epochs"], cfg["training"]["lr"], cfg["model"]["type"]) == (5, 0.25, "span")


def test_a_config_leaves_out_a_head_of_its_base(tmp_path):
    """`NAME = false` under [heads] drops a head that a base trains (a treebank without XPOS)."""
    write_config(tmp_path / "a.toml", tmp_path / "run", "bilstm", model=TINY_SPAN + "\n[heads.upos]\n\n[heads.xpos]\n")
    (tmp_path / "c.toml").write_text('base = "a.toml"\n[heads]\nxpos = false\n')
    assert set(load_config(tmp_path / "a.toml")["heads"]) == {"upos", "xpos"}
    assert set(load_config(tmp_path / "c.toml")["heads"]) == {"upos"}


@pytest.mark.parametrize(("text", "message"), [
    ('base = "missing.toml"\n', "config file not found \\(the base of"),
    ('base = "c.toml"\n', "forms a cycle"),
    ('base = "d.toml"\n', "forms a cycle"),  # d.toml's base is c.toml
    ('base = ["missing.toml", "d.toml"]\n', "config file not found"),
    ("base = 3\n", "base must be a path"),
    ("base = []\n", "base must be a path"),
])
def test_a_bad_base_is_a_clear_error(tmp_path, text, message):
    from spandep.errors import InputFormatError

    (tmp_path / "c.toml").write_text(text)
    (tmp_path / "d.toml").write_text('base = "c.toml"\n')
    with pytest.raises(InputFormatError, match=message):
        load_config(tmp_path / "c.toml")


@pytest.mark.slow
def test_a_second_training_of_the_same_run_is_a_clear_error(tmp_path):
    import fcntl

    from spandep.errors import OutputError

    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", epochs=1))
    (tmp_path / "run").mkdir()
    with open(tmp_path / "run" / "train.lock", "a") as held:  # as another process training this run would
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(OutputError, match="another spandep train is writing"):
            Trainer(cfg).run()
    assert not (tmp_path / "run" / "checkpoint").exists()
    Trainer(cfg).run()  # the lock went with its holder
    assert (tmp_path / "run" / "model" / "config.json").is_file()


def test_a_full_disk_while_checkpointing_is_a_clear_error_and_leaves_the_last_checkpoint_usable(tmp_path, monkeypatch):
    import errno

    from spandep.errors import OutputError
    from spandep.training import checkpoint

    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    ckpt = tmp_path / "checkpoint"
    checkpoint.save_checkpoint(ckpt, model, opt, {"step": 1})
    before = sorted(p.name for p in ckpt.iterdir())

    def full_disk(tensors, path):
        with open(path, "wb") as fh:
            fh.write(b"partial")  # the disk fills up midway
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint, "save_file", full_disk)
    with pytest.raises(OutputError, match="No space left on device.*free space"):
        checkpoint.save_checkpoint(ckpt, model, opt, {"step": 2})
    assert sorted(p.name for p in ckpt.iterdir()) == before  # no partial or temporary file left
    monkeypatch.undo()
    fresh = torch.nn.Linear(3, 2)
    info = checkpoint.load_checkpoint(ckpt, fresh, torch.optim.AdamW(fresh.parameters()))
    assert info is not None and info["step"] == 1 and torch.equal(fresh.weight, model.weight)
