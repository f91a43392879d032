"""Attachment scores of predicted trees against gold trees (same tokenisation).

Gold and predicted sentences are aligned one to one and must have the same word forms. All scores are
percentages (floats in 0..100; ``None`` where the denominator is 0).

* UAS / LAS: share of words with the correct head / correct head and DEPREL. DEPREL is compared as the
  full string, subtypes included (``obl:tmod`` != ``obl``). Given over all words and with punctuation
  excluded; punctuation is decided on the GOLD words by :mod:`spandep.evaluation.punct`.
* CLAS (CoNLL 2018): LAS restricted to content words, i.e. words whose DEPREL's universal part (before
  the first ``:``) is not one of aux, case, cc, clf, cop, det, mark, punct. Precision = correct / predicted
  content words (content-ness from the PREDICTED DEPREL), recall = correct / gold content words (from
  the GOLD DEPREL), correct = gold content word with correct head and DEPREL (full string, as LAS; the
  CoNLL 2018 script compares universal parts only). With gold tokenisation P and R differ only through
  content-ness of mislabelled words; F1 is the headline number.
* Tagging and lemmas (meaningful when the parsed input had the column blank, ``_``): UPOS, XPOS and lemma accuracy
  over words with a gold value (not ``_``); UFeats over all words (a gold ``_`` is "no features"), the bundle
  compared as a whole.
* Exact match: share of sentences whose words all have the correct head (UAS) / head and DEPREL (LAS).
* Per label (gold and predicted DEPREL, full string): support = gold words with the label, predicted =
  predicted words with the label, correct = words with that label in both and the correct head;
  precision = correct / predicted, recall = correct / support.
* Breakdowns over all words (punctuation included), each bin with its word count, UAS and LAS, by
  sentence length (words), by gold dependency length |head - dependent| (attachments to ROOT as their
  own bin "root") and by gold subtree span length (size of the hull of the word and its descendants in
  the gold tree, :func:`spandep.data.trees.hull_spans`). Bins are by GOLD arcs: recall-style accuracy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from spandep.data.sentence import Sentence
from spandep.errors import InputFormatError
from spandep.evaluation.punct import PUNCT_RULE, is_punct

__all__ = [
    "CLAS_FUNCTION_RELATIONS",
    "SENTENCE_LENGTH_BINS",
    "DEPENDENCY_LENGTH_BINS",
    "SPAN_LENGTH_BINS",
    "BinScore",
    "LabelScore",
    "EvalReport",
    "check_gold_tree",
    "evaluate",
    "same_words",
]

CLAS_FUNCTION_RELATIONS = frozenset({"aux", "case", "cc", "clf", "cop", "det", "mark", "punct"})
TAG_COLUMNS = (("upos", "UPOS"), ("xpos", "XPOS"), ("feats", "UFeats"), ("lemma", "Lemmas"))  # Token column, name

# (name, low, high) with inclusive bounds; high None = no upper bound.
Bins = Sequence[tuple[str, int, "int | None"]]
SENTENCE_LENGTH_BINS: Bins = (
    ("1-10", 1, 10),
    ("11-20", 11, 20),
    ("21-30", 21, 30),
    ("31-40", 31, 40),
    ("41-50", 41, 50),
    (">50", 51, None),
)
DEPENDENCY_LENGTH_BINS: Bins = (  # attachments to ROOT form the extra first bin "root"
    ("1", 1, 1),
    ("2", 2, 2),
    ("3", 3, 3),
    ("4", 4, 4),
    ("5", 5, 5),
    ("6", 6, 6),
    ("7", 7, 7),
    ("8-10", 8, 10),
    ("11-15", 11, 15),
    ("16-20", 16, 20),
    (">20", 21, None),
)
SPAN_LENGTH_BINS: Bins = (
    ("1", 1, 1),
    ("2", 2, 2),
    ("3-4", 3, 4),
    ("5-8", 5, 8),
    ("9-16", 9, 16),
    ("17-32", 17, 32),
    (">32", 33, None),
)
ROOT_BIN = "root"


def _pct(num: int, den: int) -> float | None:
    return 100.0 * num / den if den else None


def _f1(correct: int, predicted: int, gold: int) -> float | None:
    return 100.0 * 2 * correct / (predicted + gold) if predicted + gold else None


def _bin_index(bins: Bins, value: int) -> int:
    for i, (_, low, high) in enumerate(bins):
        if value >= low and (high is None or value <= high):
            return i
    raise ValueError(f"{value} is in no bin")


@dataclass
class BinScore:
    """One bin of a breakdown: ``words`` scored in it, their UAS and LAS (percent); ``sentences`` only in the
    sentence-length breakdown."""

    bin: str
    words: int
    uas: float | None
    las: float | None
    sentences: int | None = None


@dataclass
class LabelScore:
    """Scores of one DEPREL (full string); precision/recall/F1 in percent."""

    label: str
    support: int
    predicted: int
    correct: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass
class EvalReport:
    """Everything :func:`evaluate` computes. Scores are percentages (``None`` when undefined); ``counts``
    holds the raw numerators and denominators."""

    gold_source: str
    pred_source: str
    sentences: int
    words: int
    punct_words: int
    uas: float | None
    las: float | None
    uas_no_punct: float | None
    las_no_punct: float | None
    clas_precision: float | None
    clas_recall: float | None
    clas_f1: float | None
    exact_uas: float | None
    exact_las: float | None
    upos: float | None = None  # tagging accuracy over words with a gold UPOS; meaningful when the input was untagged
    xpos: float | None = None  # likewise for XPOS, FEATS (all words) and lemmas
    feats: float | None = None
    lemma: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    per_label: list[LabelScore] = field(default_factory=list)
    by_sentence_length: list[BinScore] = field(default_factory=list)
    by_dependency_length: list[BinScore] = field(default_factory=list)
    by_span_length: list[BinScore] = field(default_factory=list)
    punct_rule: str = PUNCT_RULE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (unrounded floats, ``None`` for undefined scores)."""
        return asdict(self)

    def format_text(self) -> str:
        """A readable report: main scores, the punctuation rule, per-label scores and breakdowns."""
        c = self.counts

        def num(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f}"

        lines = [
            "spandep evaluation",
            f"gold: {self.gold_source}",
            f"pred: {self.pred_source}",
            f"sentences: {self.sentences}   words: {self.words}   punctuation words: {self.punct_words}",
            "",
            f"{'metric':<22}{'score':>8}   correct / total",
            f"{'UAS':<22}{num(self.uas):>8}   {c.get('uas_correct', 0)} / {self.words}",
            f"{'LAS':<22}{num(self.las):>8}   {c.get('las_correct', 0)} / {self.words}",
            f"{'UAS (no punct)':<22}{num(self.uas_no_punct):>8}   "
            f"{c.get('uas_correct_no_punct', 0)} / {c.get('words_no_punct', 0)}",
            f"{'LAS (no punct)':<22}{num(self.las_no_punct):>8}   "
            f"{c.get('las_correct_no_punct', 0)} / {c.get('words_no_punct', 0)}",
            f"{'CLAS F1':<22}{num(self.clas_f1):>8}   "
            f"P {num(self.clas_precision)} ({c.get('clas_correct', 0)} / {c.get('clas_predicted', 0)}), "
            f"R {num(self.clas_recall)} ({c.get('clas_correct', 0)} / {c.get('clas_gold', 0)})",
            f"{'exact match UAS':<22}{num(self.exact_uas):>8}   "
            f"{c.get('exact_uas_sentences', 0)} / {self.sentences} sentences",
            f"{'exact match LAS':<22}{num(self.exact_las):>8}   "
            f"{c.get('exact_las_sentences', 0)} / {self.sentences} sentences",
            *(
                f"{name + ' accuracy':<22}{num(getattr(self, column)):>8}   {c.get(column + '_correct', 0)} / "
                f"{c.get(column + '_gold', 0)}" + (" (meaningful when the parsed input had these columns blank)" if column == "upos" else "")
                for column, name in TAG_COLUMNS
            ),
            "",
            self.punct_rule,
            "LAS and CLAS compare the full DEPREL (subtypes included). Breakdowns include punctuation.",
            "",
            "Per label (correct = label and head right):",
            f"  {'label':<20}{'support':>8}{'predicted':>10}{'correct':>9}{'P':>8}{'R':>8}{'F1':>8}",
        ]
        for ls in self.per_label:
            lines.append(
                f"  {ls.label:<20}{ls.support:>8}{ls.predicted:>10}{ls.correct:>9}"
                f"{num(ls.precision):>8}{num(ls.recall):>8}{num(ls.f1):>8}"
            )
        for title, rows, with_sentences in (
            ("By sentence length (words)", self.by_sentence_length, True),
            ("By gold dependency length |head - dependent|", self.by_dependency_length, False),
            ("By gold subtree span length (hull size)", self.by_span_length, False),
        ):
            lines += ["", title + ":"]
            sentences_col = f"{'sentences':>10}" if with_sentences else ""
            lines.append(f"  {'bin':<8}{sentences_col}{'words':>8}{'UAS':>8}{'LAS':>8}")
            for b in rows:
                lines.append(
                    f"  {b.bin:<8}"
                    + (f"{b.sentences or 0:>10}" if with_sentences else "")
                    + f"{b.words:>8}{num(b.uas):>8}{num(b.las):>8}"
                )
        return "\n".join(lines) + "\n"


