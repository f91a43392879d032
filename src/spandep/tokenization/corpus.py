"""Gold tokenisation from a CoNLL-U file: the raw text of each paragraph with its sentences as token spans.

A treebank's raw text is built the way the benchmarks and the trainer both read it:

- a sentence's text is its ``# text``; a sentence without one is rebuilt from its tokens (multiword tokens by their
  surface form) joined by one space, none after ``SpaceAfter=No``; in a sentence with a CJK character (Han, kana,
  fullwidth or CJK punctuation), a space goes only between two alphanumeric non-CJK characters (this rebuilds the
  UD 2.2 ``# text`` of every zh_gsd dev and test sentence from the UD 1.4 zh_gsd_v1 file, which has none);
- the sentences of a paragraph are joined by one space; a paragraph starts at ``# newpar`` or ``# newdoc`` (a
  file with neither is one paragraph); in a file written mostly in CJK characters (over half of its sentences'
  non-space characters: Chinese, Japanese) they are joined as the characters inside such a sentence are, with a
  space only between two alphanumeric non-CJK characters, since Chinese and Japanese put none between sentences
  (as UD's ``conllu_to_text.pl --language zh|ja`` writes them);
- paragraphs are separated by a blank line (``\\n\\n``).

Token spans are found by matching each token's characters (whitespace ignored) in order against the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from spandep.data.conllu import read_conllu
from spandep.data.reading import decoded_lines
from spandep.data.sentence import Sentence
from spandep.errors import InputFormatError
from spandep.limits import limit
from spandep.tokenization.text import SentenceSpans, TokenSpan, comment_text, token_ranges

__all__ = [
    "GoldParagraph", "GoldToken", "cjk_char", "gold_tokens", "lossless_problems", "raw_text", "read_paragraphs", "sentence_text",
]

_SPACE = re.compile(r"\s+")
_RANGE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)\t([^\t]*)\t(?:[^\t]*\t){7}([^\t]*)$")


@dataclass(frozen=True)
class GoldToken:
    """A token of a CoNLL-U sentence: its surface ``form``, its ``words`` (``()`` unless a multiword token)."""

    form: str
    words: tuple[str, ...]
    space_after: bool


@dataclass
class GoldParagraph:
    """The raw ``text`` of one paragraph and its ``sentences`` as token spans (offsets into ``text``)."""

    text: str = ""
    sentences: list[SentenceSpans] = field(default_factory=list)


def gold_tokens(sentence: Sentence) -> list[GoldToken]:
    """The tokens of ``sentence``: multiword tokens once, with their words; empty nodes left out."""
    ranges: dict[int, tuple[int, str, str]] = {}
    for _, raw in sentence.extra_lines:
        m = _RANGE.match(raw)
        if m:
            ranges[int(m.group(1))] = (int(m.group(2)), m.group(3), m.group(4))
    tokens: list[GoldToken] = []
    i = 1
    while i <= len(sentence.words):
        if i in ranges:
            last, form, misc = ranges[i]
            words = tuple(w.form for w in sentence.words[i - 1 : last])
            i = last + 1
        else:
            form, misc, words = sentence.words[i - 1].form, sentence.words[i - 1].misc, ()
            i += 1
        tokens.append(GoldToken(form, words, "SpaceAfter=No" not in misc.split("|")))
    return tokens


def cjk_char(ch: str) -> bool:
    """Whether ``ch`` is a CJK character: Han, kana, CJK or full-width punctuation and forms."""
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF or 0x20000 <= o <= 0x3FFFF


def _cjk_gap(left: str, right: str) -> str:
    """The space between two pieces of CJK text ending in ``left`` and starting with ``right``: one only between
    two alphanumeric non-CJK characters."""
    spaced = left.isalnum() and right.isalnum() and not (cjk_char(left) or cjk_char(right))
    return " " if spaced else ""


def sentence_text(sentence: Sentence, tokens: list[GoldToken]) -> str:
    """The sentence's ``# text``, or its text rebuilt from ``tokens`` (module docstring)."""
    text = sentence.comment("text")
    if text is not None:
        return text
    cjk = any(cjk_char(c) for t in tokens for c in t.form)
    pieces = [tokens[0].form]
    for a, b in zip(tokens, tokens[1:]):
        gap = _cjk_gap(a.form[-1], b.form[0]) if cjk else " " if a.space_after else ""
        pieces.append(gap + b.form)
    return "".join(pieces)


