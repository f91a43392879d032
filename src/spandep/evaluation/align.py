"""Two CoNLL-U files seen as one text, and their words aligned by the CoNLL 2018 shared-task definition.

A file is read as the characters of its tokens' FORMs with the Unicode space separators (category Zs) taken
out; both files must spell the same characters. Every token (a word outside any multiword token, or a
multiword-token range line) and every sentence becomes a span ``[start, end)`` of character offsets into that
text. A word inside a multiword token carries the span of its whole token. Empty nodes are left out.

Word alignment walks both word lists left to right:

* two words outside multiword tokens are aligned when their spans are equal; otherwise the one that starts
  first (gold on a tie) is passed over;
* when either current word lies in a multiword token, the region of text is grown until every multiword token
  touching it, in either file, lies inside it; the words of the region are then aligned by a longest common
  subsequence of their lowercased FORMs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from spandep.data.sentence import Sentence, Token
from spandep.errors import InputFormatError

__all__ = ["ROOT", "Span", "SpanWord", "SpanDocument", "Alignment", "span_document", "check_same_text", "align_words"]

ROOT = -1  # SpanWord.head of a word attached to the root
CONTEXT = 20  # characters quoted from each file when their texts differ


@dataclass(frozen=True)
class Span:
    """Characters ``[start, end)`` of a file's whitespace-free text; ``line`` is where the span starts (1-based)."""

    start: int
    end: int
    line: int


@dataclass(frozen=True)
class SpanWord:
    """A syntactic word placed in the text. ``token`` is its token's span (the whole multiword token for a word
    inside one, ``in_mwt``); ``form`` is what the alignment compares: the FORM, with the space separators taken
    out for a word that is its own token (as its text is); ``head`` is the index of its head in the document's
    word list, :data:`ROOT`, or ``None`` where HEAD is ``_``; ``ufeats`` keeps only the universal features,
    sorted; ``udeprel`` is the DEPREL without its subtype."""

    word: Token
    token: Span
    in_mwt: bool
    form: str
    head: int | None
    ufeats: str
    udeprel: str


@dataclass(frozen=True)
class SpanDocument:
    """A CoNLL-U file as text, tokens, sentences and words (all in file order)."""

    source: str
    text: str
    tokens: list[Span]
    sentences: list[Span]
    words: list[SpanWord]


@dataclass(frozen=True)
class Alignment:
    """Aligned ``(gold index, system index)`` pairs in increasing order, and the gold word each system word is
    aligned to (``None`` where it is not)."""

    pairs: list[tuple[int, int]]
    system_to_gold: list[int | None]


# The features the CoNLL 2018 task scored in UFeats, AllTags and MLAS; the others are ignored there.
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number", "Case", "Definite",
    "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident", "Polarity", "Person", "Polite",
})


def universal_features(feats: str) -> str:
    """``feats`` reduced to the universal features of :data:`UNIVERSAL_FEATURES`, sorted and joined by ``|``."""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


def _without_spaces(form: str) -> str:
    return "".join(ch for ch in form if unicodedata.category(ch) != "Zs")


def span_document(sentences: Iterable[Sentence], source: str) -> SpanDocument:
    """Place the words of ``sentences`` (as read by :func:`~spandep.data.conllu.read_conllu`) in their text."""
    pieces: list[str] = []
    tokens: list[Span] = []
    spans: list[Span] = []
    words: list[SpanWord] = []
    offset = 0
    for sent in sentences:
        first_word = len(words)
        sentence_start = offset
        line = sent.line + len(sent.comments)
        extra = sorted(sent.extra_lines, key=lambda e: e[0])
        k = 0
        mwt: Span | None = None
        mwt_last = 0  # ID of the last word of the current multiword token
        for i, w in enumerate(sent.words):
            while k < len(extra) and extra[k][0] <= i:
                cols = extra[k][1].split("\t")
                if not cols[0].startswith("#") and "-" in cols[0]:
                    form = _without_spaces(cols[1])
                    mwt = Span(offset, offset + len(form), line)
                    mwt_last = int(cols[0].split("-")[1])
                    tokens.append(mwt)
                    pieces.append(form)
                    offset = mwt.end
                k += 1
                line += 1
            if mwt is not None and w.id <= mwt_last:
                token, in_mwt, form = mwt, True, w.form
            else:
                form = _without_spaces(w.form)
                token, in_mwt = Span(offset, offset + len(form), line), False
                tokens.append(token)
                pieces.append(form)
                offset = token.end
            head = None if w.head is None else ROOT if w.head == 0 else first_word + w.head - 1
            udeprel = w.deprel.split(":", 1)[0]
            words.append(SpanWord(w, token, in_mwt, form, head, universal_features(w.feats), udeprel))
            line += 1
        spans.append(Span(sentence_start, offset, sent.line))
    return SpanDocument(source, "".join(pieces), tokens, spans, words)


