"""Choosing a model's inference settings on dev, for every parser type through the ``Parser`` interface.

The sweep crosses the settings the model's type has (``Parser.inference_defaults``) and whose values it takes (an
``arc_weight`` needs a word scorer): ``k``, retrieval, decoder, λ and the word scorer's arc weight, with labels from
the linker and the mutual term on. The model's pass (``Parser.score``) runs once per value of its
``scoring_settings`` (a span model: once per k, with retrieval; a Biaffine model has none, and each decoding is a
parse), and every other setting only decodes it. Each pass reports what it can of itself (a span model: the recall
of the gold (hull) spans with and without retrieval, ``models/span/scores.py``); each setting UAS/LAS (punctuation
excluded and all words). The best setting is the one with the highest mean of UAS and LAS without punctuation; it is
then also scored with labels from the word scorer (where the model has one) and, with ``ablate_mutual``, without the
child-side (mutual) term, each kept when better. ``best_paper`` is the best setting without word-scorer terms (the
paper's parser). Test data is never read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from itertools import product
from typing import Any

from spandep.data.sentence import Sentence
from spandep.evaluation.metrics import evaluate
from spandep.options import MODEL_SETTINGS, InferenceOptions
from spandep.models.base import Parser, Scores
from spandep.pipeline.predict import with_tree

__all__ = ["SELECTION", "Tuning", "fastest_within", "row_options", "selection_score", "tune"]

SELECTION = "mean of UAS and LAS, punctuation (UPOS PUNCT/SYM) excluded, on dev"
FIXED = {"label_source": "linker", "mutual": True}  # the sweep's choices of these, tried the other way on its best only
Row = dict[str, Any]


def selection_score(row: Row) -> float:
    """What the sweep maximises (``SELECTION``): UAS plus LAS, punctuation excluded."""
    return float(row["UAS_nopunct"] or 0) + float(row["LAS_nopunct"] or 0)


def fastest_within(rows: Sequence[Row], best: Row, margin: float, refine: Callable[[Row], Row] = lambda row: row) -> Row:
    """The setting of the smallest k whose best LAS (no punct) is at most ``margin`` below ``best``'s: fewer spans per
    word parse faster (k is the span parser's main cost). At ``best``'s own k that is ``best``; at a smaller k, the
    best of its ``rows`` after ``refine`` (the sweep's later choices: labels from the word scorer)."""
    for k in sorted({row["k"] for row in rows}):
        if k == best["k"]:
            return best
        row = refine(max((r for r in rows if r["k"] == k), key=selection_score))
        if float(best["LAS_nopunct"]) - float(row["LAS_nopunct"]) <= margin:
            return row
    return best


@dataclass
class Tuning:
    """A sweep's results: recall per k, every decoded setting, and the choices (``best``, or with a margin
    ``fastest``, is what gets saved)."""

    recall: list[Row]
    sweep: list[Row]
    best: Row
    best_paper: Row | None
    word_labels: Row | None
    ablation_no_mutual: Row | None
    fastest: Row | None = None


def row_options(row: Row) -> InferenceOptions:
    """A sweep row's settings as inference options."""
    return InferenceOptions.from_dict({k: row[k] for k in MODEL_SETTINGS if k in row})


def accepted(model: Parser, name: str, values: Sequence[Any], treebank: str | None = None) -> list[Any]:
    """The ``values`` of the setting ``name`` that ``model`` takes (none when its type lacks the setting); when it
    takes none of them, its own saved value."""
    if name not in model.inference_defaults:
        return []
    kept = []
    for value in values:
        try:
            model.settings(InferenceOptions.from_dict({name: value, "treebank": treebank}))
        except ValueError:
            continue
        kept.append(value)
    return kept or [getattr(model.settings(InferenceOptions(treebank=treebank)), name)]


def tune(
    model: Parser,
    dev: list[Sentence],
    ks: Sequence[int] = (1, 2, 5, 10),
    lams: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0),
    arc_weights: Sequence[float] = (0.0, 0.5, 1.0, 2.0),
    batch_tokens: int = 4000,
    ablate_mutual: bool = False,
    report: Callable[[str, Row], None] = lambda kind, row: None,
    treebank: str | None = None,
    within: float | None = None,
) -> Tuning:
    """Sweep the settings on ``dev`` (see the module docstring) parsed as ``treebank`` (of a model of several);
    ``report`` sees every row as it is made. ``within``: also choose the fastest setting that close to the best
    (:func:`fastest_within`, a model with ``k``)."""
    grid = {"k": ks, "retrieval": (False, True), "decoder": ("projective", "mst"), "lam": lams, "arc_weight": arc_weights,
            **{name: (value,) for name, value in FIXED.items()}}
    axes = {name: values for name, values in ((n, accepted(model, n, v, treebank)) for n, v in grid.items()) if values}
    scoring = [name for name in axes if name in model.scoring_settings]
    others = [name for name in axes if name not in scoring]
    passes: dict[tuple[Any, ...], Scores] = {}  # the values of the scoring settings -> the model's pass

    def options(setting: Row) -> InferenceOptions:
        return InferenceOptions.from_dict({**setting, "batch_tokens": batch_tokens, "treebank": treebank})

    def scores(setting: Row) -> Scores:
        key = tuple(setting[name] for name in scoring)
        if key not in passes:
            passes[key] = model.score(dev, options({name: setting[name] for name in scoring}))
        return passes[key]

    def score(setting: Row) -> Row:
        parses, stats = scores(setting).decode(options(setting))
        r = evaluate(dev, [with_tree(s, p) for s, p in zip(dev, parses)])
        return {**setting, "UAS": r.uas, "LAS": r.las, "UAS_nopunct": r.uas_no_punct, "LAS_nopunct": r.las_no_punct,
                "dp_fallbacks": stats.dp_fallbacks}

    recalls: list[Row] = []
    rows: list[Row] = []
    for values in product(*(axes[name] for name in scoring)):  # one pass each
        first = dict(zip(scoring, values))
        t0 = time.perf_counter()
        figures = scores(first).report(dev)
        if figures:
            swept = {name: value for name, value in first.items() if name not in FIXED}
            recalls.append({**swept, **figures, "score_seconds": round(time.perf_counter() - t0, 1)})
            report("recall", recalls[-1])
        for rest in product(*(axes[name] for name in others)):
            setting = {**first, **dict(zip(others, rest))}
            rows.append(score({name: setting[name] for name in axes}))
            report("setting", rows[-1])
    best = max(rows, key=selection_score)
    best_paper = max((r for r in rows if r["arc_weight"] == 0.0), key=selection_score, default=None) if "arc_weight" in axes else None

    def rescore(row: Row, **change: Any) -> Row:
        """``row``'s setting decoded again with ``change`` (a model pass only for a scoring setting)."""
        return score({**{name: row[name] for name in axes}, **change})

    word = accepted(model, "label_source", ("word",), treebank) == ["word"]

    def with_word_labels(row: Row) -> Row:
        return max(row, rescore(row, label_source="word"), key=selection_score) if word else row

    word_labels = ablation = None
    if word:
        word_labels = rescore(best, label_source="word")
        report("word labels", word_labels)
        best = max(best, word_labels, key=selection_score)
    if ablate_mutual and "mutual" in axes:
        ablation = rescore(best, mutual=False)
        report("no mutual term", ablation)
        best = max(best, ablation, key=selection_score)
        if best_paper is not None:
            best_paper = max(best_paper, rescore(best_paper, mutual=False), key=selection_score)
    fastest = None if within is None or "k" not in axes else fastest_within(rows, best, within, with_word_labels)
    return Tuning(recalls, rows, best, best_paper, word_labels, ablation, fastest)


def tuning_record(tuning: Tuning, **about: Any) -> dict[str, Any]:
    """What a sweep writes to its results file and, for the chosen setting, beside the model."""
    return {**about, **asdict(tuning), "selection": SELECTION}
