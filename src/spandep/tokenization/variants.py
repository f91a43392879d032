"""Typographic, casing and layout variants of gold paragraphs, their token and sentence spans moved along.

A paragraph is rewritten as its :class:`Layout`: the whitespace before each token, the token, ..., and the whitespace
after the last one. A rewriting gives every token a new string of any length (``...`` → ``…``, ``ß`` → ``SS``) and
every gap new whitespace (a space → a no-break space), then the text and the spans are rebuilt by concatenation: each
token span is exactly its token's new string and each sentence ends at the same token, whatever the lengths.

- :func:`typeset`: one language's typography (``benchmarks/scripts/typographic_variants.py``): apostrophes ``'`` →
  ``’`` (an opening lone ``'`` → ``‘``), straight double quotes → the language's pair (:data:`QUOTES`; opening or
  closing as the spaces around them say, else alternating), a lone ``-`` / ``--`` between spaces → ``–`` / ``—``,
  ``...`` → ``…``, a seeded share of the single spaces inside a sentence → U+00A0, and in French a no-break space
  before ``: »`` and after ``«``, a narrow one before ``; ! ?``;
- :func:`augment`: a random variant for training (``spandep train-tokenizer --augment``): the same substitutions
  with random forms (apostrophes ``’ ‘ ʼ``, quotes ``“ ” „ « » ‹ ›``, dashes ``– —``), each occurrence rewritten
  with probability :data:`SUBSTITUTE`, no-break and narrow no-break spaces, sometimes full-width punctuation and
  digits, title case or all capitals; a sentence with a CJK character (``corpus.cjk_char``) is typeset as CJK text
  is in half the draws (:data:`CJK_FULLWIDTH` of its ASCII marks full-width, a lone ``.`` as ``。``);
- :func:`training_paragraphs`: an epoch's training paragraphs, a share of their sentences rewritten by
  :func:`augment` (a rewritten sentence where a CJK character meets the space before it loses that space in half
  the draws: Chinese and Japanese put none between sentences) and some paragraphs joined to the one before with
  one space (no paragraph break), drawn from the seed and the epoch.

Only the text a tokenizer learns from changes; a tokenizer still returns the user's characters (docs/tokenizer.md).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from spandep.tokenization.corpus import GoldParagraph, cjk_char
from spandep.tokenization.text import SentenceSpans, TokenSpan

__all__ = ["QUOTES", "Layout", "Style", "augment", "joined", "training_paragraphs", "typeset"]

QUOTES = {"en": "“”", "fr": "«»", "it": "«»", "cs": "„“", "ru": "«»", "no": "«»"}  # opening, closing double quotes
NBSP, NARROW_NBSP = "\u00a0", "\u202f"
SUBSTITUTE = 0.9  # augment: the chance that each straight form of an augmented paragraph is rewritten
JOIN = 0.5  # training_paragraphs: the chance, relative to the augment rate, that a paragraph joins the one before
CJK_FULLWIDTH = 0.9  # augment: the chance of each ASCII mark of a sentence typeset as CJK text becoming full-width
_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~0123456789"}


@dataclass(frozen=True)
class Style:
    """The typographic forms a rewriting puts in: ``apostrophe``, ``single`` and ``double`` quote pairs (opening,
    closing), the ``dashes`` for a spaced ``-`` and ``--``, each straight form rewritten with probability ``rate``;
    ``nbsp``: the chance of a space inside a sentence becoming a no-break one; ``french``: no-break spaces around
    ``« » : ; ! ?``; ``fullwidth``: the chance of an ASCII punctuation mark or digit becoming full-width (and, with
    ``cjk``, of a lone ``.`` becoming the ideographic full stop ``。``)."""

    apostrophe: str = "’"
    single: str = "‘’"
    double: str = "“”"
    dashes: str = "–—"
    rate: float = 1.0
    nbsp: float = 0.0
    french: bool = False
    fullwidth: float = 0.0
    cjk: bool = False


@dataclass(frozen=True)
class Layout:
    """A paragraph as ``gaps`` (whitespace: before each token and after the last) and ``tokens``, with each token's
    multiword ``words`` and the ``lengths`` of its sentences in tokens."""

    gaps: tuple[str, ...]
    tokens: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]
    lengths: tuple[int, ...]

    @classmethod
    def of(cls, paragraph: GoldParagraph) -> "Layout":
        spans = [t for sentence in paragraph.sentences for t in sentence]
        bounds = [0, *(x for t in spans for x in (t.start, t.end)), len(paragraph.text)]
        gaps = tuple(paragraph.text[a:b] for a, b in zip(bounds[::2], bounds[1::2]))
        tokens = tuple(paragraph.text[t.start : t.end] for t in spans)
        return cls(gaps, tokens, tuple(t.words for t in spans), tuple(len(s) for s in paragraph.sentences))

    def paragraph(self) -> GoldParagraph:
        """The paragraph this layout spells: its text and token spans."""
        text, spans = self.gaps[0], []
        for token, words, gap in zip(self.tokens, self.words, self.gaps[1:]):
            spans.append(TokenSpan(len(text), len(text) + len(token), words))
            text += token + gap
        cuts = [sum(self.lengths[:k]) for k in range(len(self.lengths) + 1)]
        return GoldParagraph(text, [spans[a:b] for a, b in zip(cuts, cuts[1:])])

    def inner_gaps(self) -> list[int]:
        """The indices of the gaps inside a sentence (between two of its tokens)."""
        ends = {sum(self.lengths[: k + 1]) for k in range(len(self.lengths))}
        return [i for i in range(1, len(self.tokens)) if i not in ends]


def _quote(form: str, j: int, tight_before: bool, tight_after: bool, pair: str, is_open: bool) -> tuple[str, bool]:
    """The quote mark for a straight quote at ``form[j]`` and whether a quote is open after it: closing when only its
    left side touches a character, opening when only its right side does, else the opposite of ``is_open``."""
    left = j > 0 or tight_before
    right = j < len(form) - 1 or tight_after
    opening = not is_open if left == right else right
    return pair[0 if opening else 1], opening


def _token(form: str, tight_before: bool, tight_after: bool, style: Style, rng: random.Random, state: dict[str, bool]) -> str:
    """``form`` in ``style``; ``tight_before``/``tight_after``: whether a character touches it on that side;
    ``state`` holds whether a double quote is open, across the paragraph."""

    def chosen() -> bool:
        return style.rate >= 1.0 or rng.random() < style.rate

    if style.cjk and form == "." and rng.random() < style.fullwidth:
        return "。"
    if not (tight_before or tight_after) and form in ("-", "--") and chosen():
        return style.dashes[len(form) - 1]
    form = form.replace("...", "…") if "..." in form and chosen() else form
    out = []
    for j, c in enumerate(form):
        if c == '"' and chosen():
            c, state["double"] = _quote(form, j, tight_before, tight_after, style.double, state["double"])
        elif c == "'" and chosen():
            lone = len(form) == 1 and not tight_before and tight_after
            c = style.single[0] if lone else style.apostrophe
        elif c in _FULLWIDTH and style.fullwidth and rng.random() < style.fullwidth:
            c = _FULLWIDTH[c]
        out.append(c)
    return "".join(out)


def _words(words: tuple[str, ...], style: Style) -> tuple[str, ...]:
    """A multiword token's words with the apostrophes its surface form got."""
    return tuple(w.replace("'", style.apostrophe) for w in words)


