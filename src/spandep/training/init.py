"""A training run that starts from a trained model's weights (``[training] init = "MODEL"``, ``spandep train --init``).

Why: to fine-tune a shipped model further (issue 45: its encoder's adapters trained again with new morphology
heads, its trees kept as a starting point) instead of training from random weights, as spaCy sources a trained
component or Stanza fine-tunes a saved model. The run builds its model from its own config as any run does (so the
config says what the model is: its heads may differ from the source's), then copies in every weight of the source
model that has the same name and shape:

- the encoder (its adapter too: the source is loaded unmerged) and the parser must be the source's exactly: a
  tensor missing or of another shape there, or another relation label set (the training data's), is an error;
- the run numbers its relation labels and each head's classes as the source does where its data has them
  (:func:`source_classes`; a training set rebuilt since, as the multilingual pool, orders them otherwise by
  frequency); the relation labels must then be the source's exactly;
- an output head is copied whole when the source has it with the same settings (classes, characters, sizes:
  :func:`same_head`) and every tensor alike; when only its classes differ (a class gained or lost with the data) and
  its class rows are its only weights that depend on them (``OutputHead.class_rows``), every other weight is copied
  and each class the source knows keeps its row (a new one starts as their average); otherwise it is trained from
  fresh weights (a head rebuilt with characters or a layer): the run's log names both kinds;
- a model of several treebanks starts a run over the same treebanks (names and embedding width; the classes each
  may give are the run's own, from its data), so a pool model can be trained further over a rebuilt pool;
- the source's calibration and inference settings are not copied (a run tunes and calibrates its own model).

A run that resumes from its checkpoint reads only the source's config (its class order); the checkpoint holds its
weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from spandep.errors import OptionError
from spandep.models import Parser
from spandep.models.heads import STATE_PREFIX, OutputHead
from spandep.storage.model_io import load_model, read_model_config

NOT_WEIGHTS = ("weight", "dropout", "fallback", "dictionary", "treebank_dictionaries")  # head settings that leave the meaning of its weights as it is, besides its tables stored apart
CLASSES = ("tags", "counts")  # head settings that change with its classes only


def source_classes(folder: str | Path) -> dict[str, Any]:
    """The trained model's ``model`` table, whose label and class order a run started from it keeps
    (``models.config_from_data``'s ``first``)."""
    return read_model_config(folder)["model"]


def _head_of(key: str) -> str | None:
    """The output head a state-dict key belongs to (``heads.feats.out.bias`` → ``feats``), ``None`` for the rest."""
    return key.removeprefix(STATE_PREFIX).split(".", 1)[0] if key.startswith(STATE_PREFIX) else None


def _treebanks(model: Parser) -> tuple[list[str], int] | None:
    """A model's treebanks as its weights see them: their names (the embedding's rows) and the embedding's width;
    ``None``: one treebank. The classes each may give are the run's own (masks made from its data, not weights), and
    its saved inference settings are not weights either."""
    return None if model.treebanks is None else (model.treebanks.names, model.treebanks.dim)


def same_head(mine: dict[str, object], theirs: dict[str, object], aside: tuple[str, ...] = ()) -> bool:
    """Whether two heads' saved configs give their weights the same meaning: the same classes, characters, writing
    systems and sizes (the loss weight and dropout aside, and the settings ``aside``: a head's tables stored apart,
    such as a lemma head's lexicons, which its training data builds anew)."""
    skip = NOT_WEIGHTS + aside
    return {k: v for k, v in mine.items() if k not in skip} == {k: v for k, v in theirs.items() if k not in skip}


def _head_weights(mine: OutputHead, theirs: OutputHead | None) -> tuple[dict[str, torch.Tensor], str | None]:
    """The weights of head ``mine`` taken from the source's head ``theirs`` (keys of the head's own state dict) and
    what the log says of it: ``None`` (copied whole), ``"fresh"`` (nothing taken) or ``"classes"`` (its class rows
    mapped by class, every other weight copied). A class the source lacks starts from the average of its rows, as
    new word embeddings often do: a fresh random row would score near 0, far above every trained class (whose
    logits a softmax over thousands of classes drives far below 0), and take every word's probability at first."""
    own = mine.state_dict()
    given = theirs.state_dict() if theirs is not None else {}
    if theirs is None or any(key not in given for key in own):
        return {}, "fresh"
    rows, settings, source_settings = set(mine.class_rows), mine.export_config(), theirs.export_config()
    tables = type(mine).stored_apart
    if same_head(settings, source_settings, tables) and all(given[key].shape == tensor.shape for key, tensor in own.items()):
        return {key: given[key] for key in own}, None
    if not rows or not same_head(settings, source_settings, CLASSES + tables):
        return {}, "fresh"
    if any(given[key].shape != tensor.shape for key, tensor in own.items() if key not in rows):
        return {}, "fresh"
    index = {c: i for i, c in enumerate(type(theirs).class_names(source_settings))}
    pairs = [(i, index[c]) for i, c in enumerate(type(mine).class_names(settings)) if c in index]
    at = torch.tensor([i for i, _ in pairs], dtype=torch.long)  # (shared,)
    source_at = torch.tensor([j for _, j in pairs], dtype=torch.long)  # (shared,)
    taken = {key: given[key] for key in own if key not in rows}
    for key in rows:
        tensor = given[key].mean(0, keepdim=True).expand_as(own[key]).clone()  # (classes, ...) a new class starts as the average known one
        tensor[at] = given[key][source_at]  # (shared, ...)
        taken[key] = tensor
    return taken, "classes"


def initialise(model: Parser, folder: str | Path, encoder_config: dict[str, object]) -> dict[str, list[str]]:
    """Copy the weights of the trained model in ``folder`` into ``model`` (freshly built from a run's config, whose
    ``[encoder]`` table is ``encoder_config``), as the module docstring says; the names of the heads left fresh
    (``"fresh"``) and of those whose class rows were mapped (``"classes"``)."""
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
    for key, tensor in own.items():
        if _head_of(key) is None and (key not in given or given[key].shape != tensor.shape):
            shape = tuple(given[key].shape) if key in given else "none"
            raise OptionError(f"{where}: its weight {key} ({shape}) does not fit this config's ({tuple(tensor.shape)}); start from a model of the same encoder and parser settings")
    copied = {key: given[key] for key in own if _head_of(key) is None}
    notes: dict[str, list[str]] = {"fresh": [], "classes": []}
    with torch.no_grad():
        for name, head in model.heads.items():
            weights, note = _head_weights(head, source.heads[name] if name in source.heads else None)
            copied |= {f"{STATE_PREFIX}{name}.{key}": tensor for key, tensor in weights.items()}
            if note:
                notes[note].append(name)
        model.load_state_dict(copied, strict=False)
    return notes
