"""spandep train-heads: the output heads fine-tuned over a frozen model (training/heads.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.errors import OptionError
from spandep.options import InferenceOptions
from spandep.storage.model_io import load_model, save_model
from spandep.training.heads import HeadsSettings, HeadsTrainer
from spandep.training.trainer import read_treebank
from tests.conftest import DEV, TINY_SPAN, TRAIN, write_config

HEADS = (  # every head, FEATS conditioned on UPOS (the columns path), matrices big enough for int8
    "\n[heads.upos]\ncasing = 4\n\n[heads.xpos]\n\n[heads.feats]\nupos_embed = 4\nhidden = 16\n"
    "\n[heads.lemma]\ncasing = 4\nsuffix = 8\nhidden = 16\n"
)

runner = CliRunner()


@pytest.fixture(scope="module")
def compact_span(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny span model with every head (one epoch), stored compact with every matrix in int8 as the shipped models
    are."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("heads_model")
    Trainer(load_config(write_config(root / "span.toml", root / "run", "bilstm", model=TINY_SPAN + HEADS, epochs=1))).run()
    save_model(load_model(root / "run" / "model", merge_adapter=False), root / "span", compact=True, int8="all")
    return root / "span"


def run(model: Path, out: Path, **settings: object) -> dict:
    return HeadsTrainer(HeadsSettings(str(model), str(TRAIN), str(DEV), str(out), **{"epochs": 2, "lr": 3e-3, "batch_words": 300, **settings}), model).run()  # type: ignore[arg-type]


def test_trees_untouched_and_heads_never_worse(compact_span: Path, tmp_path: Path) -> None:
    record = run(compact_span, tmp_path / "run")
    new = tmp_path / "run" / "model"
    before, after = load_file(str(compact_span / "model.safetensors")), load_file(str(new / "model.safetensors"))
    assert before.keys() == after.keys()
    assert all(before[k].equal(after[k]) for k in before if not k.startswith("heads."))
    assert any(not before[k].equal(after[k]) for k in before if k.startswith("heads.")) == any(record["chosen_epochs"].values())
    dev = read_treebank(str(DEV), "conllu")
    old_parses = load_model(compact_span).parse(dev, InferenceOptions())
    new_parses = load_model(new).parse(dev, InferenceOptions())
    assert [(p.heads, p.labels) for p in old_parses] == [(p.heads, p.labels) for p in new_parses]
    assert set(record["chosen_epochs"]) == {"upos", "xpos", "feats", "lemma"} & set(record["dev_after"])
    assert all(record["dev_after"][h] >= record["dev_before"][h] for h in record["dev_after"])
    saved = json.loads((new / "config.json").read_text(encoding="utf-8"))
    assert saved["training"]["heads_finetune"]["chosen_epochs"] == record["chosen_epochs"]
    assert saved["compact"] == json.loads((compact_span / "config.json").read_text(encoding="utf-8"))["compact"]


def test_resumes_as_one_run(compact_span: Path, tmp_path: Path) -> None:
    whole = run(compact_span, tmp_path / "whole", epochs=3)
    run(compact_span, tmp_path / "parts", epochs=1)
    resumed = run(compact_span, tmp_path / "parts", epochs=3)
    assert [h["epoch"] for h in resumed["history"]] == [0, 1, 2, 3]
    assert resumed["history"] == whole["history"]
    assert resumed["chosen_epochs"] == whole["chosen_epochs"]
    with pytest.raises(OptionError, match="lr"):
        run(compact_span, tmp_path / "parts", epochs=3, lr=1e-2)


def test_one_line_errors(compact_span: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tword\n\n", encoding="utf-8")
    cases = [
        (["train-heads", str(tmp_path / "empty"), str(TRAIN), str(DEV), "-o", str(tmp_path / "o1")], 3, "no config.json"),
        (["train-heads", str(compact_span), str(tmp_path / "nothing.conllu"), str(DEV), "-o", str(tmp_path / "o2")], 2, "not found"),
        (["train-heads", str(compact_span), str(bad), str(DEV), "-o", str(tmp_path / "o3")], 2, "bad.conllu"),
        (["train-heads", str(compact_span), str(TRAIN), str(DEV), "-o", str(tmp_path / "o4"), "--lr", "0"], 2, "--lr"),
        (["train-heads", str(compact_span), str(TRAIN), str(DEV), "-o", str(tmp_path / "o5"), "--set", "feats.chars"], 2, "HEAD.KEY=VALUE"),
        (["train-heads", str(compact_span), str(TRAIN), str(DEV), "-o", str(tmp_path / "o6"), "--set", "feats.chars=1e9"], 2, "--set feats.chars"),
        (["train-heads", str(compact_span), str(TRAIN), str(DEV), "-o", str(tmp_path / "o7"), "--set", "feats.colour=3"], 2, "takes"),
        (["train-heads", str(compact_span), str(TRAIN), str(DEV), "-o", str(tmp_path / "o8"), "--set", "deprel.chars=3"], 2, "no deprel head"),
    ]
    for args, code, words in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == code, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("spandep: error:") and words in lines[0], result.stderr


def test_rebuilt_heads_read_characters_and_context(compact_span: Path, tmp_path: Path) -> None:
    """``--set``: FEATS and lemma built anew with a character BiLSTM and a sentence BiLSTM; a rebuilt head is kept
    only where it beat the input's on dev, the saved config says which, the saved folder loads and parses as it was
    scored, and the trees stay the input's."""
    changes = {"feats": {"chars": 6, "context": 40}, "lemma": {"chars": 6, "context": 40}}
    record = run(compact_span, tmp_path / "run", epochs=3, lr=1e-2, rebuild=changes)
    new = tmp_path / "run" / "model"
    config = json.loads((new / "config.json").read_text(encoding="utf-8"))
    heads, int8 = config["model"]["heads"], set(config["compact"]["int8"])
    stored = load_file(str(new / "model.safetensors"))
    model = load_model(new)
    assert any(record["chosen_epochs"][name] > 0 for name in changes)  # the seeded run keeps a rebuilt head
    again = run(new, tmp_path / "again", epochs=1)  # a second run over the first's output keeps the first's record
    finetune = json.loads((tmp_path / "again" / "model" / "config.json").read_text(encoding="utf-8"))["training"]["heads_finetune"]
    assert finetune["chosen_epochs"] == again["chosen_epochs"] and finetune["input"]["chosen_epochs"] == record["chosen_epochs"]
    for name in changes:
        rebuilt = record["chosen_epochs"][name] > 0
        assert (heads[name].get("chars"), heads[name].get("context")) == ((6, 40) if rebuilt else (None, None))
        assert (model.heads[name].chars is not None) == rebuilt and (model.heads[name].context is not None) == rebuilt
        if rebuilt:  # stored as the input stores its heads: every matrix of 4,096 values or more in int8, listed
            assert len(heads[name]["char_vocab"]) > 3
            big = [k for k, v in stored.items() if k.startswith(f"heads.{name}.context.") and v.dim() == 2]
            assert big and all(stored[k].dtype == torch.int8 and k in int8 for k in big)
    dev = read_treebank(str(DEV), "conllu")
    old = load_model(compact_span).parse(dev, InferenceOptions())
    parses = model.parse(dev, InferenceOptions())
    assert [(p.heads, p.labels) for p in old] == [(p.heads, p.labels) for p in parses]
    assert column_accuracy(model, dev, parses, record["dev_after"]) == record["dev_after"]


