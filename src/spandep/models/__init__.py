"""Parser types and the one way to build a model.

``PARSERS`` is the registry of parser types (``Parser`` subclasses, ``models/base.py``): a new type is one file
(or one package, as ``span/``) plus one line here. :func:`build_model` is the only constructor: training calls it
with a config made from the training data (:func:`config_from_data`), loading with a saved model's config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from spandep.data.sentence import Sentence
from spandep.data.vocab import kept_first
from spandep.encoders import ENCODERS
from spandep.models.base import Parse, Parser
from spandep.models.heads import HEADS
from spandep.models.treebanks import LABELS, Treebanks
from spandep.registry import Registry

PARSERS: Registry[type[Parser]] = Registry("parser type")
PARSERS.add("biaffine", "spandep.models.biaffine:BiaffineParser")
PARSERS.add("span", "spandep.models.span.parser:SpanParser")

ENCODER_ASSETS = "encoder"  # an encoder's own files (tokenizer, architecture) in a model folder

__all__ = ["ENCODER_ASSETS", "PARSERS", "Parse", "Parser", "build_model", "config_from_data"]


def config_from_data(
    settings: dict[str, Any], train: Sequence[Sentence], treebanks: Mapping[str, Sequence[Sentence]] | None = None,
    first: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A model config (``model`` and ``encoder`` tables, as a saved model has them) from a training config's
    ``[encoder]``, ``[model]``, ``[heads.NAME]`` and ``[inference]`` tables (defaults filled) and the training data;
    ``treebanks``: for a model of several treebanks, each one's training sentences (``train`` is all of them) and
    ``[model] treebank_dim`` the width of their embedding (``models/treebanks.py``); ``first``: a trained model's
    ``model`` table, whose relation labels and head classes keep their ids where the data has them (a run that
    starts from that model, ``[training] init``: ``data.vocab.kept_first``)."""
    encoder = dict(settings["encoder"])
    model = dict(settings["model"])
    encoder_type, model_type = encoder.pop("type"), model.pop("type")
    treebank_dim = model.pop("treebank_dim", 0)
    model_config = PARSERS.get(model_type).config_from_data(model, train)
    first = first or {}
    model_config["labels"] = kept_first(model_config["labels"], first.get("labels", ()))
    given = first.get("heads", {})
    model_config["heads"] = {
        name: HEADS.get(name).config_from_data(head, train, given.get(name, {}).get("tags", ()))
        for name, head in settings["heads"].items()
    }
    model_config["inference"] = dict(settings["inference"])
    if treebanks is not None:
        vocabularies = {LABELS: model_config["labels"]}
        seen: dict[str, Callable[[Sequence[Sentence]], set[str]]] = {LABELS: lambda part: {r for s in part for r in s.deprels}}
        for name, head in model_config["heads"].items():
            vocabularies[name], seen[name] = HEADS.get(name).class_names(head), HEADS.get(name).classes
        model_config["treebanks"] = Treebanks.config_from_data(treebank_dim, treebanks, vocabularies, seen)
        model_config["heads"] = {name: HEADS.get(name).treebank_config(head, treebanks) for name, head in model_config["heads"].items()}
    return {
        "model": {"model_type": model_type, **model_config},
        "encoder": {"type": encoder_type, **ENCODERS.get(encoder_type).config_from_data(encoder, train)},
    }


def build_model(config: dict[str, Any], folder: Path | None = None) -> Parser:
    """The model a config describes (``model`` and ``encoder`` tables), with fresh weights: pretrained ones from the
    base packages, the rest random until a state dict is loaded. ``folder``: a saved model's folder whose own files
    (an encoder's tokenizer and architecture) are used instead of the base packages; ``None`` to use those."""
    encoder_config = config["encoder"]
    assets = folder / ENCODER_ASSETS if folder is not None and (folder / ENCODER_ASSETS).is_dir() else None
    encoder = ENCODERS.get(encoder_config["type"]).from_config(encoder_config, assets)
    return PARSERS.get(config["model"]["model_type"]).from_config(encoder, config["model"], folder)
