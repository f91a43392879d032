"""A training run that starts from a trained model's weights (``[training] init = "MODEL"``, ``spandep train --init``).

Why: to fine-tune a shipped model further (issue 45: its encoder's adapters trained again with new morphology
heads, its trees kept as a starting point) instead of training from random weights, as spaCy sources a trained
component or Stanza fine-tunes a saved model. The run builds its model from its own config as any run does (so the
config says what the model is: its heads may differ from the source's), then copies in every weight of the source
model that has the same name and shape:

- the encoder (its adapter too: the source is loaded unmerged) and the parser must be the source's exactly: a
  tensor missing or of another shape there, or another relation label set (the training data's), is an error;
- an output head is copied whole when the source has it with the same settings (classes, characters, sizes:
  :func:`same_head`) and every tensor alike, and trained from fresh weights otherwise (a head rebuilt with characters
  or a layer, another tag set): the run's log names them;
- a model of several treebanks starts a run over the same treebanks (names and embedding width; the classes each
  may give are the run's own, from its data), so a pool model can be trained further over a rebuilt pool;
- the source's calibration and inference settings are not copied (a run tunes and calibrates its own model).

A run that resumes from its checkpoint does not read the source at all: the checkpoint holds its weights.
"""

from __future__ import annotations

from pathlib import Path

import torch

from spandep.errors import OptionError
from spandep.models import Parser
from spandep.models.heads import STATE_PREFIX
from spandep.storage.model_io import load_model

NOT_WEIGHTS = ("weight", "dropout", "lexicon", "feats_lexicon")  # head settings that leave the meaning of its weights as it is


def _head_of(key: str) -> str | None:
    """The output head a state-dict key belongs to (``heads.feats.out.bias`` → ``feats``), ``None`` for the rest."""
    return key.removeprefix(STATE_PREFIX).split(".", 1)[0] if key.startswith(STATE_PREFIX) else None


def _treebanks(model: Parser) -> tuple[list[str], int] | None:
    """A model's treebanks as its weights see them: their names (the embedding's rows) and the embedding's width;
    ``None``: one treebank. The classes each may give are the run's own (masks made from its data, not weights), and
    its saved inference settings are not weights either."""
    return None if model.treebanks is None else (model.treebanks.names, model.treebanks.dim)


def same_head(mine: dict[str, object], theirs: dict[str, object]) -> bool:
    """Whether two heads' saved configs give their weights the same meaning: the same classes, characters, writing
    systems and sizes (the loss weight, dropout and a lemma head's lexicons aside)."""
    return {k: v for k, v in mine.items() if k not in NOT_WEIGHTS} == {k: v for k, v in theirs.items() if k not in NOT_WEIGHTS}


def initialise(model: Parser, folder: str | Path, encoder_config: dict[str, object]) -> list[str]:
    """Copy the weights of the trained model in ``folder`` into ``model`` (freshly built from a run's config, whose
    ``[encoder]`` table is ``encoder_config``), as the module docstring says; the names of the heads left fresh."""
    source = load_model(folder, merge_adapter=False)
    where = f"[training] init = {str(folder)!r}"
    theirs = source.config["encoder"]
    for key in ("type", "model"):
        if theirs.get(key) != encoder_config.get(key):
            raise OptionError(f"{where}: its encoder's {key} is {theirs.get(key)!r}, this config's {encoder_config.get(key)!r}; start from a model of the same encoder")
    if source.name != model.name:
        raise OptionError(f"{where}: it is a {source.name} parser, this config trains a {model.name} one")
    if source.labels != model.labels:
        raise OptionError(f"{where}: its relation labels are not this training data's ({len(source.labels)} against {len(model.labels)}); start from a model trained on the same treebank")
    if _treebanks(source) != _treebanks(model):
        raise OptionError(f"{where}: it was trained on other treebanks than this config names")
    given, own = source.state_dict(), model.state_dict()
    fresh = {
        name for name, head in model.heads.items()
        if name not in source.heads or not same_head(head.export_config(), source.heads[name].export_config())
    }
    for key, tensor in own.items():
        head = _head_of(key)
        if head is not None:
            if key not in given or given[key].shape != tensor.shape:
                fresh.add(head)
        elif key not in given or given[key].shape != tensor.shape:
            shape = tuple(given[key].shape) if key in given else "none"
            raise OptionError(f"{where}: its weight {key} ({shape}) does not fit this config's ({tuple(tensor.shape)}); start from a model of the same encoder and parser settings")
    copied = {key: given[key] for key in own if _head_of(key) not in fresh}
    with torch.no_grad():
        model.load_state_dict(copied, strict=False)
    return sorted(fresh)
