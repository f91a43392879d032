"""The object model of parsed text: a :class:`Doc` holds :class:`Sentence` s, a :class:`Sentence` holds :class:`Word` s.

They are thin read-only views over :class:`spandep.data.sentence.Sentence`, the lossless CoNLL-U block that the
readers, writers, the spaCy component and Ray work on; ``doc.data`` and ``sentence.data`` give those back.

- ``Word``: the CoNLL-U columns as strings (``"_"`` where unknown), ``head`` the head :class:`Word` (``None`` for the
  root) and ``head_id`` its 1-based number (0 for the root), ``start_char``/``end_char`` its span of ``doc.text``,
  ``head_prob``/``label_prob`` the parser's probabilities of its head and label (docs/design.md, "Confidence").
- Character offsets come from the ``TokenRange=start:end`` that raw-text tokenization writes in MISC: a word of a
  multiword token ("don't" → "do", "n't") gets its token's span. They are ``None`` where the Doc was not made from
  raw text (token lists, CoNLL-U files), so ``doc.text[word.start_char:word.end_char]`` is the word's form, or its
  multiword token's surface form, whenever it is defined.
- ``Sentence``: a sequence of words (``sentence[0]`` is the first), ``text``, ``id``, ``root`` and ``confidence``.
- ``Doc``: a sequence of sentences, ``text`` (the raw text parsed; for other input the sentences' texts, one per
  line), ``words`` and the exports ``to_conllu``, ``to_json``, ``to_svg`` and ``to_html``.

See docs/api.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, overload

from spandep.data.conllu import format_sentence
from spandep.data.sentence import Sentence as DataSentence
from spandep.data.sentence import Token as DataToken
from spandep.data.writers import render_html, render_svg, sentence_record

__all__ = ["Doc", "Sentence", "Word"]

CharSpan = tuple[int, int]  # [start, end) in the text


class _Token:
    """One surface token: words ``[first, end)`` of its sentence, its form and MISC (a multiword token's range line)."""

    __slots__ = ("first", "end", "form", "misc")

    def __init__(self, first: int, end: int, form: str, misc: str) -> None:
        self.first, self.end, self.form, self.misc = first, end, form, misc

    def span(self) -> CharSpan | None:
        """The ``TokenRange`` of the token's MISC, or None."""
        for item in self.misc.split("|"):
            key, _, value = item.partition("=")
            start, _, end = value.partition(":")
            if key == "TokenRange" and start.isdigit() and end.isdigit():
                return int(start), int(end)
        return None


def _tokens(sentence: DataSentence) -> list[_Token]:
    """The surface tokens of ``sentence`` in order: multiword tokens once (from their range lines), other words alone."""
    ranges: dict[int, _Token] = {}
    for _, raw in sentence.extra_lines:
        columns = raw.split("\t")
        first, dash, last = columns[0].partition("-")
        if dash and first.isdigit() and last.isdigit() and len(columns) == 10:
            start = int(first) - 1
            ranges[start] = _Token(start, min(max(int(last), start + 1), len(sentence)), columns[1], columns[9])
    tokens: list[_Token] = []
    i = 0
    while i < len(sentence):
        word = sentence.words[i]
        tokens.append(ranges.get(i) or _Token(i, i + 1, word.form, word.misc))
        i = tokens[-1].end
    return tokens


def _joined(tokens: list[_Token]) -> str:
    """The tokens' forms with a space after each one but the last and those marked ``SpaceAfter=No``."""
    return "".join(t.form + ("" if "SpaceAfter=No" in t.misc.split("|") else " ") for t in tokens).rstrip(" ")


class _Column:
    """A read-only string column of a :class:`Word`'s data token (``"_"`` where unknown)."""

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc

    @overload
    def __get__(self, word: None, owner: type) -> _Column: ...
    @overload
    def __get__(self, word: Word, owner: type | None = None) -> str: ...
    def __get__(self, word: Word | None, owner: type | None = None) -> str | _Column:
        return self if word is None else str(getattr(word._token, self.name))


class Word:
    """A syntactic word of a parsed sentence (a CoNLL-U line with an integer ID); read-only.

    ``sentence`` is the :class:`Sentence` it belongs to and ``index`` its 0-based position there (``id`` is the
    1-based CoNLL-U ID). ``start_char``/``end_char``: its span of the Doc's text (its multiword token's span for a
    word of one), ``None`` where the Doc was not made from raw text.
    """

    __slots__ = ("sentence", "index", "start_char", "end_char", "_token")
    sentence: Sentence
    index: int
    start_char: int | None
    end_char: int | None

    def __init__(self, sentence: Sentence, index: int, token: DataToken, span: CharSpan | None) -> None:
        self.sentence = sentence
        self.index = index
        self._token = token
        self.start_char, self.end_char = span if span else (None, None)

    def __repr__(self) -> str:
        return f"Word({self.id}, {self.text!r}, head={self.head_id}, deprel={self.deprel!r})"

    @property
    def id(self) -> int:
        """The 1-based CoNLL-U ID."""
        return self._token.id

    text = _Column("form", "The word form (``form`` too).")
    form = text
    lemma = _Column("lemma", "The lemma.")
    upos = _Column("upos", "The universal POS tag (predicted where the model has a UPOS head and the input had none).")
    xpos = _Column("xpos", "The language-specific POS tag.")
    feats = _Column("feats", "Morphological features, ``Name=Value|...`` as in CoNLL-U.")
    deprel = _Column("deprel", "The relation to the head (``root`` for the root).")
    deps = _Column(
        "deps", "The enhanced graph's edges into the word, ``head:label|...`` as CoNLL-U's DEPS (the input's, or the "
        "rules' with ``enhanced=True``; ``_`` where unknown).",
    )
    misc = _Column("misc", "The MISC column (``SpaceAfter=No``, ``TokenRange=start:end``, ...).")

    @property
    def head_id(self) -> int:
        """The head's 1-based ID; 0 for the root."""
        return self._token.head or 0

    @property
    def head_prob(self) -> float | None:
        """The probability of the parser's chosen head; None where unknown (a sentence parsed without scores)."""
        return self._token.head_prob

    @property
    def label_prob(self) -> float | None:
        """The probability of the parser's chosen label given its head; None where unknown."""
        return self._token.label_prob

    @property
    def head(self) -> Word | None:
        """The head word; None for the root."""
        return self.sentence[self.head_id - 1] if self.head_id else None

    @property
    def children(self) -> list[Word]:
        """The words whose head is this word, in sentence order."""
        return [w for w in self.sentence if w.head_id == self.id]


class Sentence(Sequence[Word]):
    """A parsed sentence: its :class:`Word` s in order (``sentence[0]`` is the first), read-only.

    ``data`` is the underlying :class:`spandep.data.sentence.Sentence` (all CoNLL-U lines, for writing it back).
    ``text``: the exact span of the raw text it was tokenized from, else its ``# text`` comment, else its tokens
    joined by spaces (none after a ``SpaceAfter=No`` token). Made by :class:`Doc`."""

    def __init__(self, sentence: DataSentence, raw: str | None, where: str) -> None:
        for w in sentence.words:
            if w.head is None:
                raise ValueError(f"{where}, word {w.id}: no HEAD; a Doc holds parsed sentences: parse them with nlp.parse_sentences first")
        self.data = sentence
        tokens = _tokens(sentence)
        spans = [t.span() if raw is not None else None for t in tokens]
        self.words = tuple(Word(self, i, sentence.words[i], span) for t, span in zip(tokens, spans) for i in range(t.first, t.end))
        first, last = spans[0] if spans else None, spans[-1] if spans else None
        if raw is not None and first and last:
            self.text = raw[first[0] : last[1]]
        else:
            self.text = sentence.comment("text") or _joined(tokens)

    @overload
    def __getitem__(self, index: int) -> Word: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Word, ...]: ...
    def __getitem__(self, index: int | slice) -> Word | tuple[Word, ...]:
        return self.words[index]

    def __len__(self) -> int:
        return len(self.words)

    def __repr__(self) -> str:
        return f"Sentence({self.text!r:.60})"

    @property
    def id(self) -> str | None:
        """The ``# sent_id`` comment, if the sentence has one."""
        return self.data.comment("sent_id")

    @property
    def confidence(self) -> float | None:
        """The parser's score of the tree: the mean over its words of head × label probability, its expected LAS
        (None where unknown)."""
        return self.data.confidence

    @property
    def root(self) -> Word:
        """The root word (the first one, should a tree from the input have several)."""
        return next(w for w in self.words if w.head_id == 0)

    def to_conllu(self) -> str:
        """The sentence as a CoNLL-U block, every line of the input kept."""
        return format_sentence(self.data)


