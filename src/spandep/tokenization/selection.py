"""Quick dev scores for choosing epochs and decoding settings while training a tokenizer.

Both sides are token spans over the same text, so no character alignment is needed: a token (or a sentence) is
right where its span is the gold one; the words of a token with the right span are matched by their longest
common subsequence (lowercased), as the CoNLL 2018 scorer matches the words inside a multiword token. A word of a
token with a wrong span counts as wrong, which the official scorer sometimes forgives (overlapping multiword
tokens): figures reported anywhere come from the official scorer (``benchmarks/scripts/tokenizer_scores.py``), not from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from spandep.tokenization.corpus import GoldParagraph
from spandep.tokenization.text import SentenceSpans, TokenSpan

__all__ = ["DevScores", "gold_sentences", "span_scores"]


@dataclass(frozen=True)
class DevScores:
    """F1 (percent) of tokens, sentences and words."""

    tokens: float
    sentences: float
    words: float

    @property
    def total(self) -> float:
        """What model selection maximises: words F1 plus sentences F1."""
        return self.words + self.sentences


def gold_sentences(paragraphs: list[GoldParagraph]) -> list[SentenceSpans]:
    """The gold sentences of ``paragraphs`` with offsets into their :func:`~.corpus.raw_text`."""
    out: list[SentenceSpans] = []
    offset = 0
    for p in paragraphs:
        for spans in p.sentences:
            out.append([TokenSpan(t.start + offset, t.end + offset, t.words) for t in spans])
        offset += len(p.text) + 2
    return out


def _f1(correct: int, gold: int, system: int) -> float:
    return 200.0 * correct / (gold + system) if gold + system else 100.0


def _lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


def _words(text: str, token: TokenSpan) -> list[str]:
    return [w.lower() for w in token.words] if token.words else [text[token.start : token.end].lower()]


def span_scores(text: str, gold: list[SentenceSpans], system: list[SentenceSpans]) -> DevScores:
    """Scores of ``system`` against ``gold`` sentences over the same ``text`` (module docstring)."""
    gold_tokens = {(t.start, t.end): t for s in gold for t in s}
    system_tokens = {(t.start, t.end): t for s in system for t in s}
    right = gold_tokens.keys() & system_tokens.keys()
    n_gold_words = sum(len(_words(text, t)) for t in gold_tokens.values())
    n_system_words = sum(len(_words(text, t)) for t in system_tokens.values())
    right_words = sum(_lcs(_words(text, gold_tokens[k]), _words(text, system_tokens[k])) for k in right)
    gold_sents = {(s[0].start, s[-1].end) for s in gold}
    system_sents = {(s[0].start, s[-1].end) for s in system}
    return DevScores(
        _f1(len(right), len(gold_tokens), len(system_tokens)),
        _f1(len(gold_sents & system_sents), len(gold_sents), len(system_sents)),
        _f1(right_words, n_gold_words, n_system_words),
    )
