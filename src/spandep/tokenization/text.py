"""What every tokenizer shares: paragraphs of raw text, token spans, and the :class:`Sentence` built from them.

Conventions (the same for the rule fallback and the trained tokenizers):

- Whitespace is what ``str.isspace`` says (so U+200B ZERO WIDTH SPACE, U+00AD SOFT HYPHEN and U+FEFF are not
  whitespace: they stay inside tokens). Every other character of the input lands in exactly one token, in order.
- A paragraph ends at a blank line: a run of whitespace holding two or more line breaks (CRLF counts as one), or
  a U+2029 PARAGRAPH SEPARATOR. A paragraph never continues a sentence of the one before.
- Text of a sentence a line (:meth:`Tokenizer.iter_lines`, ``--input-format lines``, UDPipe's ``presegmented``):
  each non-blank line is tokenized as a paragraph of its own and is one sentence, never split; a line after a blank
  line starts a paragraph.
- A token is a span ``[start, end)`` of the input (``TokenRange=start:end`` in MISC); it may hold one plain space
  (French "1 000") but never a line break. ``SpaceAfter=No`` marks a token directly followed by a non-whitespace
  character, so the text can be rebuilt.
- ``# text`` is the sentence's exact span of the input, from its first token's start to its last token's end, with
  each line-break character and tab written as one space (a comment line cannot hold them): offsets are unchanged.
- A multiword token keeps its surface span; its words are written under a ``i-j`` range line.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from spandep.data.reading import TextPiece
from spandep.data.sentence import Sentence, Token

__all__ = [
    "BLOCK_CHARS", "EMOJI_MODIFIERS", "TOKENIZER_FOLDER", "TREEBANK_TOKENIZERS", "LINE_BREAKS", "TokenSpan", "Tokenizer",
    "build_sentence", "comment_text", "lines", "paragraphs", "token_ranges", "tokenizer_folder", "treebank_tokenizers",
]

TOKENIZER_FOLDER = "tokenizer"  # a model folder's trained tokenizer, if it has one
TREEBANK_TOKENIZERS = "tokenizers"  # a multi-treebank model folder's trained tokenizers, tokenizers/<treebank>/
EMOJI_MODIFIERS = "\U0001f3fb-\U0001f3ff"  # skin tones: they stay with the emoji before them (a regex range)
LINE_BREAKS = "\n\x0b\x0c\r\x1c\x1d\x1e\x85\u2028\u2029"  # the characters str.splitlines breaks at
_TO_SPACE = str.maketrans({c: " " for c in LINE_BREAKS + "\t"})
_BREAK = "(?:\r\n|\r(?!\n)|[\n\x0b\x0c\x1c\x1d\x1e\x85\u2028])"  # one line break (CRLF is one)
_PARAGRAPH_BREAK = re.compile(f"(?:[^\\S{LINE_BREAKS}]*{_BREAK}){{2,}}\\s*|\\s*\u2029\\s*")
_LINE_BREAK = re.compile(f"{_BREAK}|\u2029")
_NON_WS = re.compile(r"\S")
_TOKEN_RANGE = re.compile(r"(?:^|\|)TokenRange=([0-9]+):([0-9]+)(?:\||$)")


def tokenizer_folder(model: Path, treebank: str | None = None) -> Path:
    """Where a model folder keeps its trained tokenizer: ``tokenizer/``, or for ``treebank`` of a model trained on
    several, ``tokenizers/<treebank>/`` (it holds one where it has a ``config.json``)."""
    return model / TOKENIZER_FOLDER if treebank is None else model / TREEBANK_TOKENIZERS / treebank


def treebank_tokenizers(model: Path) -> dict[str, Path]:
    """The trained tokenizers of a multi-treebank model folder, by treebank (``{}``: none)."""
    root = model / TREEBANK_TOKENIZERS
    return {f.name: f for f in sorted(root.iterdir()) if (f / "config.json").is_file()} if root.is_dir() else {}


@dataclass(frozen=True)
class TokenSpan:
    """One token: ``text[start:end]``; ``words`` are the words of a multiword token, ``()`` for a plain token."""

    start: int
    end: int
    words: tuple[str, ...] = ()


Paragraph = tuple[int, int]  # (start, end) of a paragraph in the input, trimmed of whitespace
SentenceSpans = list[TokenSpan]


def paragraphs(text: str) -> list[Paragraph]:
    """The paragraphs of ``text`` (see the module docstring), each trimmed of whitespace; blank ones left out."""
    return _between(text, _PARAGRAPH_BREAK)


def lines(text: str) -> list[Paragraph]:
    """The lines of ``text``, each trimmed of whitespace; blank ones left out."""
    return _between(text, _LINE_BREAK)


def _between(text: str, separator: re.Pattern[str]) -> list[Paragraph]:
    """The spans of ``text`` between the matches of ``separator``, each trimmed of whitespace; blank ones left out."""
    cuts = [0]
    for m in separator.finditer(text):
        cuts.extend((m.start(), m.end()))
    cuts.append(len(text))
    spans: list[Paragraph] = []
    for a, b in zip(cuts[::2], cuts[1::2]):
        first = _NON_WS.search(text, a, b)
        if first is None:
            continue
        end = b
        while text[end - 1].isspace():
            end -= 1
        spans.append((first.start(), end))
    return spans


def comment_text(span: str) -> str:
    """``span`` as the value of a ``# text =`` comment: line-break characters and tabs become spaces, one for one."""
    return span.translate(_TO_SPACE)


