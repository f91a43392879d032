"""Training on several treebanks at once: the ``[data] treebanks`` list, each epoch's sentences, the dev figures.

``[data] treebanks = [{ name = "fr_sequoia", train = "...", dev = "...", tokenizer = "..." }, ...]`` (two or more;
``tokenizer`` optional; ``ud_version = 1`` for a UD v1 treebank, read with v2 relations) replaces ``[data] train``,
``dev`` and ``tokenizer``. Batches mix the treebanks: all training sentences are length-bucketed together, as one
treebank's are. ``[data] sampling_exponent`` ``a`` makes each treebank's share of an epoch proportional to its size
to the power ``a`` (1: as read; 0.5 upsamples the small ones; a temperature of ``1 / a``), the epoch keeping the total
size; ``[data] treebank_cap`` ``c`` then gives no treebank more than ``c`` sentences of an epoch (0: no cap), so
that the biggest do not drown the others (the epoch is shorter by what the cap takes). Dev: each treebank's figures, and the best epoch is the one with the best
macro-average LAS (punctuation excluded) over them. ``[data] train_treebanks = ["ko_gsd"]`` trains on some of the
treebanks only (an epoch samples from them alone, dev scores them alone) while the others still give the model its
relation labels and classes: a model of every treebank fine-tuned for one, its label set and embedding rows kept (a
run started from the pool model by ``[training] init`` must have them exactly). docs/design.md, "Several treebanks".
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["METRICS", "TreebankFiles", "epoch_sentences", "macro_scores", "train_treebanks_problem", "treebank_files", "treebanks_problem"]

METRICS = ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct")  # the dev figures of each epoch
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")  # a treebank's name is also a folder name (tokenizers/NAME)
_KEYS = ("name", "train", "dev", "tokenizer", "ud_version")


@dataclass(frozen=True)
class TreebankFiles:
    """One treebank to train on: its ``name`` (``None`` for the one treebank of ``[data] train``), its training and
    dev files, its raw-text tokenizer folder (or ``None``) and its UD version (1: read with v2 relations,
    :mod:`spandep.data.udv1`)."""

    name: str | None
    train: str
    dev: str
    tokenizer: str | None
    ud_version: int = 2


def treebank_files(cfg: dict[str, Any]) -> list[TreebankFiles]:
    """The treebanks a read training config trains on: those of ``[data] treebanks``, else ``[data] train``'s."""
    data = cfg["data"]
    if data.get("treebanks") is None:
        return [TreebankFiles(None, data["train"], data["dev"], data["tokenizer"], data.get("ud_version", 2))]
    return [TreebankFiles(t["name"], t["train"], t["dev"], t.get("tokenizer"), t.get("ud_version", 2)) for t in data["treebanks"]]


def treebanks_problem(value: object) -> str | None:
    """What is wrong with a ``[data] treebanks`` value, in one line; ``None``: nothing."""
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(t, dict) for t in value):
        return "[data] treebanks must be a list of two or more tables { name, train, dev }; for one treebank give [data] train and dev"
    names = [t.get("name") for t in value]
    for t in value:
        unknown = sorted(set(t) - set(_KEYS))
        if unknown:
            return f"[data] treebanks: unknown key(s) {', '.join(unknown)}; known: {', '.join(_KEYS)}"
        if not isinstance(t.get("name"), str) or not _NAME.match(t["name"]):
            return f"[data] treebanks: name must be letters, digits, '_', '.' or '-' (a folder name), not {t.get('name')!r}"
        if names.count(t["name"]) > 1:
            return f"[data] treebanks: the name {t['name']!r} is given twice"
        for key in ("train", "dev", "tokenizer"):
            if not isinstance(t.get(key), str) and (key != "tokenizer" or key in t):
                return f"[data] treebanks: {t['name']}'s {key} must be a path in quotes, not {t.get(key)!r}"
        if t.get("ud_version", 2) not in (1, 2) or isinstance(t.get("ud_version"), bool):
            return f"[data] treebanks: {t['name']}'s ud_version must be 1 or 2, not {t['ud_version']!r}"
    return None


def train_treebanks_problem(value: object, names: Sequence[str]) -> str | None:
    """What is wrong with a ``[data] train_treebanks`` value (``None``, or some of ``names`` once each), in one line."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return f"[data] train_treebanks must be a list of treebank names in quotes, not {value!r}"
    unknown = [v for v in value if v not in names]
    if unknown:
        return f"[data] train_treebanks: {', '.join(map(repr, unknown))} not in [data] treebanks"
    if len(set(value)) < len(value):
        return "[data] train_treebanks: a name is given twice"
    return None


def epoch_sentences(sizes: Sequence[int], exponent: float, seed: int, cap: int = 0) -> list[int]:
    """The training sentences of one epoch (indices into the treebanks' sentences, one after another; repeats where
    a treebank is upsampled): each treebank's share proportional to ``size ** exponent``, the epoch as long as all
    the treebanks together, then at most ``cap`` (0: no cap); a treebank gives all its sentences as many times as its
    share holds, then a random part (``seed``: the epoch's)."""
    rng = random.Random(seed)
    weights = [n**exponent for n in sizes]
    total, out, start = sum(sizes), [], 0
    for n, w in zip(sizes, weights):
        share = round(total * w / sum(weights))
        share = min(share, cap) if cap else share
        own = list(range(start, start + n))
        out.extend(own * (share // n) + rng.sample(own, share % n))
        start += n
    return out


def macro_scores(per_treebank: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The epoch's dev figures: the macro averages of each figure (``METRICS``, and the morphology figures of
    ``[training] select = "las+mlas"``) over the treebanks, then each treebank's own (``NAME:LAS``, ...)."""
    metrics = list(next(iter(per_treebank.values())))
    macro = {m: sum(s[m] for s in per_treebank.values()) / len(per_treebank) for m in metrics}
    return macro | {f"{name}:{m}": s[m] for name, s in per_treebank.items() for m in metrics}