def _spaces(layout: Layout, style: Style, rng: random.Random) -> tuple[str, ...]:
    """The gaps with no-break spaces: French punctuation spacing, then a share ``style.nbsp`` of the single spaces
    inside a sentence."""
    gaps = list(layout.gaps)
    for i in layout.inner_gaps():
        if gaps[i] != " ":
            continue
        left, right = layout.tokens[i - 1], layout.tokens[i]
        if style.french and right[:1] in ";!?":
            gaps[i] = NARROW_NBSP
        elif style.french and (right[:1] in ":»" or left[-1:] == "«"):
            gaps[i] = NBSP
        elif style.nbsp and rng.random() < style.nbsp:
            gaps[i] = NBSP
    return tuple(gaps)


def restyled(layout: Layout, style: Style, rng: random.Random) -> Layout:
    """``layout`` with its tokens, multiword words and gaps in ``style`` (the module docstring)."""
    state = {"double": False}
    n = len(layout.tokens)
    tokens = tuple(
        _token(t, i > 0 and not layout.gaps[i], i < n - 1 and not layout.gaps[i + 1], style, rng, state)
        for i, t in enumerate(layout.tokens)
    )
    words = tuple(_words(w, style) if new != old else w for w, new, old in zip(layout.words, tokens, layout.tokens))
    styled = replace(layout, tokens=tokens, words=words)
    return replace(styled, gaps=_spaces(styled, style, rng))


def typeset(paragraph: GoldParagraph, language: str, seed: int, nbsp: float = 0.1) -> GoldParagraph:
    """``paragraph`` as typeset in ``language`` (the module docstring); the same for the same ``seed``."""
    style = Style(double=QUOTES.get(language, "“”"), nbsp=nbsp, french=language == "fr")
    return restyled(Layout.of(paragraph), style, random.Random(f"typeset/{seed}")).paragraph()