def _misc(text: str, start: int, end: int, offset: int) -> str:
    glued = end < len(text) and not text[end].isspace()
    return ("SpaceAfter=No|" if glued else "") + f"TokenRange={offset + start}:{offset + end}"


def build_sentence(text: str, spans: SentenceSpans, newpar: bool, source: str, line: int, offset: int = 0) -> Sentence:
    """The :class:`Sentence` of the token ``spans`` of ``text`` (see the module docstring for what it carries),
    ``text`` starting ``offset`` characters into the input."""
    words: list[Token] = []
    extra: list[tuple[int, str]] = []
    for span in spans:
        form = text[span.start : span.end]
        misc = _misc(text, span.start, span.end, offset)
        if span.words:
            first = len(words) + 1
            last = first + len(span.words) - 1
            extra.append((len(words), f"{first}-{last}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}"))
            words.extend(Token(id=first + i, form=w) for i, w in enumerate(span.words))
        else:
            words.append(Token(id=len(words) + 1, form=form, misc=misc))
    comments = ["# newpar"] if newpar else []
    comments.append("# text = " + comment_text(text[spans[0].start : spans[-1].end]))
    return Sentence(words=words, comments=comments, extra_lines=extra, source=source, line=line)


def token_ranges(sentence: Sentence) -> list[tuple[int, int]]:
    """The ``TokenRange`` of every token of a tokenized sentence (multiword tokens once), in order."""
    miscs = [raw.rsplit("\t", 1)[1] for _, raw in sentence.extra_lines] + [w.misc for w in sentence.words]
    found = (_TOKEN_RANGE.search(m) for m in miscs)
    return sorted((int(m.group(1)), int(m.group(2))) for m in found if m)


BLOCK_CHARS = 200_000  # paragraphs are tokenized in blocks of about this many characters: memory stays bounded


class Tokenizer(ABC):
    """Raw text in, sentences of tokens (and the words of multiword tokens) out; lossless (module docstring)."""

    @abstractmethod
    def split(self, text: str, paras: list[Paragraph]) -> list[list[SentenceSpans]]:
        """The sentences of each paragraph of ``text``, as token spans with offsets into ``text``."""

    def tokenize(self, text: str, source: str = "<text>") -> list[Sentence]:
        """Split ``text`` into paragraphs, sentences and tokens; each sentence's ``line`` is its first line."""
        return list(self.iter_sentences(text, source))

    def iter_sentences(self, text: str, source: str = "<text>") -> Iterator[Sentence]:
        """:meth:`tokenize` lazily: paragraphs are split a block of about :data:`BLOCK_CHARS` characters at a
        time, so a long text is parsed as it is tokenized."""
        return self.iter_pieces([TextPiece(text)], source, whole=False)

    def iter_lines(self, text: str, source: str = "<text>") -> Iterator[Sentence]:
        """Each non-blank line of ``text`` as one sentence: tokenized as a paragraph of its own, never split (a
        sentence a line, UDPipe's ``presegmented``); a line after a blank line starts a paragraph (``# newpar``)."""
        return self.iter_pieces([TextPiece(text)], source, whole=True)

    def iter_pieces(self, pieces: Iterable[TextPiece], source: str, whole: bool) -> Iterator[Sentence]:
        """The sentences of raw text read a piece at a time (:func:`~spandep.data.reading.text_pieces`), as
        :meth:`iter_lines` (``whole``) or :meth:`iter_sentences` split it; offsets and lines are the input's."""
        for piece in pieces:
            units = lines(piece.text) if whole else paragraphs(piece.text)
            yield from self._sentences(piece, units, source, whole)

    def _sentences(self, piece: TextPiece, units: list[Paragraph], source: str, whole: bool) -> Iterator[Sentence]:
        """The sentences of each unit (a paragraph, or with ``whole`` a line made one sentence) of ``piece``, in
        order; the first unit of a piece that ``continues`` a paragraph starts no new one."""
        text = piece.text
        line, counted, previous_end = piece.line, 0, None
        for block in _blocks(units):
            for (unit_start, unit_end), sentences in zip(block, self.split(text, block)):
                if previous_end is None:
                    newpar = not piece.continues
                elif whole:
                    newpar = _PARAGRAPH_BREAK.search(text, previous_end, unit_start) is not None
                else:
                    newpar = True
                if whole:
                    sentences = [[span for spans in sentences for span in spans]]
                for k, spans in enumerate(sentences):
                    start = spans[0].start
                    line += text.count("\n", counted, start)
                    counted = start
                    yield build_sentence(text, spans, newpar and k == 0, source, line, piece.offset)
                previous_end = unit_end


def _blocks(paras: list[Paragraph]) -> Iterator[list[Paragraph]]:
    """Consecutive runs of ``paras`` of about :data:`BLOCK_CHARS` characters each (a longer paragraph alone)."""
    block: list[Paragraph] = []
    size = 0
    for para in paras:
        if block and size + para[1] - para[0] > BLOCK_CHARS:
            yield block
            block, size = [], 0
        block.append(para)
        size += para[1] - para[0]
    if block:
        yield block