class Doc(Sequence[Sentence]):
    """Parsed sentences in input order: index, iterate or export them.

    ``sentences`` are :class:`~spandep.data.sentence.Sentence` objects with their heads set; ``text`` is the raw
    text they were tokenized from (their ``TokenRange`` offsets index into it), ``None`` for other input. A
    sentence without heads is a ``ValueError``."""

    def __init__(self, sentences: Iterable[DataSentence], text: str | None = None) -> None:
        self._raw = text
        self.sentences = [Sentence(s, text, f"sentence {i}") for i, s in enumerate(sentences)]
        self.text: str = text if text is not None else "\n".join(s.text for s in self.sentences)

    @overload
    def __getitem__(self, index: int) -> Sentence: ...
    @overload
    def __getitem__(self, index: slice) -> Doc: ...
    def __getitem__(self, index: int | slice) -> Sentence | Doc:
        return Doc(self.data[index], self._raw) if isinstance(index, slice) else self.sentences[index]

    def __len__(self) -> int:
        return len(self.sentences)

    def __repr__(self) -> str:
        return f"Doc({len(self)} sentences, {sum(map(len, self.sentences))} words)"

    @property
    def words(self) -> list[Word]:
        """Every word of every sentence, in order."""
        return [w for s in self.sentences for w in s]

    @property
    def data(self) -> list[DataSentence]:
        """The underlying :class:`spandep.data.sentence.Sentence` objects (for ``write_sentences``, the integrations)."""
        return [s.data for s in self.sentences]

    def to_conllu(self) -> str:
        """The sentences as CoNLL-U text."""
        return "".join(map(format_sentence, self.data))

    def to_json(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per sentence (``id``/``text`` when known, ``tokens``, ``heads``, ``deprels``,
        ``upos``, ``xpos``, ``feats``, ``lemmas``, and the confidence): the lines of ``spandep parse --output-format
        jsonl``."""
        return [sentence_record(s) for s in self.data]

    def to_svg(self) -> str:
        """One SVG picture of every tree, stacked, each under a caption (needs spaCy)."""
        return render_svg(self.data)

    def to_html(self) -> str:
        """An HTML page with a picture of each tree, scrolling sideways when wide (needs spaCy)."""
        return render_html(self.data)
