"""A run that starts from a trained model (``[training] init``, training/init.py): what it copies, what it leaves
fresh, and the clear errors when the source does not fit."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import TINY_BIAFFINE, TINY_SPAN, TRAIN, write_config
from spandep.cli.main import app
from spandep.errors import OptionError
from spandep.storage.model_io import load_model
from spandep.training.config import load_config
from spandep.training.init import same_head
from spandep.training.trainer import Trainer

LORA = 'adapter = { type = "lora", r = 4, alpha = 8, targets = ["query", "key", "value"] }\n'
HEADS = "\n[heads.upos]\n\n[heads.feats]\nhidden = 16\n"


def config(root, name, model_dir, model=TINY_SPAN + HEADS, **training):
    """The tiny span parser with UPOS and FEATS heads over the tiny transformer with a LoRA adapter."""
    path = write_config(root / f"{name}.toml", root / name, "transformer", model_dir, pretrained=True, model=model, encoder_extra=LORA, **training)
    return load_config(path)


@pytest.fixture(scope="module")
def source(tmp_path_factory, tiny_transformer_dir):
    """One epoch of that parser: the model folder to start from."""
    root = tmp_path_factory.mktemp("init_source")
    Trainer(config(root, "source", tiny_transformer_dir, epochs=1, lr=1e-2)).run()
    return root / "source" / "model"


def test_a_run_from_a_model_starts_from_its_weights_and_rebuilds_a_changed_head(tmp_path, source, tiny_transformer_dir):
    given = load_model(source, merge_adapter=False).state_dict()
    cfg = config(tmp_path, "next", tiny_transformer_dir, model=TINY_SPAN + HEADS.replace("hidden = 16", "hidden = 8\nchars = 8"), epochs=1)
    cfg["training"]["init"] = str(source)
    fresh_cfg = {**cfg, "training": {**cfg["training"], "init": None, "output": str(tmp_path / "fresh")}}
    trainer, fresh = Trainer(cfg), Trainer(fresh_cfg)
    own, untouched = trainer.model.state_dict(), fresh.model.state_dict()
    adapter = [k for k in own if "lora_" in k]
    assert adapter and all(torch.equal(own[k], given[k]) for k in adapter)  # the adapter, unmerged, is the source's
    assert not all(torch.equal(own[k], untouched[k]) for k in adapter)  # (which a fresh run's is not)
    kept = [k for k in own if not k.startswith("heads.feats.")]
    assert all(torch.equal(own[k], given[k]) for k in kept)  # the parser and the UPOS head too
    rebuilt = [k for k in own if k.startswith("heads.feats.")]
    assert all(torch.equal(own[k], untouched[k]) for k in rebuilt)  # FEATS as a fresh run of the same seed builds it
    assert trainer.init_note == f"weights from {source}; heads trained from fresh weights: feats"
    trainer.run()
    log = (tmp_path / "next" / "train.log").read_text(encoding="utf-8")
    assert log.splitlines()[0] == trainer.init_note
    assert Trainer(cfg).init_note is None  # a run that resumes takes its weights from its checkpoint, not the source
    saved = load_model(tmp_path / "next" / "model").config["training"]["config"]["training"]["init"]
    assert Path(saved).resolve() == source.resolve()  # saved as the data paths are (relative, portable)


def test_a_model_that_does_not_fit_is_a_clear_error(tmp_path, source, tiny_transformer_dir):
    other_labels = config(tmp_path, "few", tiny_transformer_dir)
    other_labels["data"]["max_train_sentences"] = 2
    other_parser = config(tmp_path, "biaffine", tiny_transformer_dir, model=TINY_BIAFFINE + HEADS)
    wider = config(tmp_path, "wider", tiny_transformer_dir, model=TINY_SPAN.replace("span_mlp = 32", "span_mlp = 48") + HEADS)
    bilstm = load_config(write_config(tmp_path / "b.toml", tmp_path / "b", "bilstm", model=TINY_SPAN + HEADS))
    expected = [(other_labels, "relation labels are not this training data's"), (other_parser, "it is a span parser, this config trains a biaffine one"),
                (wider, "its weight proposal."), (bilstm, "its encoder's type is 'transformer', this config's 'bilstm'")]
    for cfg, message in expected:
        cfg["training"]["init"] = str(source)
        with pytest.raises(OptionError, match="init = ") as caught:
            Trainer(cfg)
        assert message in str(caught.value)


def test_train_init_on_the_command_line(tmp_path, tiny_transformer_dir):
    from typer.testing import CliRunner

    cfg = write_config(tmp_path / "c.toml", tmp_path / "run", "transformer", tiny_transformer_dir, pretrained=True, model=TINY_SPAN + HEADS, encoder_extra=LORA, epochs=1)
    result = CliRunner().invoke(app, ["train", str(cfg), "--init", str(tmp_path / "missing")])
    assert result.exit_code == 3 and "missing" in result.output and "Traceback" not in result.output  # as spandep parse --model


def test_a_head_is_copied_only_where_its_weights_mean_the_same():
    head = {"tags": ["NOUN", "VERB"], "hidden": 16, "chars": 8, "char_vocab": ["<pad>", "a", "b"], "weight": 1.0, "dropout": 0.33}
    assert same_head(head, {**head, "weight": 0.5, "dropout": 0.1})
    assert not same_head(head, {**head, "lexicon": {"a": "b"}}) and same_head(head, {**head, "lexicon": {"a": "b"}}, ("lexicon",))
    assert not same_head(head, {**head, "tags": ["VERB", "NOUN"]})  # same shapes, other classes
    assert not same_head(head, {**head, "char_vocab": ["<pad>", "b", "a"]})
    assert not same_head(head, {**head, "layer": 2})


def test_a_lemma_head_is_copied_whatever_lexicons_its_training_data_builds():
    """A lemma head's lexicons (its tables stored apart) come from the run's own data: a model trained before each
    treebank kept its own lexicons still gives its lemma head's weights to one that keeps them."""
    from spandep.models.heads.lemma import Lemmatizer
    from spandep.training.init import _head_weights

    torch.manual_seed(0)
    tags, own = ['["keep", 0, "", 0, ""]', '["keep", 0, "", 1, ""]'], {"a": {"lexicon": {"x": {"NOUN": "y"}}, "feats_lexicon": {}}}
    before = Lemmatizer(8, tags, lexicon={"x": {"NOUN": "x"}})
    after = Lemmatizer(8, tags, lexicon={"z": {"VERB": "z"}}, treebank_lexicons=own)
    weights, note = _head_weights(after, before)
    assert note is None and all(torch.equal(weights[k], v) for k, v in before.state_dict().items())
    language = Lemmatizer(8, tags, treebank_lexicons=own, fallback="language")  # what a pool run writes now
    weights, note = _head_weights(language, before)
    assert note is None and all(torch.equal(weights[k], v) for k, v in before.state_dict().items())
    looked_up = Lemmatizer(8, tags, treebank_lexicons=own, fallback="language", dictionary={"language": "en", "mode": "repair"},
                           treebank_dictionaries={"a": {"language": "en", "mode": "prefer"}})  # a shipped folder's lookups
    weights, note = _head_weights(language, looked_up)
    assert note is None and all(torch.equal(weights[k], v) for k, v in looked_up.state_dict().items())


