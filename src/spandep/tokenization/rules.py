"""The rule fallback: lossless tokens and sentences for a model that has no trained tokenizer.

Tokens. Text is cut at whitespace, then each run of other characters is cut into:

- URLs (``scheme://...``, ``www....``) and e-mail addresses, whole (trailing ``.,;:!?`` left out);
- words: letters, digits and marks, joined through an inner hyphen, underscore, apostrophe or dot
  ("search-engine", "snake_case", "don't", "e.g", "site.org"; a dot only before a lowercase letter or a digit,
  or after a part of at most two characters, so "end.Next" splits), and through ``, : /`` between digits
  ("1,000", "10:30"); a final dot stays on a known abbreviation ("Dr.", "etc."), on a word with an inner dot
  ("Ph.D.", "U.S.") and on a single letter ("J.");
- each Han character alone; runs of kana together;
- any other character alone, except that a run of the same punctuation ("...", "--", "!!") or of ``.!?`` stays one.

Combining marks, format characters (ZWJ, ZWSP, soft hyphen, ...), variation selectors and emoji modifiers stay
with the character before them, so no token starts with one unless the run does.

Sentences end after a token of ``.!?…`` (and the like in other scripts), with closing quotes and brackets glued
to it, when whitespace and a token that does not start with a lowercase letter follow; after ``。！？`` even without
whitespace; and at every paragraph end.
"""

from __future__ import annotations

import re
import unicodedata

from spandep.tokenization.text import EMOJI_MODIFIERS, Paragraph, SentenceSpans, TokenSpan, Tokenizer

__all__ = ["RuleTokenizer", "rule_tokens"]

_CHUNK = re.compile(r"\S+")
_MODIFIER = re.compile(f"[{EMOJI_MODIFIERS}]")
_LINK = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]{0,15}://|www\.)[^\s<>\"'`(){}\[\]]+"  # URL
    r"|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+"  # e-mail (bounded parts: linear time on long runs)
)
_LINK_TRAIL = ".,;:!?"
_JOINERS = frozenset("-\u2010\u2011_'\u2019.\u00b7")
_DIGIT_JOINERS = frozenset(",:/")
_ATTACHING = frozenset(("Mn", "Mc", "Me", "Cf"))
_TERMINAL = frozenset(".!?\u2026\u3002\uff01\uff1f\u203c\u2047\u2048\u2049\u061f\u0964\u0965\u06d4")
_CJK_TERMINAL = frozenset("\u3002\uff01\uff1f")
_CLOSING = frozenset("\"'\u201d\u2019\u00bb)]}\u300d\u300f\u300b\u3009\u203a")
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc inc ltd co corp dept est approx fig no nos vol ch pp ed eds rev gen gov "
    "sen rep capt col lt sgt mt ave blvd rd jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri "
    "sat sun cf ca nr bzw usw str mme mlle art sig sigg dott ecc sra srta ud uds tel cca".split()
)


def _attaches(ch: str, previous: str) -> bool:
    return unicodedata.category(ch) in _ATTACHING or previous == "\u200d" or _MODIFIER.match(ch) is not None


