"""Choosing a span model's inference settings on dev: k, retrieval, λ, decoder and the word-scorer terms.

For each k the models run once (with retrieval, ``models.span.inference.score_spans``); decoding without retrieval
uses the proposal's candidates only (``ScoredSentence.proposals_only``), so one pass gives both. The sweep reports
the span recall of the gold (hull) spans with and without retrieval (``proposal.span_hits``) and UAS/LAS
(punctuation excluded and all words) of every (k, retrieval, decoder, λ, arc weight). The best setting is the one
with the highest mean of UAS and LAS without punctuation; for a model with a word scorer it is also scored with
labels from the word scorer, and with ``ablate_mutual`` without the child-side (mutual) term, each kept when
better. ``best_paper`` is the best setting without word-scorer terms (the paper's parser). Test data is never read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from spandep.data.sentence import Sentence
from spandep.data.trees import hull_spans
from spandep.evaluation.metrics import evaluate
from spandep.inference import InferenceOptions
from spandep.models.span.inference import ScoredSentence, decode_scored, score_spans
from spandep.models.span.parser import SpanParser
from spandep.models.span.proposal import span_hits
from spandep.pipeline.predict import with_tree

__all__ = ["SELECTION", "Tuning", "fastest_within", "row_options", "selection_score", "tune"]

SELECTION = "mean of UAS and LAS, punctuation (UPOS PUNCT/SYM) excluded, on dev"
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
    return InferenceOptions.from_dict({k: row[k] for k in ("k", "lam", "decoder", "retrieval", "mutual", "arc_weight", "label_source")})


def candidate_recall(scored: Sequence[ScoredSentence], dev: Sequence[Sentence]) -> float:
    """Share (%) of words whose gold (hull) span is among their candidates."""
    candidates, gold = [], []
    for sc, sentence in zip(scored, dev):
        if sc.cands is None:
            continue
        per_word: list[list[tuple[int, int, float]]] = [[] for _ in range(sc.n)]
        for r, s, e in zip(sc.cands.root[1:].tolist(), sc.cands.start[1:].tolist(), sc.cands.end[1:].tolist()):
            per_word[r - 1].append((s, e, 0.0))
        candidates.append(per_word)
        gold.append(hull_spans([int(h or 0) for h in sentence.heads]))
    size = max((len(c) for sentence in candidates for c in sentence), default=1)
    hits, total = span_hits(candidates, gold, ks=(size,))
    return 100.0 * hits[size] / max(total, 1)


def tune(
    model: SpanParser,
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
    (:func:`fastest_within`)."""
    weights = list(arc_weights) if model.word_scorer is not None else [0.0]
    allow_root = model.linker.allow_root_in_span
    fallback = model.label_names(InferenceOptions(treebank=treebank))

    def score(scored: Sequence[ScoredSentence], setting: Row) -> Row:
        decode = model.decoder(InferenceOptions(decoder=setting["decoder"]))
        results, fallbacks = decode_scored(
            scored, model.labels, decode, setting["lam"], allow_root, setting["arc_weight"], setting["label_source"], fallback
        )
        r = evaluate(dev, [with_tree(s, p) for s, p in zip(dev, results)])
        return {**setting, "UAS": r.uas, "LAS": r.las, "UAS_nopunct": r.uas_no_punct, "LAS_nopunct": r.las_no_punct,
                "dp_fallbacks": fallbacks if setting["decoder"] == "projective" else 0}

    recalls: list[Row] = []
    rows: list[Row] = []
    swept: dict[int, list[ScoredSentence]] = {}  # k -> the sweep's scores (with retrieval, mutual term on)
    for k in ks:
        t0 = time.perf_counter()
        options = InferenceOptions(k=k, retrieval=True, mutual=True, batch_tokens=batch_tokens, treebank=treebank)
        scored, stats = score_spans(model, dev, options)
        swept[k] = scored
        only = [sc.proposals_only() for sc in scored]
        recalls.append({"k": k, "recall": candidate_recall(only, dev), "recall_retrieval": candidate_recall(scored, dev),
                        "queries": stats.queries, "retrieved_spans": stats.retrieved_spans,
                        "score_seconds": round(time.perf_counter() - t0, 1)})
        report("recall", recalls[-1])
        for retrieval, view in ((False, only), (True, scored)):
            for decoder in ("projective", "mst"):
                for lam in lams:
                    for arc_weight in weights:
                        setting = {"k": k, "retrieval": retrieval, "decoder": decoder, "lam": lam, "arc_weight": arc_weight,
                                   "label_source": "linker", "mutual": True}
                        rows.append(score(view, setting))
                        report("setting", rows[-1])
    best = max(rows, key=selection_score)
    best_paper = max((r for r in rows if r["arc_weight"] == 0.0), key=selection_score, default=None)

    def rescore(row: Row, **change: Any) -> Row:
        """``row``'s setting decoded again with ``change`` (a model pass only without the mutual term)."""
        setting = {key: row[key] for key in ("k", "retrieval", "decoder", "lam", "arc_weight", "label_source", "mutual")}
        setting.update(change)
        if setting["mutual"]:
            scored = swept[setting["k"]]
        else:
            scored, _ = score_spans(model, dev, InferenceOptions(k=setting["k"], retrieval=setting["retrieval"], mutual=False,
                                                                 batch_tokens=batch_tokens, treebank=treebank))
        if not setting["retrieval"]:
            scored = [sc.proposals_only() for sc in scored]
        return score(scored, setting)

    def with_word_labels(row: Row) -> Row:
        return row if model.word_scorer is None else max(row, rescore(row, label_source="word"), key=selection_score)

    word_labels = ablation = None
    if model.word_scorer is not None:
        word_labels = rescore(best, label_source="word")
        report("word labels", word_labels)
        best = max(best, word_labels, key=selection_score)
    if ablate_mutual:
        ablation = rescore(best, mutual=False)
        report("no mutual term", ablation)
        best = max(best, ablation, key=selection_score)
        if best_paper is not None:
            best_paper = max(best_paper, rescore(best_paper, mutual=False), key=selection_score)
    fastest = None if within is None else fastest_within(rows, best, within, with_word_labels)
    return Tuning(recalls, rows, best, best_paper, word_labels, ablation, fastest)


def tuning_record(tuning: Tuning, **about: Any) -> dict[str, Any]:
    """What a sweep writes to its results file and, for the chosen setting, beside the model."""
    return {**about, **asdict(tuning), "selection": SELECTION}
