"""Sentences of any length in bounded memory: one longer than :data:`LONG_SENTENCE_WORDS` words is parsed in
overlapping windows of :data:`WINDOW_WORDS` words, merged into one tree (docs/design.md, "Long sentences").

A sentence's own parse costs memory that grows with the square of its length (its n × n arc or span tables); a
window costs ``WINDOW_WORDS``² whatever the sentence, and the windows are parsed :data:`GROUP_WORDS` words at a
time, so what a long sentence keeps grows with its length only (a few numbers per word and arc). Every word comes
back with a head, a label and its heads' columns; the tree is ``spandep.decoding.windows.merge_windows``'s. Shorter
sentences go to the model as they always did, all in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from spandep.data.sentence import Sentence
from spandep.errors import InputFormatError
from spandep.decoding.windows import ProposedArcs, core_windows, merge_windows, windows
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.base import Parse, Parser, fallback_labels
from spandep.models.confidence import ChosenArcScores

__all__ = ["GROUP_WORDS", "LONG_SENTENCE_WORDS", "WINDOW_WORDS", "check_kept_length", "parse_long", "parse_sentences"]

LONG_SENTENCE_WORDS = 1000  # a longer sentence is parsed in windows (a 1,000-word parse costs tens of MB)
WINDOW_WORDS = 100  # words per window, overlapping by half (of 100, 200 and 500 the most accurate and not the slowest)
GROUP_WORDS = 500  # a long sentence's windows go to the model this many words at a time (five windows)


def parse_sentences(
    model: Parser,
    sentences: Sequence[Sentence],
    options: InferenceOptions | None = None,
    stats: InferenceStats | None = None,
    long_words: int = LONG_SENTENCE_WORDS,
    window_words: int = WINDOW_WORDS,
) -> list[Parse]:
    """``model.parse`` of ``sentences`` (input order), those of more than ``long_words`` words by :func:`parse_long`
    in windows of ``window_words``; the others in one ``model.parse`` call, as without this function. A long sentence
    whose heads ``options.keep`` would keep is an :class:`InputFormatError`: windows do not keep given heads."""
    long = {i for i, s in enumerate(sentences) if len(s) > long_words}
    for i in sorted(long):
        check_kept_length(sentences[i], options, long_words)
    if not long:
        return model.parse(sentences, options, stats)
    short = [i for i in range(len(sentences)) if i not in long]
    results: list[Parse] = [Parse([], []) for _ in sentences]
    if short:
        for i, parse in zip(short, model.parse([sentences[i] for i in short], options, stats)):
            results[i] = parse
    for i in sorted(long):
        results[i] = parse_long(model, sentences[i], options, stats, window_words)
    return results


def check_kept_length(sentence: Sentence, options: InferenceOptions | None, long_words: int = LONG_SENTENCE_WORDS) -> None:
    """An :class:`InputFormatError` for a sentence of more than ``long_words`` words whose given heads (or ``#
    subtrees``) ``options.keep`` keeps: its windows would not keep them."""
    given = any(h is not None for h in sentence.heads) or sentence.comment("subtrees") is not None
    if len(sentence) > long_words and options is not None and options.keep and given:
        raise InputFormatError(
            sentence.source, sentence.line,
            f"a sentence of {len(sentence)} words with given heads: heads are kept in sentences of up to {long_words:,} words; split it",
        )


def _window(sentence: Sentence, start: int, end: int) -> Sentence:
    """Words ``start..end - 1`` (0-based) of ``sentence`` as a sentence of their own (ids from 1)."""
    return Sentence([replace(w, id=j) for j, w in enumerate(sentence.words[start:end], start=1)])


def parse_long(
    model: Parser,
    sentence: Sentence,
    options: InferenceOptions | None = None,
    stats: InferenceStats | None = None,
    window_words: int = WINDOW_WORDS,
) -> Parse:
    """One tree over every word of ``sentence`` from its windows' parses (``spandep.decoding.windows``): each word's
    label, head probability, label probability and heads' columns come from the window whose arc it keeps (its
    columns from its core window); a fallback arc gets the fallback label and probabilities 0. The parse has scores
    when every window had them. ``stats`` counts the sentence once, its windows' other counters, and ``windowed``."""
    n = len(sentence)
    spans = windows(n, window_words)
    core = core_windows(n, spans)  # (n,)
    root_label, other_label = fallback_labels(model.label_names(options or InferenceOptions()))
    dep, head, prob, label_prob, is_core = [], [], [], [], []  # per proposed arc: numpy arrays, one per window
    labels: list[str] = []  # per proposed arc
    columns: dict[str, list[str]] = {}
    scored = True
    run = InferenceStats()
    per_call = max(1, GROUP_WORDS // window_words)
    indexed = list(enumerate(spans))
    for first in range(0, len(spans), per_call):
        group = indexed[first : first + per_call]
        parses = model.parse([_window(sentence, a, b) for _, (a, b) in group], options, run)
        for (w, (a, b)), parse in zip(group, parses):
            local = np.asarray(parse.heads, dtype=np.int64)  # (b - a,)
            dep.append(np.arange(a + 1, b + 1))  # (b - a,)
            head.append(np.where(local > 0, local + a, 0))  # (b - a,)
            scored = scored and parse.scores is not None
            ones = np.ones(b - a)  # (b - a,)
            prob.append(ones if parse.scores is None else parse.scores.head_probs(local))  # (b - a,)
            label_prob.append(ones if parse.scores is None else np.asarray(parse.scores.label_probs))  # (b - a,)
            labels.extend(parse.labels)
            mine = core[a:b] == w  # (b - a,)
            is_core.append(mine)
            for name, values in parse.columns.items():
                column = columns.setdefault(name, ["_"] * n)
                for j in np.flatnonzero(mine).tolist():
                    column[a + j] = values[j]
    arcs = ProposedArcs(n, np.concatenate(dep), np.concatenate(head), np.concatenate(prob), np.concatenate(is_core))
    heads, chosen = merge_windows(arcs)  # (1 + n,) each
    kept = chosen[1:]  # (n,): each word's arc, -1 for a fallback arc
    at = np.maximum(kept, 0)  # (n,)
    head_p = np.where(kept >= 0, arcs.prob[at], 0.0)  # (n,)
    label_p = np.where(kept >= 0, np.concatenate(label_prob)[at], 0.0)  # (n,)
    word_labels = [
        labels[j] if j >= 0 else (root_label if h == 0 else other_label) for j, h in zip(kept.tolist(), heads[1:].tolist())
    ]
    scores = ChosenArcScores(heads[1:], head_p, label_p) if scored else None
    if stats is not None:
        stats.add(replace(run, sentences=1, windowed=1))
    return Parse(heads[1:].tolist(), word_labels, columns, scores)