def column_accuracy(model: object, dev: list, parses: list, names: object) -> dict[str, float]:
    """The share of ``dev`` words (in %, 2 decimals) whose column each head ``names`` fills in ``parses`` as the gold
    file has it: what a train-heads record's dev scores say."""
    right = {n: 0 for n in names}  # type: ignore[attr-defined]
    for sentence, parse in zip(dev, parses):
        for name in right:
            gold = [getattr(w, model.heads[name].column) for w in sentence.words]  # type: ignore[attr-defined]
            right[name] += sum(p == g for p, g in zip(parse.columns[name], gold))
    words = sum(len(s) for s in dev)
    return {n: round(100.0 * r / words, 2) for n, r in right.items()}


def test_int8_stores_every_big_head_matrix_and_scores_it_so(compact_span: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--int8``: a compact folder whose heads are float16 comes out with every head matrix of ``MIN_ELEMENTS``
    values or more in int8 (listed in ``compact.int8``), the input's own heads too (epoch 0 is scored as so stored),
    and the saved folder parses as it was scored."""
    import spandep.training.heads as heads_module

    half = tmp_path / "half"
    save_model(load_model(compact_span), half, compact=True)  # heads in float16
    assert not any(k.startswith("heads.") for k in json.loads((half / "config.json").read_text(encoding="utf-8"))["compact"].get("int8", []))
    monkeypatch.setattr(heads_module, "MIN_ELEMENTS", 64)  # the tiny heads' matrices count as big
    record = run(half, tmp_path / "run", epochs=1, int8=True)
    new = tmp_path / "run" / "model"
    stored, listed = load_file(str(new / "model.safetensors")), set(json.loads((new / "config.json").read_text(encoding="utf-8"))["compact"]["int8"])
    big = [k for k, v in stored.items() if k.startswith("heads.") and v.dim() >= 2 and v.numel() >= 64]
    assert big and all(stored[k].dtype == torch.int8 and k in listed for k in big)
    model = load_model(new)
    dev = read_treebank(str(DEV), "conllu")
    parses = model.parse(dev, InferenceOptions())
    words = sum(len(s) for s in dev)
    for name in record["dev_after"]:
        right = sum(p == getattr(w, model.heads[name].column) for s, q in zip(dev, parses) for w, p in zip(s.words, q.columns[name]))
        assert round(100.0 * right / words, 2) == record["dev_after"][name]
    with pytest.raises(OptionError, match="--int8"):
        full = tmp_path / "full"
        save_model(load_model(compact_span), full, compact=False)
        run(full, tmp_path / "o", int8=True)


def test_rebuilt_head_learns_the_classes_of_another_training_file(compact_span: Path, tmp_path: Path) -> None:
    """``--set`` over a training file other than the model's (more data, so other FEATS bundles in another order):
    the gold ids the heads train on are in the rebuilt head's classes, not the input head's (a rebuilt FEATS head
    once trained on the input's ids and never learnt)."""
    more = tmp_path / "more.conllu"
    more.write_text(DEV.read_text(encoding="utf-8") + "\n" + TRAIN.read_text(encoding="utf-8"), encoding="utf-8")
    settings = HeadsSettings(str(compact_span), str(more), str(DEV), str(tmp_path / "run"), epochs=1, batch_words=300, rebuild={"feats": {"hidden": 16}})
    trainer = HeadsTrainer(settings, compact_span)
    before = list(trainer.model.heads["feats"].tags)
    trainer._set_heads(trainer.rebuilt)
    head = trainer.model.heads["feats"]
    assert list(head.tags) != before  # the case this test is about: the rebuilt head's classes differ
    for sentence, gold in zip(trainer.train, trainer.gold):
        assert [head.value(head.tags[i], "") for i in gold["feats"][1:]] == [w.feats for w in sentence.words]