def _align(text: str, offset: int, tokens: list[GoldToken], sentence: Sentence) -> SentenceSpans:
    spans: SentenceSpans = []
    pos = 0
    for tok in tokens:
        start = -1
        for ch in tok.form:
            if ch.isspace():
                continue
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text) or text[pos] != ch:
                reason = f"token {tok.form!r} does not match the sentence's text at character {pos}"
                raise InputFormatError(sentence.source, sentence.line, reason)
            start = pos if start < 0 else start
            pos += 1
        spans.append(TokenSpan(offset + start, offset + pos, tok.words))
    return spans


def _mostly_cjk(texts: Iterable[str]) -> bool:
    """Whether over half of the non-space characters of ``texts`` are CJK (counted a text at a time)."""
    cjk = total = 0
    for text in texts:
        chars = [c for c in text if not c.isspace()]
        cjk, total = cjk + sum(map(cjk_char, chars)), total + len(chars)
    return cjk * 2 > total


def read_paragraphs(path: str | Path) -> list[GoldParagraph]:
    """The paragraphs of a CoNLL-U file with their gold sentences and tokens (module docstring)."""
    read: list[list[tuple[str, list[GoldToken], Sentence]]] = []  # per paragraph: each sentence's text, tokens
    for sentence in read_conllu(path, heads=False):
        if not read or any(c.startswith(("# newpar", "# newdoc")) for c in sentence.comments) and read[-1]:
            read.append([])
        tokens = gold_tokens(sentence)
        read[-1].append((sentence_text(sentence, tokens), tokens, sentence))
    cjk = _mostly_cjk(text for sentences in read for text, _, _ in sentences)
    paragraphs: list[GoldParagraph] = []
    for sentences in read:
        current = GoldParagraph()
        for text, tokens, sentence in sentences:
            if current.sentences:
                current.text += _cjk_gap(current.text[-1], text[0]) if cjk else " "
            current.sentences.append(_align(text, len(current.text), tokens, sentence))
            current.text += text
        paragraphs.append(current)
    return paragraphs


def raw_text(paragraphs: list[GoldParagraph]) -> str:
    """The raw text of a file: its paragraphs separated by a blank line, ending with a newline."""
    return "\n\n".join(p.text for p in paragraphs) + "\n"


def lossless_problems(text: str, sentences: list[Sentence]) -> list[str]:
    """What a tokenizer's ``sentences`` lose or change of ``text`` (empty when nothing): the tokens must spell the
    input's non-whitespace characters in order, each token must be the input at its ``TokenRange``, and each
    ``# text`` the sentence's span of the input (line breaks and tabs as spaces)."""
    found: list[str] = []
    tokens = [[t.form for t in gold_tokens(s)] for s in sentences]
    if _SPACE.sub("", "".join(f for forms in tokens for f in forms)) != _SPACE.sub("", text):
        found.append("the tokens do not spell the input's non-whitespace characters")
    for s, forms in zip(sentences, tokens):
        ranges = token_ranges(s)
        if [text[a:b] for a, b in ranges] != forms:
            found.append(f"line {s.line}: a token's form is not the input at its TokenRange")
        if s.comment("text") != comment_text(text[ranges[0][0] : ranges[-1][1]]).strip():
            found.append(f"line {s.line}: # text is not the sentence's span of the input")
    return found


def read_dictionary(path: str | Path) -> list[str]:
    """The words of a dictionary file (``spandep train-tokenizer --dictionary``; plain or compressed UTF-8): the
    first whitespace-separated field of each line (a word list, or ``word frequency tag`` as jieba's dictionaries
    are written); blank lines and lines starting with ``#`` are skipped. More than ``tokenizer_dictionary_words``
    words is an error naming the line."""
    most = int(limit("tokenizer_dictionary_words").high)
    words: list[str] = []
    for lineno, line in decoded_lines(path):
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            if len(words) == most:
                raise InputFormatError(str(path), lineno, f"more than {most:,} words (limit tokenizer_dictionary_words)")
            words.append(fields[0])
    if not words:
        raise InputFormatError(str(path), 0, "no words: a dictionary has one word a line")
    return words