def _rebuilt_train(path: Path) -> Path:
    """The training file rebuilt as a pool is: its first ten sentences twice (so its labels and tags rank otherwise
    by frequency) and UPOS PART renamed SYM (a class lost, one gained)."""
    blocks = TRAIN.read_text(encoding="utf-8").strip().split("\n\n")

    def renamed(block: str) -> str:
        lines = [line.split("\t") for line in block.split("\n")]
        return "\n".join("\t".join(c[:3] + ["SYM" if c[3] == "PART" else c[3]] + c[4:]) if len(c) == 10 else c[0] for c in lines)

    path.write_text("\n\n".join(renamed(b) for b in blocks + blocks[:10]) + "\n\n", encoding="utf-8")
    return path


def test_a_run_over_rebuilt_data_keeps_the_source_class_ids_and_rows(tmp_path, source, tiny_transformer_dir):
    given = load_model(source, merge_adapter=False)
    cfg = config(tmp_path, "rebuilt", tiny_transformer_dir, epochs=1)
    cfg["data"]["train"] = str(_rebuilt_train(tmp_path / "train.conllu"))
    cfg["training"]["init"] = str(source)
    fresh = Trainer({**cfg, "training": {**cfg["training"], "init": None, "output": str(tmp_path / "fresh")}})
    trainer = Trainer(cfg)
    assert fresh.model.labels != given.labels and sorted(fresh.model.labels) == sorted(given.labels)  # ranked otherwise
    assert trainer.model.labels == given.labels  # numbered as the source numbers them
    theirs, mine = given.heads["upos"].tags, trainer.model.heads["upos"].tags
    assert "SYM" in mine and "PART" not in mine and mine[:-1] == [t for t in theirs if t != "PART"]
    own, source_state = trainer.model.state_dict(), given.state_dict()
    for key in ("heads.upos.out.weight", "heads.upos.out.bias"):
        for i, tag in enumerate(mine):
            row = source_state[key][theirs.index(tag)] if tag in theirs else source_state[key].mean(0)
            assert torch.equal(own[key][i], row), (key, tag)  # a known class keeps its row, the new one is the average
    assert all(torch.equal(own[k], source_state[k]) for k in own if k.startswith("heads.upos.") and ".out." not in k)
    assert all(torch.equal(own[k], source_state[k]) for k in own if k.startswith("heads.feats."))  # its classes as the source's
    assert trainer.init_note == f"weights from {source}; heads with other classes, each known class's row kept: upos"
    trainer.run()
    assert Trainer(cfg).model.labels == given.labels  # a resumed run numbers them so too (its checkpoint's ids)


def test_a_head_whose_other_weights_depend_on_its_classes_is_rebuilt(tmp_path, tiny_transformer_dir):
    per_feature = HEADS.replace("hidden = 16", "hidden = 16\nper_feature = 0.5")
    root = tmp_path / "src"
    Trainer(config(tmp_path, "src", tiny_transformer_dir, model=TINY_SPAN + per_feature, epochs=1)).run()
    cfg = config(tmp_path, "next", tiny_transformer_dir, model=TINY_SPAN + per_feature, epochs=1)
    cfg["data"]["train"] = str(_rebuilt_train(tmp_path / "train.conllu"))
    cfg["training"]["init"] = str(root / "model")
    note = Trainer(cfg).init_note
    assert note is not None and note.endswith("each known class's row kept: upos; heads trained from fresh weights: feats")
