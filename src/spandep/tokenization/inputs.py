"""Reading an input in any of the formats ``spandep parse``, the API and the service take: CoNLL-U or CoNLL-X and
pre-tokenised text (:mod:`spandep.data.conllu`'s readers), raw text split into sentences by a tokenizer.

Here, not in ``data/``, because raw text needs a tokenizer and ``data/`` imports nothing above it (docs/design.md).
Raw text is read a piece at a time (:func:`~spandep.data.reading.text_pieces`), compressed or not, so memory stays
bounded on any input.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from spandep.data.conllu import FORMATS, SENTENCE_WORDS, TOKEN_CHARS, read_conllu, read_tokens, too_many_words
from spandep.data.reading import Source, source_name, text_pieces
from spandep.data.sentence import Sentence
from spandep.errors import InputFormatError
from spandep.tokenization.rules import RuleTokenizer
from spandep.tokenization.text import Tokenizer

__all__ = ["INPUT_FORMATS", "RAW_TEXT_FORMATS", "check_input_data", "read_input", "read_raw_text"]

INPUT_FORMATS = ("conllu", "conllx", "tokens", "text", "lines")
RAW_TEXT_FORMATS = ("text", "lines")  # raw text for a tokenizer: split into sentences, or a sentence a line


def read_raw_text(path: Source) -> str:
    """The whole of ``path`` decoded as UTF-8 (a BOM at the start dropped, line ends kept as they are), checked as
    :func:`~spandep.data.reading.text_pieces` checks it (bytes that are not UTF-8, a line too long, a control
    character that is not whitespace, such as U+0000 or U+001B: no CoNLL-U FORM can hold it). All of it is held in
    memory: :func:`read_input` reads raw text a piece at a time."""
    return "".join(piece.text for piece in text_pieces(path))


def read_input(path: Source, fmt: str = "conllu", tokenizer: Tokenizer | None = None, heads: bool = False) -> Iterator[Sentence]:
    """Stream the sentences of ``path`` in one of :data:`INPUT_FORMATS`: ``conllu``/``conllx``
    (:func:`read_conllu`), ``tokens`` (:func:`read_tokens`), ``text`` (raw text, split by ``tokenizer``: a
    model's, see :func:`spandep.tokenization.tokenizer_for`; ``None``: the rule fallback) or ``lines`` (raw text of
    a sentence a line, tokenized by ``tokenizer``), raw text read a piece at a time
    (:func:`~spandep.data.reading.text_pieces`). This is input to be parsed: a CoNLL file's HEAD column, which
    parsing replaces, is read leniently and never checked, unless ``heads`` (the heads a parse keeps: an integer in
    0..n or ``_``, else an ``InputFormatError``)."""
    if fmt in FORMATS:
        return read_conllu(path, fmt, heads=heads)
    if fmt == "tokens":
        return read_tokens(path)
    if fmt in RAW_TEXT_FORMATS:
        tokenizer = RuleTokenizer() if tokenizer is None else tokenizer
        return _bounded(tokenizer.iter_pieces(text_pieces(path), source_name(path), whole=fmt == "lines"))
    raise ValueError(f"unknown input format {fmt!r}; use one of {', '.join(INPUT_FORMATS)}")


def check_input_data(path: Source, fmt: str, heads: bool = False) -> None:
    """Read all of ``path`` as :func:`read_input` reads it in format ``fmt`` (raw text without tokenizing it; with
    ``heads``), in bounded memory, raising its first :class:`InputFormatError`: the checks of a whole file before a
    model is loaded for it."""
    deque(text_pieces(path) if fmt in RAW_TEXT_FORMATS else read_input(path, fmt, heads=heads), maxlen=0)


def _bounded(sentences: Iterator[Sentence]) -> Iterator[Sentence]:
    """A tokenizer's ``sentences``, an :class:`InputFormatError` at a sentence of more words than
    ``sentence_words`` or with a word longer than ``token_chars``."""
    for sentence in sentences:
        if len(sentence.words) > SENTENCE_WORDS:
            raise InputFormatError(sentence.source, sentence.line, too_many_words("a sentence") + " (or give a sentence a line with --input-format lines)")
        longest = max(sentence.forms, key=len)
        if len(longest) > TOKEN_CHARS:
            raise InputFormatError(sentence.source, sentence.line, f"a word of {len(longest)} characters, more than {TOKEN_CHARS} (limit token_chars): is this text?")
        yield sentence