def _units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Grapheme-like units of ``text[start:end]``: a character and the marks/format characters after it."""
    units: list[tuple[int, int]] = []
    for i in range(start, end):
        if units and _attaches(text[i], text[i - 1]):
            units[-1] = (units[-1][0], i + 1)
        else:
            units.append((i, i + 1))
    return units


def _kind(ch: str) -> str:
    """``W`` word character, ``H`` Han (alone), ``K`` kana (runs), ``O`` anything else (alone)."""
    o = ord(ch)
    if 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF:
        return "H"
    if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9F:
        return "K"
    cat = unicodedata.category(ch)
    return "W" if cat[0] in "LN" or cat in _ATTACHING or cat == "Co" else "O"


def _word_end(text: str, units: list[tuple[int, int]], kinds: list[str], i: int) -> int:
    """Index of the unit after the word that starts at unit ``i``."""
    n = len(units)
    part_start = units[i][0]
    j = i + 1
    while j < n:
        if kinds[j] == "W":
            j += 1
            continue
        if j + 1 >= n or kinds[j + 1] != "W":
            break
        joiner = text[units[j][0]]
        after = text[units[j + 1][0]]
        before = text[units[j][0] - 1]
        if joiner in _DIGIT_JOINERS:
            if not (before.isdigit() and after.isdigit()):
                break
        elif joiner not in _JOINERS:
            break
        elif joiner == "." and not (after.islower() or after.isdigit() or units[j][0] - part_start <= 2):
            break
        part_start = units[j + 1][0]
        j += 2
    if j < n and text[units[j][0] : units[j][1]] == ".":
        word = text[units[i][0] : units[j][0]]
        if "." in word or word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            j += 1
    return j


def _same_run_end(text: str, units: list[tuple[int, int]], i: int) -> int:
    ch = text[units[i][0]]
    group = _TERMINAL - _CJK_TERMINAL if ch in ".!?" else frozenset(ch)
    if unicodedata.category(ch)[0] not in "PS":
        return i + 1
    j = i + 1
    while j < len(units) and units[j][1] - units[j][0] == 1 and text[units[j][0]] in group:
        j += 1
    return j


def _plain_tokens(text: str, start: int, end: int) -> list[TokenSpan]:
    units = _units(text, start, end)
    kinds = [_kind(text[a]) for a, _ in units]
    tokens: list[TokenSpan] = []
    i = 0
    while i < len(units):
        kind = kinds[i]
        if kind == "W":
            j = _word_end(text, units, kinds, i)
        elif kind == "K":
            j = i + 1
            while j < len(units) and kinds[j] == "K":
                j += 1
        elif kind == "O":
            j = _same_run_end(text, units, i)
        else:
            j = i + 1
        tokens.append(TokenSpan(units[i][0], units[j - 1][1]))
        i = j
    return tokens


def rule_tokens(text: str, start: int, end: int) -> list[TokenSpan]:
    """The tokens of ``text[start:end]`` by the rules of the module docstring (offsets into ``text``)."""
    tokens: list[TokenSpan] = []
    for chunk in _CHUNK.finditer(text, start, end):
        pos = chunk.start()
        for link in _LINK.finditer(text, chunk.start(), chunk.end()):
            link_end = link.end()
            while link_end > link.start() + 1 and text[link_end - 1] in _LINK_TRAIL:
                link_end -= 1
            tokens.extend(_plain_tokens(text, pos, link.start()))
            tokens.append(TokenSpan(link.start(), link_end))
            pos = link_end
        tokens.extend(_plain_tokens(text, pos, chunk.end()))
    return tokens


def _only(text: str, span: TokenSpan, chars: frozenset[str]) -> bool:
    return all(c in chars or unicodedata.category(c) in _ATTACHING for c in text[span.start : span.end])


def rule_sentences(text: str, tokens: list[TokenSpan]) -> list[SentenceSpans]:
    """``tokens`` of one paragraph cut into sentences by the rules of the module docstring."""
    sentences: list[SentenceSpans] = []
    first = 0
    i = 0
    n = len(tokens)
    while i < n:
        if not _only(text, tokens[i], _TERMINAL):
            i += 1
            continue
        cjk = text[tokens[i].end - 1] in _CJK_TERMINAL
        j = i + 1
        while j < n and tokens[j].start == tokens[j - 1].end and _only(text, tokens[j], _CLOSING):
            j += 1
        if j < n and (cjk or (tokens[j].start > tokens[j - 1].end and not text[tokens[j].start].islower())):
            sentences.append(tokens[first:j])
            first = j
        i = j
    if first < n:
        sentences.append(tokens[first:])
    return sentences


class RuleTokenizer(Tokenizer):
    """The lossless rule fallback (module docstring); no multiword tokens."""

    def split(self, text: str, paras: list[Paragraph]) -> list[list[SentenceSpans]]:
        return [rule_sentences(text, rule_tokens(text, a, b)) for a, b in paras]