def _cased(layout: Layout, rng: random.Random) -> Layout:
    """Title case (each token's first letter capitalised) or all capitals, or the layout as it is."""
    draw = rng.random()
    if draw < 0.1:
        return replace(layout, tokens=tuple(t.upper() for t in layout.tokens),
                       words=tuple(tuple(w.upper() for w in ws) for ws in layout.words))
    if draw < 0.2:
        return replace(layout, tokens=tuple(map(_title, layout.tokens)),
                       words=tuple((_title(ws[0]), *ws[1:]) if ws else ws for ws in layout.words))
    return layout


def _title(form: str) -> str:
    return form[:1].upper() + form[1:]


def augment(paragraph: GoldParagraph, rng: random.Random) -> GoldParagraph:
    """A random typographic and casing variant of ``paragraph`` (the module docstring)."""
    double = rng.choice(("“”", "„“", "„”", "«»", "»«", "‹›", "””"))
    style = Style(
        apostrophe=rng.choice("’’’‘ʼ"), single=rng.choice(("‘’", "‚‘", "‹›")), double=double,
        dashes=rng.choice(("–—", "——", "––")), rate=SUBSTITUTE, nbsp=rng.choice((0.0, 0.1, 0.5)),
        french=rng.random() < 0.2, fullwidth=0.5 if rng.random() < 0.1 else 0.0,
    )
    if _typeset_as_cjk(paragraph, rng):
        style = replace(style, fullwidth=CJK_FULLWIDTH, cjk=True)
    return _cased(restyled(Layout.of(paragraph), style, rng), rng).paragraph()


def _typeset_as_cjk(paragraph: GoldParagraph, rng: random.Random) -> bool:
    """Whether :func:`augment` typesets ``paragraph`` as CJK text: half the draws for one with a CJK character (no
    draw for any other, so their variants are those drawn before CJK typesetting was added)."""
    return any(cjk_char(c) for c in paragraph.text) and rng.random() < 0.5


def _concat(parts: list[tuple[str, GoldParagraph]]) -> GoldParagraph:
    """One paragraph of ``parts``, each (the whitespace before it, a paragraph), their spans moved along."""
    texts: list[str] = []
    sentences: list[SentenceSpans] = []
    offset = 0
    for gap, part in parts:
        offset += len(gap)
        sentences.extend([TokenSpan(t.start + offset, t.end + offset, t.words) for t in s] for s in part.sentences)
        texts.extend((gap, part.text))
        offset += len(part.text)
    return GoldParagraph("".join(texts), sentences)


def _sentences(paragraph: GoldParagraph) -> list[tuple[str, GoldParagraph]]:
    """Each sentence of ``paragraph`` as a paragraph of its own, with the whitespace before it (what
    :func:`_concat` joins back into ``paragraph``)."""
    parts, end = [], 0
    for s in paragraph.sentences:
        a, b = s[0].start, s[-1].end
        parts.append((paragraph.text[end:a], GoldParagraph(paragraph.text[a:b], [[replace(t, start=t.start - a, end=t.end - a) for t in s]])))
        end = b
    return parts


def _unspaced(before: str, sentence: str, rng: random.Random) -> bool:
    """Whether an augmented ``sentence`` follows the one ``before`` it without the space between them: half the
    draws where a CJK character meets the gap (no draw elsewhere)."""
    return (cjk_char(before[-1]) or cjk_char(sentence[0])) and rng.random() < 0.5


def joined(first: GoldParagraph, second: GoldParagraph) -> GoldParagraph:
    """The two paragraphs as one, their texts joined by one space."""
    return _concat([("", first), (" ", second)])


def training_paragraphs(paragraphs: list[GoldParagraph], rate: float, seed: int, epoch: int) -> list[GoldParagraph]:
    """An epoch's training paragraphs: each sentence rewritten by :func:`augment` with probability ``rate`` (a
    sentence, not a paragraph: fr_sequoia's whole training file is one paragraph; a rewritten CJK sentence sometimes
    without the space before it, :func:`_unspaced`), and each paragraph joined to the one before with probability
    ``rate * JOIN``; drawn from ``seed`` and ``epoch`` alone."""
    if rate <= 0:
        return paragraphs
    rng = random.Random(f"augment/{seed}/{epoch}")
    out: list[GoldParagraph] = []
    for p in paragraphs:
        parts: list[tuple[str, GoldParagraph]] = []
        for gap, s in _sentences(p):
            if rng.random() < rate:
                s = augment(s, rng)
                gap = "" if parts and gap == " " and _unspaced(parts[-1][1].text, s.text, rng) else gap
            parts.append((gap, s))
        whole = _concat(parts)
        if out and rng.random() < rate * JOIN:
            out[-1] = joined(out[-1], whole)
        else:
            out.append(whole)
    return out