def _line_at(doc: SpanDocument, offset: int) -> int:
    """The line of the token holding character ``offset`` (the last token's when the text ends before it)."""
    for token in doc.tokens:
        if token.end > offset:
            return token.line
    return doc.tokens[-1].line if doc.tokens else 0


def check_same_text(gold: SpanDocument, system: SpanDocument) -> None:
    """Raise :class:`InputFormatError` at the first character where the two texts differ, naming the line of
    that character in both files and quoting what follows it in each."""
    if gold.text == system.text:
        return
    shorter = min(len(gold.text), len(system.text))
    at = next((i for i, (a, b) in enumerate(zip(gold.text, system.text)) if a != b), shorter)
    raise InputFormatError(
        system.source,
        _line_at(system, at),
        f"the files do not spell the same characters (spaces aside): the first difference is character {at + 1}, "
        f"at {gold.source}:{_line_at(gold, at)} in the gold file: gold has {gold.text[at:at + CONTEXT]!r}, "
        f"system has {system.text[at:at + CONTEXT]!r}",
    )


def _in_region(words: list[SpanWord], i: int, end: int) -> bool:
    """Whether ``words[i]`` still belongs to a multiword region that currently ends at character ``end``."""
    if i >= len(words):
        return False
    w = words[i]
    return w.token.start < end if w.in_mwt else w.token.end <= end


def _region(gold: list[SpanWord], system: list[SpanWord], g: int, s: int) -> tuple[int, int, int, int]:
    """The multiword region that starts at ``gold[g]`` / ``system[s]`` (one of which is in a multiword token):
    ``(g0, g1, s0, s1)`` so that the region's words are ``gold[g0:g1]`` and ``system[s0:s1]``. A plain word of
    the other file that starts before the multiword token it meets is left out of the region."""
    if gold[g].in_mwt:
        end = gold[g].token.end
        if not system[s].in_mwt and system[s].token.start < gold[g].token.start:
            s += 1
    else:
        end = system[s].token.end
        if gold[g].token.start < system[s].token.start:
            g += 1
    g0, s0 = g, s
    while _in_region(gold, g, end) or _in_region(system, s, end):
        if g < len(gold) and (s >= len(system) or gold[g].token.start <= system[s].token.start):
            w, g = gold[g], g + 1
        else:
            w, s = system[s], s + 1
        if w.in_mwt:
            end = max(end, w.token.end)
    return g0, g, s0, s


def _lcs_pairs(gold: list[str], system: list[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of two lists of forms; at each step a match is taken when the
    two current forms are equal, else a gold form is passed over when that keeps the subsequence longest."""
    n, m = len(gold), len(system)
    # best[i][j]: length of a longest common subsequence of gold[i:] and system[j:]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = best[i + 1][j + 1] + 1 if gold[i] == system[j] else max(best[i + 1][j], best[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if gold[i] == system[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def align_words(gold: list[SpanWord], system: list[SpanWord]) -> Alignment:
    """Align the words of two documents that spell the same text (see the module docstring)."""
    pairs: list[tuple[int, int]] = []
    g = s = 0
    while g < len(gold) and s < len(system):
        gw, sw = gold[g], system[s]
        if gw.in_mwt or sw.in_mwt:
            g0, g, s0, s = _region(gold, system, g, s)
            forms_g = [w.form.lower() for w in gold[g0:g]]
            forms_s = [w.form.lower() for w in system[s0:s]]
            pairs.extend((g0 + i, s0 + j) for i, j in _lcs_pairs(forms_g, forms_s))
        elif (gw.token.start, gw.token.end) == (sw.token.start, sw.token.end):
            pairs.append((g, s))
            g, s = g + 1, s + 1
        elif gw.token.start <= sw.token.start:
            g += 1
        else:
            s += 1
    system_to_gold: list[int | None] = [None] * len(system)
    for gi, si in pairs:
        system_to_gold[si] = gi
    return Alignment(pairs, system_to_gold)
