"""Some treebanks of a model of several, as a model of their own (``spandep export MODEL OUT --treebank T [--treebank
U ...]``).

Why: the multilingual pool model parses 84 treebanks from one folder of 60 MB; a user of one language, a treebank
fine-tuned apart from the pool (``[data] train_treebanks``, issue 46's per-treebank step), or the multilingual folder
itself once other folders serve some of its treebanks, needs only what a parse as those treebanks reads. A parse as
treebank T already masks every relation label and output-head class T's training data lacks
(``models/treebanks.py``), so those rows of the weights are never read: the copy keeps the labels and classes of the
kept treebanks only, in the model's order, and the rows of the
weights that score them, each treebank's allowed ids renumbered to them, and so gives the same trees, labels, tags
and probabilities as the full model parsing as each of them.

- Relation labels: the parser's weights whose size along one dimension is the number of labels (the Biaffine label
  scorer, a span linker's label scorer) keep the kept labels' rows along it, found by building the copy and
  comparing shapes.
- Output heads: each head's classes restricted to the kept ones, its class rows (``OutputHead.class_rows``) kept; a
  head none of them has a class of is left out (it filled no column for them), a head whose other weights depend on
  its classes (FEATS with per-feature classifiers) is refused.
- The treebank embedding keeps their rows, in the model's order; a copy of one treebank names it alone
  (``treebanks.names == [T]``) and parses as it without being told. Their saved inference settings and calibration
  are kept.
- A lemma head's lexicons are each kept treebank's own and those of its language that serve a pair its own lacks
  (``fallback = "language"``), as the full model reads them; in a folder written before, whose lexicons of all
  treebanks serve that pair (``"all"``, megabytes of tables), T's own only (one treebank only): its lemmas may
  differ where that fallback spoke.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from spandep.errors import OptionError
from spandep.models import Parser, build_model
from spandep.models.heads import STATE_PREFIX
from spandep.models.heads.lemma import kin
from spandep.models.treebanks import LABELS

__all__ = ["keep_treebanks"]

EMBEDDING = "treebanks.embed.weight"


def keep_treebanks(model: Parser, treebanks: Sequence[str]) -> Parser:
    """A copy of ``model`` (of several treebanks, loaded with its adapter unmerged) that parses ``treebanks`` only."""
    if model.treebanks is None:
        raise OptionError("--treebank: this model was trained on one treebank; export it without --treebank")
    for treebank in treebanks:
        if treebank not in model.treebanks.names:
            raise OptionError(f"--treebank {treebank!r} is not one of this model's: {', '.join(model.treebanks.names)}")
    names = [t for t in model.treebanks.names if t in treebanks]
    allowed = {part: _union(ids[t] for t in names) for part, ids in model.treebanks.allowed.items()}
    config = copy.deepcopy(model.config)
    config["model"] = _model_config(model, names, allowed)
    kept = build_model(config)
    state = _state(model, kept, names, allowed)
    kept.load_state_dict(state)  # every weight of the copy, cut from the model's
    kept.eval()
    kept.config = config
    return kept


def _union(lists: Iterable[Sequence[int]]) -> list[int]:
    """The ids of ``lists``, each once, in the model's order: a copy that keeps every class keeps their rows as they
    are (a weight whose shape does not change is not cut)."""
    return sorted({i for ids in lists for i in ids})


def _renumbered(allowed: dict[str, Sequence[int]], kept: Sequence[int]) -> dict[str, list[int]]:
    """Each treebank's ``allowed`` ids in the model as positions in ``kept`` (the copy's classes)."""
    position = {old: new for new, old in enumerate(kept)}
    return {t: [position[i] for i in ids] for t, ids in allowed.items()}


def _model_config(model: Parser, names: Sequence[str], allowed: dict[str, list[int]]) -> dict[str, Any]:
    """The saved ``model`` table of the copy: the kept treebanks' labels, classes, settings and calibration."""
    full = model.export_config()
    out = copy.deepcopy(full)
    out["labels"] = [full["labels"][i] for i in allowed[LABELS]]
    heads = {}
    for name, head in full["heads"].items():
        if allowed[name]:  # a head without a class of theirs filled no column for them: left out
            heads[name] = _head_config(model, name, head, names, allowed[name])
    out["heads"] = heads
    tb, parts = full["treebanks"], [part for part in full["treebanks"]["allowed"] if part == LABELS or part in heads]
    out["treebanks"] = {
        "names": list(names), "dim": tb["dim"], "sizes": {part: len(allowed[part]) for part in tb["sizes"] if part == LABELS or part in heads},
        "allowed": {part: _renumbered({t: model.treebanks.allowed[part][t] for t in names}, allowed[part]) for part in parts},
        **({"inference": {t: tb["inference"][t] for t in names if t in tb["inference"]}} if set(names) & set(tb.get("inference", {})) else {}),
    }
    calibration = out.get("calibration") or {}
    if "treebanks" in calibration:
        own = {t: calibration["treebanks"][t] for t in names if t in calibration["treebanks"]}
        calibration.pop("treebanks")
        if own:
            calibration["treebanks"] = own
    return out


def _head_config(model: Parser, name: str, head: dict[str, Any], names: Sequence[str], ids: Sequence[int]) -> dict[str, Any]:
    """An output head's settings with the kept classes only, and a lemma head's lexicons and dictionaries the kept
    treebanks' own."""
    if not model.heads[name].class_rows:
        raise OptionError(f"--treebank: the {name} head's weights depend on its classes beyond their rows; it cannot be cut to some treebanks")
    out = {k: v for k, v in head.items() if k not in ("treebank_lexicons", "treebank_dictionaries")}
    dictionaries = {t: head["treebank_dictionaries"][t] for t in names if t in (head.get("treebank_dictionaries") or {})}
    if dictionaries:
        out["treebank_dictionaries"] = dictionaries
    out["tags"] = [head["tags"][i] for i in ids]
    tables = head.get("treebank_lexicons") or {}
    if head.get("fallback") == "language":  # each one's own lexicons, then its language's, as the full model reads them
        wanted = {k for t in names for k in (t, *kin(tables, t))}
        out["treebank_lexicons"] = {k: table for k, table in tables.items() if k in wanted}
    elif tables and len(names) > 1:
        raise OptionError("--treebank: a folder written before the lemma lexicons' language fallback is cut to one treebank only")
    elif names[0] in tables:  # a folder written before: T's own, the lexicons of all left out
        out |= {"lexicon": tables[names[0]]["lexicon"], "feats_lexicon": tables[names[0]]["feats_lexicon"]}
    return out


def _state(model: Parser, kept: Parser, names: Sequence[str], allowed: dict[str, list[int]]) -> dict[str, torch.Tensor]:
    """``model``'s weights cut to the shapes of ``kept``: the kept rows of each class- or label-sized dimension."""
    full, shapes = model.state_dict(), {k: v.shape for k, v in kept.state_dict().items()}
    state = {}
    for key, shape in shapes.items():
        value = full[key]
        if key == EMBEDDING:
            rows = torch.tensor([model.treebanks.names.index(t) for t in names], dtype=torch.long)
            value = value.index_select(0, rows)  # (kept treebanks, dim)
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
