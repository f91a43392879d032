"""End-to-end scores of a system file against a gold file by the CoNLL 2018 shared-task definition.

The two files may differ in tokenisation, multiword tokens and sentence split; they must spell the same
characters (spaces aside). Tokens and words are matched through :mod:`spandep.evaluation.align`. Every word
counts, punctuation included. All scores are percentages.

* Tokens, Sentences: a system span is correct when a gold span has the same start and end.
* Words: aligned words.
* UPOS, XPOS, UFeats (universal features only, see :data:`~spandep.evaluation.align.UNIVERSAL_FEATURES`),
  AllTags (all three), Lemmas (right when the gold LEMMA is ``_``): the column agrees on an aligned word.
* UAS: the head is right, i.e. both words attach to the root, or the system head is aligned to the gold head.
  LAS: head and universal relation (DEPREL without its subtype) are right.
* CLAS, MLAS, BLEX: as LAS, counted over content words only (gold words, for the recall side, and system words,
  for the precision side, whose universal relation is in :data:`CONTENT_RELATIONS`; punctuation and unknown
  relations are neither content nor function words). MLAS also needs UPOS, UFeats and the function-word
  children (:data:`FUNCTION_RELATIONS`: relation, UPOS, UFeats and attachment of each, in order) right; BLEX
  the lemma.
* LAS (full labels), not part of the task: LAS comparing the whole DEPREL, subtypes included.

Precision divides by the system count, recall by the gold count, F1 is their harmonic mean and aligned accuracy
(the metrics on aligned words) divides by the aligned words counted; each is 0 where its denominator is 0, as in
the task's scorer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from spandep.data.sentence import Sentence
from spandep.evaluation.align import (
    ROOT,
    Alignment,
    Span,
    SpanDocument,
    SpanWord,
    align_words,
    check_same_text,
    span_document,
)
from spandep.evaluation.metrics import CLAS_FUNCTION_RELATIONS, check_gold_tree

__all__ = ["CONTENT_RELATIONS", "FUNCTION_RELATIONS", "Score", "AlignedScore", "Conll18Report", "evaluate_conll18"]

CONTENT_RELATIONS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl", "advmod",
    "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound", "list", "parataxis",
    "orphan", "goeswith", "reparandum", "root", "dep",
})
FUNCTION_RELATIONS = CLAS_FUNCTION_RELATIONS - {"punct"}  # the children MLAS checks


def _ratio(num: int, den: int) -> float:
    return 100.0 * num / den if den else 0.0


@dataclass(frozen=True)
class Score:
    """``correct`` of ``gold`` gold items and ``system`` system items."""

    correct: int
    gold: int
    system: int

    @property
    def precision(self) -> float:
        return _ratio(self.correct, self.system)

    @property
    def recall(self) -> float:
        return _ratio(self.correct, self.gold)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.correct, self.gold + self.system)

    def to_dict(self) -> dict[str, Any]:
        """Counts and percentages."""
        return {**asdict(self), "precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True)
class AlignedScore(Score):
    """A score over aligned words: ``aligned`` of them were counted, ``correct`` of those are right."""

    aligned: int

    @property
    def aligned_accuracy(self) -> float:
        return _ratio(self.correct, self.aligned)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "aligned_accuracy": self.aligned_accuracy}


@dataclass(frozen=True)
class Conll18Report:
    """Every CoNLL 2018 metric of one system file, and LAS on full labels beside the task's LAS."""

    gold_source: str
    system_source: str
    tokens: Score
    sentences: Score
    words: Score
    upos: AlignedScore
    xpos: AlignedScore
    ufeats: AlignedScore
    alltags: AlignedScore
    lemmas: AlignedScore
    uas: AlignedScore
    las: AlignedScore
    clas: AlignedScore
    mlas: AlignedScore
    blex: AlignedScore
    las_full_labels: AlignedScore

    def metrics(self) -> list[tuple[str, Score]]:
        """``(name, score)`` in the task's order, the full-label LAS last."""
        return [
            ("Tokens", self.tokens), ("Sentences", self.sentences), ("Words", self.words), ("UPOS", self.upos),
            ("XPOS", self.xpos), ("UFeats", self.ufeats), ("AllTags", self.alltags), ("Lemmas", self.lemmas),
            ("UAS", self.uas), ("LAS", self.las), ("CLAS", self.clas), ("MLAS", self.mlas), ("BLEX", self.blex),
            ("LAS full labels", self.las_full_labels),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the two sources and every metric by name (unrounded percentages and counts)."""
        return {
            "gold_source": self.gold_source,
            "system_source": self.system_source,
            **{name: score.to_dict() for name, score in self.metrics()},
        }

    def format_text(self) -> str:
        """The scores as a table, with a line on what they count."""
        lines = [
            "CoNLL 2018 shared-task evaluation (all words; LAS, CLAS, MLAS, BLEX on universal relations)",
            f"gold:   {self.gold_source}",
            f"system: {self.system_source}",
            "",
            f"{'metric':<16}{'precision':>10}{'recall':>10}{'F1':>10}{'aligned acc':>13}   correct / gold / system",
        ]
        for name, score in self.metrics():
            acc = f"{score.aligned_accuracy:>13.2f}" if isinstance(score, AlignedScore) else " " * 13
            lines.append(
                f"{name:<16}{score.precision:>10.2f}{score.recall:>10.2f}{score.f1:>10.2f}{acc}   "
                f"{score.correct} / {score.gold} / {score.system}"
            )
        lines += ["", "LAS full labels (not a CoNLL 2018 metric): LAS comparing the whole DEPREL, subtypes included."]
        return "\n".join(lines) + "\n"


class _Scorer:
    """Counts of the aligned-word metrics for two aligned documents; each predicate takes a gold and a system word
    index and says whether the system word is right."""

    def __init__(self, gold: SpanDocument, system: SpanDocument, alignment: Alignment) -> None:
        self.gold = gold.words
        self.system = system.words
        self.pairs = alignment.pairs
        self.to_gold = alignment.system_to_gold
        self.gold_children = self._function_children(self.gold)
        self.system_children = self._function_children(self.system)

    @staticmethod
    def _function_children(words: list[SpanWord]) -> list[list[int]]:
        kids: list[list[int]] = [[] for _ in words]
        for i, w in enumerate(words):
            if w.head is not None and w.head != ROOT and w.udeprel in FUNCTION_RELATIONS:
                kids[w.head].append(i)
        return kids

    def score(self, right: Callable[[int, int], bool], content_only: bool = False) -> AlignedScore:
        """Count the aligned pairs ``(g, s)`` (with a content-word gold word if ``content_only``) for which
        ``right(g, s)`` holds."""
        if not content_only:
            correct = sum(right(g, s) for g, s in self.pairs)
            return AlignedScore(correct, len(self.gold), len(self.system), len(self.pairs))
        pairs = [(g, s) for g, s in self.pairs if self.gold[g].udeprel in CONTENT_RELATIONS]
        return AlignedScore(
            sum(right(g, s) for g, s in pairs),
            sum(w.udeprel in CONTENT_RELATIONS for w in self.gold),
            sum(w.udeprel in CONTENT_RELATIONS for w in self.system),
            len(pairs),
        )

    def upos(self, g: int, s: int) -> bool:
        return self.gold[g].word.upos == self.system[s].word.upos

    def xpos(self, g: int, s: int) -> bool:
        return self.gold[g].word.xpos == self.system[s].word.xpos

    def ufeats(self, g: int, s: int) -> bool:
        return self.gold[g].ufeats == self.system[s].ufeats

    def head(self, g: int, s: int) -> bool:
        gold_head, system_head = self.gold[g].head, self.system[s].head
        if gold_head is None or system_head is None:
            return False
        if gold_head == ROOT or system_head == ROOT:
            return gold_head == system_head
        return self.to_gold[system_head] == gold_head

    def las(self, g: int, s: int) -> bool:
        return self.head(g, s) and self.gold[g].udeprel == self.system[s].udeprel

    def las_full_labels(self, g: int, s: int) -> bool:
        return self.head(g, s) and self.gold[g].word.deprel == self.system[s].word.deprel

    def lemma(self, g: int, s: int) -> bool:
        gold_lemma = self.gold[g].word.lemma
        return gold_lemma == "_" or gold_lemma == self.system[s].word.lemma

    def morphology(self, g: int, s: int) -> bool:
        """UPOS, UFeats and the function-word children agree (the part of MLAS beyond LAS)."""
        if not (self.upos(g, s) and self.ufeats(g, s)):
            return False
        gold_kids = [
            (c, self.gold[c].udeprel, self.gold[c].word.upos, self.gold[c].ufeats) for c in self.gold_children[g]
        ]
        system_kids = [
            (self.to_gold[c], self.system[c].udeprel, self.system[c].word.upos, self.system[c].ufeats)
            for c in self.system_children[s]
        ]
        return gold_kids == system_kids


def _spans_score(gold: Sequence[Span], system: Sequence[Span]) -> Score:
    """Correct = system spans that start and end where a gold span does (both lists in text order)."""
    gold_ends = {span.start: span.end for span in gold}
    correct = sum(gold_ends.get(span.start) == span.end for span in system)
    return Score(correct, len(gold), len(system))


def evaluate_conll18(
    gold: Sequence[Sentence], system: Sequence[Sentence], *, gold_source: str, system_source: str
) -> Conll18Report:
    """Score ``system`` against ``gold`` (see the module docstring).

    Raises :class:`~spandep.errors.InputFormatError` where a gold sentence's heads do not form a tree, and where
    the two files do not spell the same characters (naming the first difference's line in both files). System
    heads may be anything; a HEAD ``_`` is never right.
    """
    for sent in gold:
        check_gold_tree(sent)
    gold_doc = span_document(gold, gold_source)
    system_doc = span_document(system, system_source)
    check_same_text(gold_doc, system_doc)
    alignment = align_words(gold_doc.words, system_doc.words)
    sc = _Scorer(gold_doc, system_doc, alignment)

    return Conll18Report(
        gold_source=gold_source,
        system_source=system_source,
        tokens=_spans_score(gold_doc.tokens, system_doc.tokens),
        sentences=_spans_score(gold_doc.sentences, system_doc.sentences),
        words=Score(len(alignment.pairs), len(gold_doc.words), len(system_doc.words)),
        upos=sc.score(sc.upos),
        xpos=sc.score(sc.xpos),
        ufeats=sc.score(sc.ufeats),
        alltags=sc.score(lambda g, s: sc.upos(g, s) and sc.xpos(g, s) and sc.ufeats(g, s)),
        lemmas=sc.score(sc.lemma),
        uas=sc.score(sc.head),
        las=sc.score(sc.las),
        clas=sc.score(sc.las, content_only=True),
        mlas=sc.score(lambda g, s: sc.las(g, s) and sc.morphology(g, s), content_only=True),
        blex=sc.score(lambda g, s: sc.las(g, s) and sc.lemma(g, s), content_only=True),
        las_full_labels=sc.score(sc.las_full_labels),
    )
