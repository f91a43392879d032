"""One treebank of a model of several, as a model of its own (``spandep export MODEL OUT --treebank T``).

Why: the multilingual pool model parses 84 treebanks from one folder of 60 MB; a user of one language, or a
treebank fine-tuned apart from the pool (``[data] train_treebanks``, issue 46's per-treebank step), needs only what a
parse as that treebank reads. A parse as treebank T already masks every relation label and output-head class T's
training data lacks (``models/treebanks.py``), so those rows of the weights are never read: the copy keeps T's
labels and classes only, in the same order, and the rows of the weights that score them, and so gives the same
trees, labels, tags and probabilities as the full model parsing as T.

- Relation labels: the parser's weights whose size along one dimension is the number of labels (the Biaffine label
  scorer, a span linker's label scorer) keep T's rows along it, found by building the copy and comparing shapes.
- Output heads: each head's classes restricted to T's, its class rows (``OutputHead.class_rows``) kept; a head T
  has no class of is left out (it filled no column for T), a head whose other weights depend on its classes (FEATS
  with per-feature classifiers) is refused.
- The treebank embedding keeps T's row; the model still names T (``treebanks.names == [T]``) and parses as it
  without being told. T's saved inference settings and calibration are kept.
- A lemma head's lexicons are T's own and those of T's language that serve a pair T's lacks (``fallback =
  "language"``), as the full model reads them; in a folder written before, whose lexicons of all treebanks serve
  that pair (``"all"``, megabytes of tables), T's own only: its lemmas may differ where that fallback spoke.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from spandep.errors import OptionError
from spandep.models import Parser, build_model
from spandep.models.heads import STATE_PREFIX
from spandep.models.heads.lemma import kin
from spandep.models.treebanks import LABELS

__all__ = ["one_treebank"]

EMBEDDING = "treebanks.embed.weight"


def one_treebank(model: Parser, treebank: str) -> Parser:
    """A copy of ``model`` (of several treebanks, loaded with its adapter unmerged) that parses ``treebank`` only."""
    if model.treebanks is None:
        raise OptionError("--treebank: this model was trained on one treebank; export it without --treebank")
    if treebank not in model.treebanks.names:
        raise OptionError(f"--treebank {treebank!r} is not one of this model's: {', '.join(model.treebanks.names)}")
    allowed = {part: ids[treebank] for part, ids in model.treebanks.allowed.items()}
    config = copy.deepcopy(model.config)
    config["model"] = _model_config(model, treebank, allowed)
    kept = build_model(config)
    state = _state(model, kept, treebank, allowed)
    kept.load_state_dict(state)  # every weight of the copy, cut from the model's
    kept.eval()
    kept.config = config
    return kept


def _model_config(model: Parser, treebank: str, allowed: dict[str, list[int]]) -> dict[str, Any]:
    """The saved ``model`` table of the copy: T's labels, classes, settings and calibration."""
    full = model.export_config()
    out = copy.deepcopy(full)
    out["labels"] = [full["labels"][i] for i in allowed[LABELS]]
    heads = {}
    for name, head in full["heads"].items():
        if allowed[name]:  # a head without a class of T filled no column for T: left out
            heads[name] = _head_config(model, name, head, treebank, allowed[name])
    out["heads"] = heads
    tb = full["treebanks"]
    out["treebanks"] = {
        "names": [treebank], "dim": tb["dim"], "sizes": {part: len(allowed[part]) for part in tb["sizes"] if part == LABELS or part in heads},
        "allowed": {part: {treebank: list(range(len(allowed[part])))} for part in tb["allowed"] if part == LABELS or part in heads},
        **({"inference": {treebank: tb["inference"][treebank]}} if treebank in tb.get("inference", {}) else {}),
    }
    calibration = out.get("calibration") or {}
    if "treebanks" in calibration:
        own = calibration["treebanks"].get(treebank)
        calibration.pop("treebanks")
        if own is not None:
            calibration["treebanks"] = {treebank: own}
    return out


def _head_config(model: Parser, name: str, head: dict[str, Any], treebank: str, ids: Sequence[int]) -> dict[str, Any]:
    """An output head's settings with T's classes only, and a lemma head's lexicons and dictionary T's own."""
    if not model.heads[name].class_rows:
        raise OptionError(f"--treebank: the {name} head's weights depend on its classes beyond their rows; it cannot be cut to one treebank")
    out = {k: v for k, v in head.items() if k not in ("treebank_lexicons", "treebank_dictionaries")}
    if treebank in (head.get("treebank_dictionaries") or {}):
        out["treebank_dictionaries"] = {treebank: head["treebank_dictionaries"][treebank]}
    out["tags"] = [head["tags"][i] for i in ids]
    tables = head.get("treebank_lexicons") or {}
    if head.get("fallback") == "language":  # T's own lexicons, then its language's, as the full model reads them
        out["treebank_lexicons"] = {k: tables[k] for k in (treebank, *kin(tables, treebank)) if k in tables}
    elif treebank in tables:  # a folder written before: T's own, the lexicons of all left out
        out |= {"lexicon": tables[treebank]["lexicon"], "feats_lexicon": tables[treebank]["feats_lexicon"]}
    return out


def _state(model: Parser, kept: Parser, treebank: str, allowed: dict[str, list[int]]) -> dict[str, torch.Tensor]:
    """``model``'s weights cut to the shapes of ``kept``: T's rows of each class- or label-sized dimension."""
    full, shapes = model.state_dict(), {k: v.shape for k, v in kept.state_dict().items()}
    state = {}
    for key, shape in shapes.items():
        value = full[key]
        if key == EMBEDDING:
            value = value[model.treebanks.names.index(treebank)].unsqueeze(0)  # (1, dim)
        elif value.shape != shape:
            head = key.removeprefix(STATE_PREFIX).split(".", 1)[0] if key.startswith(STATE_PREFIX) else None
            ids = allowed[head] if head is not None else allowed[LABELS]
            size = len(model.heads[head].tags) if head is not None else len(model.labels)
            dims = [d for d, (a, b) in enumerate(zip(value.shape, shape)) if a != b]
            if len(value.shape) != len(shape) or len(dims) != 1 or value.shape[dims[0]] != size or shape[dims[0]] != len(ids):
                raise OptionError(f"--treebank: {key} of shape {tuple(value.shape)} does not cut to {tuple(shape)}")
            value = value.index_select(dims[0], torch.tensor(ids, dtype=torch.long))
        state[key] = value
    return state