class _Acc:
    """Word count, correct heads and correct head+label for one bin."""

    __slots__ = ("words", "uas", "las", "sentences")

    def __init__(self) -> None:
        self.words = self.uas = self.las = self.sentences = 0

    def add(self, head_ok: bool, label_ok: bool) -> None:
        self.words += 1
        self.uas += head_ok
        self.las += label_ok

    def score(self, name: str, with_sentences: bool = False) -> BinScore:
        return BinScore(name, self.words, _pct(self.uas, self.words), _pct(self.las, self.words),
                        self.sentences if with_sentences else None)


def _universal(deprel: str) -> str:
    return deprel.split(":", 1)[0]


def same_words(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> bool:
    """Whether the two documents have the same sentences with the same word forms (:func:`evaluate`'s input)."""
    return len(gold) == len(pred) and all(g.forms == p.forms for g, p in zip(gold, pred))


def check_gold_tree(sentence: Sentence) -> None:
    """Raise :class:`InputFormatError` at the sentence's first line when its heads do not form a tree."""
    from spandep.data.trees import tree_problems

    problems = tree_problems(sentence.heads)
    if problems:
        raise InputFormatError(sentence.source, sentence.line, "gold heads do not form a tree: " + "; ".join(problems))


def evaluate(
    gold: Iterable[Sentence],
    pred: Iterable[Sentence],
    *,
    gold_source: str | None = None,
    pred_source: str | None = None,
) -> EvalReport:
    """Score ``pred`` against ``gold`` (see the module docstring for every metric).

    Sentences are aligned one to one and streamed. Raises :class:`InputFormatError` naming the prediction
    file and line when the sentence counts or the word forms differ, and naming the gold file and line
    when a gold sentence's heads do not form a tree. Predicted heads may be anything (``None`` = wrong).
    ``gold_source`` / ``pred_source`` name the inputs in messages and the report (default: the sentences'
    ``source``).
    """
    from spandep.data.trees import hull_spans

    all_words = _Acc()
    no_punct = _Acc()
    punct_words = 0
    clas_correct = clas_gold = clas_pred = 0
    exact_uas = exact_las = 0
    tag_gold: Counter[str] = Counter()
    tag_correct: Counter[str] = Counter()
    label_support: Counter[str] = Counter()
    label_pred: Counter[str] = Counter()
    label_correct: Counter[str] = Counter()
    by_len = [_Acc() for _ in SENTENCE_LENGTH_BINS]
    by_dep = [_Acc() for _ in DEPENDENCY_LENGTH_BINS]
    dep_root = _Acc()
    by_span = [_Acc() for _ in SPAN_LENGTH_BINS]

    g_src = gold_source
    p_src = pred_source
    n_sent = 0
    last_pred: Sentence | None = None
    pred_it = iter(pred)
    for g in gold:
        if g_src is None:
            g_src = g.source
        p = next(pred_it, None)
        if p is None:
            src = p_src or (last_pred.source if last_pred is not None else "<pred>")
            raise InputFormatError(
                src,
                last_pred.line if last_pred is not None else 0,
                f"prediction ends after {n_sent} sentences but the gold file has more "
                f"(gold sentence {n_sent + 1} at {g.source}:{g.line})",
            )
        if p_src is None:
            p_src = p.source
        last_pred = p
        n_sent += 1
        n = len(g.words)
        if len(p.words) != n:
            raise InputFormatError(
                p.source, p.line,
                f"sentence {n_sent} has {len(p.words)} words but the gold sentence ({g.source}:{g.line}) has {n}",
            )
        for i, (gw, pw) in enumerate(zip(g.words, p.words)):
            if gw.form != pw.form:
                raise InputFormatError(
                    p.source, p.line,
                    f"sentence {n_sent}, word {i + 1}: form {pw.form!r} differs from the gold form {gw.form!r} "
                    f"({g.source}:{g.line})",
                )
        check_gold_tree(g)
        gheads = g.heads
        spans = hull_spans(gheads)  # type: ignore[arg-type]

        len_acc = by_len[_bin_index(SENTENCE_LENGTH_BINS, n)]
        len_acc.sentences += 1
        all_uas = all_las = True
        for i, (gw, pw) in enumerate(zip(g.words, p.words)):
            dep = i + 1
            gh = gw.head
            assert gh is not None
            head_ok = pw.head == gh
            label_ok = head_ok and pw.deprel == gw.deprel
            all_uas = all_uas and head_ok
            all_las = all_las and label_ok
            all_words.add(head_ok, label_ok)
            for column, _ in TAG_COLUMNS:
                gold_value = getattr(gw, column)
                if gold_value != "_" or column == "feats":
                    tag_gold[column] += 1
                    tag_correct[column] += getattr(pw, column) == gold_value
            if is_punct(gw):
                punct_words += 1
            else:
                no_punct.add(head_ok, label_ok)
            if _universal(gw.deprel) not in CLAS_FUNCTION_RELATIONS:
                clas_gold += 1
                clas_correct += label_ok
            if _universal(pw.deprel) not in CLAS_FUNCTION_RELATIONS:
                clas_pred += 1
            label_support[gw.deprel] += 1
            label_pred[pw.deprel] += 1
            if label_ok:
                label_correct[gw.deprel] += 1
            len_acc.add(head_ok, label_ok)
            if gh == 0:
                dep_root.add(head_ok, label_ok)
            else:
                by_dep[_bin_index(DEPENDENCY_LENGTH_BINS, abs(gh - dep))].add(head_ok, label_ok)
            lo, hi = spans[i]
            by_span[_bin_index(SPAN_LENGTH_BINS, hi - lo + 1)].add(head_ok, label_ok)
        exact_uas += all_uas
        exact_las += all_las

    extra = next(pred_it, None)
    if extra is not None:
        raise InputFormatError(
            extra.source, extra.line,
            f"prediction has more sentences than the gold file ({n_sent}); this is sentence {n_sent + 1}",
        )

    per_label = [
        LabelScore(
            label=label,
            support=label_support[label],
            predicted=label_pred[label],
            correct=label_correct[label],
            precision=_pct(label_correct[label], label_pred[label]),
            recall=_pct(label_correct[label], label_support[label]),
            f1=_f1(label_correct[label], label_pred[label], label_support[label]),
        )
        for label in sorted(set(label_support) | set(label_pred), key=lambda lab: (-label_support[lab], lab))
    ]
    counts = {
        "uas_correct": all_words.uas,
        "las_correct": all_words.las,
        "words_no_punct": no_punct.words,
        "uas_correct_no_punct": no_punct.uas,
        "las_correct_no_punct": no_punct.las,
        "clas_correct": clas_correct,
        "clas_gold": clas_gold,
        "clas_predicted": clas_pred,
        "exact_uas_sentences": exact_uas,
        "exact_las_sentences": exact_las,
        **{f"{column}_{kind}": counter[column] for column, _ in TAG_COLUMNS for kind, counter in (("gold", tag_gold), ("correct", tag_correct))},
    }
    return EvalReport(
        gold_source=g_src or "<gold>",
        pred_source=p_src or "<pred>",
        sentences=n_sent,
        words=all_words.words,
        punct_words=punct_words,
        uas=_pct(all_words.uas, all_words.words),
        las=_pct(all_words.las, all_words.words),
        uas_no_punct=_pct(no_punct.uas, no_punct.words),
        las_no_punct=_pct(no_punct.las, no_punct.words),
        clas_precision=_pct(clas_correct, clas_pred),
        clas_recall=_pct(clas_correct, clas_gold),
        clas_f1=_f1(clas_correct, clas_pred, clas_gold),
        exact_uas=_pct(exact_uas, n_sent),
        exact_las=_pct(exact_las, n_sent),
        **{column: _pct(tag_correct[column], tag_gold[column]) for column, _ in TAG_COLUMNS},  # type: ignore[arg-type]
        counts=counts,
        per_label=per_label,
        by_sentence_length=[acc.score(name, True) for (name, _, _), acc in zip(SENTENCE_LENGTH_BINS, by_len)],
        by_dependency_length=[dep_root.score(ROOT_BIN)]
        + [acc.score(name) for (name, _, _), acc in zip(DEPENDENCY_LENGTH_BINS, by_dep)],
        by_span_length=[acc.score(name) for (name, _, _), acc in zip(SPAN_LENGTH_BINS, by_span)],
    )
