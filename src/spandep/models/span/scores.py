"""A span model's scoring of some sentences, decoded under many settings: ``spandep tune``'s sweep through
``Parser.score``.

The costly stages (propose, link) run once per ``k`` and mutual term, with retrieval; each decoding setting (decoder,
λ, the word scorer's terms, and retrieval: off reads the proposal's candidates alone) then only decodes them
(``SpanInference.decode``). The pass also reports how often the gold (hull) span of a word was among its
candidates, with and without retrieval (``proposal.span_hits``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spandep.data.sentence import Sentence
from spandep.data.trees import hull_spans
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.base import Parse, Scores
from spandep.models.span.inference import ScoredSentence, SpanInference
from spandep.models.span.proposal import span_hits

__all__ = ["SpanScores", "candidate_recall"]


def candidate_recall(scored: Sequence[ScoredSentence], gold: Sequence[Sentence]) -> float:
    """Share (%) of words whose gold (hull) span is among their candidates."""
    candidates, spans = [], []
    for sc, sentence in zip(scored, gold):
        if sc.cands is None:
            continue
        per_word: list[list[tuple[int, int, float]]] = [[] for _ in range(sc.n)]
        for r, s, e in zip(sc.cands.root[1:].tolist(), sc.cands.start[1:].tolist(), sc.cands.end[1:].tolist()):
            per_word[r - 1].append((s, e, 0.0))
        candidates.append(per_word)
        spans.append(hull_spans([int(h or 0) for h in sentence.heads]))
    size = max((len(c) for sentence in candidates for c in sentence), default=1)
    hits, total = span_hits(candidates, spans, ks=(size,))
    return 100.0 * hits[size] / max(total, 1)


class SpanScores(Scores):
    """Stages 1 and 2 of a span parse with retrieval (``inference``'s settings otherwise), kept to decode."""

    def __init__(self, inference: SpanInference, sentences: Sequence[Sentence]) -> None:
        self.inference = inference
        self.scored, self.stats = inference.score(sentences)

    def decode(self, options: InferenceOptions) -> tuple[list[Parse], InferenceStats]:
        """The parses with ``options`` over the pass's settings, and how many projective decodings fell back."""
        parses, fallbacks = self.inference.using(options.over(self.inference.options)).decode(self.scored)
        return parses, InferenceStats(dp_fallbacks=fallbacks)

    def report(self, gold: Sequence[Sentence]) -> dict[str, Any]:
        """The candidates' recall of the gold spans without and with retrieval, the queries run and the spans
        retrieval added."""
        only = [sc.proposals_only() for sc in self.scored]
        return {
            "recall": candidate_recall(only, gold), "recall_retrieval": candidate_recall(self.scored, gold),
            "queries": self.stats.queries, "retrieved_spans": self.stats.retrieved_spans,
        }

