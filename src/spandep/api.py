"""The Python API: ``nlp = spandep.load(); doc = nlp("Some text.")``.

A :class:`Pipeline` is a loaded model, its tokenizer and its inference options. It parses raw text (split into
sentences, tokens and the words of multiword tokens by the model's trained tokenizer, or by the lossless rule
fallback for a model without one), pre-tokenised sentences, files in any input format of ``spandep parse``, and streams of any
of these, always in input order and batched by a token budget. Results are :class:`Doc` objects: lists of
:class:`~spandep.data.sentence.Sentence` whose words carry ``form``, ``head`` (1-based, 0 = root), ``deprel``
and ``upos`` (``"_"`` where unknown). Bad input raises a ``ValueError`` (a ``TypeError`` for an argument of the
wrong type) that names the problem.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from spandep.data.conllu import check_form, check_text, format_sentence, read_input
from spandep.data.sentence import Sentence
from spandep.data.writers import render_html, render_svg, sentence_record
from spandep.errors import InputFormatError
from spandep.inference import InferenceOptions

if TYPE_CHECKING:
    from spandep.models.base import Parser
    from spandep.tokenization.text import Tokenizer

__all__ = ["Doc", "Item", "Pipeline", "load"]

Item = str | Sequence[str] | Sentence  # raw text, one pre-tokenised sentence, or a read sentence


class Doc(Sequence[Sentence]):
    """Parsed sentences in input order: index, iterate, or export them."""

    def __init__(self, sentences: Iterable[Sentence]) -> None:
        self.sentences = list(sentences)

    @overload
    def __getitem__(self, index: int) -> Sentence: ...
    @overload
    def __getitem__(self, index: slice) -> Doc: ...
    def __getitem__(self, index: int | slice) -> Sentence | Doc:
        return Doc(self.sentences[index]) if isinstance(index, slice) else self.sentences[index]

    def __len__(self) -> int:
        return len(self.sentences)

    def __repr__(self) -> str:
        return f"Doc({len(self)} sentences, {sum(map(len, self.sentences))} words)"

    def to_conllu(self) -> str:
        """The sentences as CoNLL-U text."""
        return "".join(map(format_sentence, self.sentences))

    def to_json(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per sentence (``id``/``text`` when known, ``tokens``, ``heads``, ``deprels``,
        ``upos``): the lines of ``spandep parse --output-format jsonl``."""
        return [sentence_record(s) for s in self.sentences]

    def to_svg(self) -> str:
        """One SVG picture of every tree, stacked (needs spaCy)."""
        return render_svg(self.sentences)

    def to_html(self) -> str:
        """An HTML page with a picture of each tree (needs spaCy)."""
        return render_html(self.sentences)


def _token_sentence(tokens: object, where: str) -> Sentence:
    """A sentence from one list of token strings; errors name ``where``."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{where}: expected a list of token strings, got {type(tokens).__name__} {tokens!r:.60}")
    if not tokens:
        raise ValueError(f"{where}: a sentence needs at least one token")
    for j, form in enumerate(tokens):
        if not isinstance(form, str):
            raise TypeError(f"{where}, token {j}: expected a str, got {type(form).__name__} {form!r:.60}")
        try:
            check_form(form, where, 0)
        except InputFormatError as exc:
            raise ValueError(f"{where}, token {j}: {exc.reason}") from None
    return Sentence.from_tokens(list(tokens))


class Pipeline:
    """A loaded parser, the tokenizer for its raw text (``None``: the rule fallback) and its inference options; made
    by :func:`load`. ``ValueError`` for options the model's type does not have (``k`` for a Biaffine model)."""

    def __init__(self, model: Parser, options: InferenceOptions | None = None, tokenizer: Tokenizer | None = None) -> None:
        from spandep.tokenization import RuleTokenizer

        self.model = model
        self.options = options or InferenceOptions()
        self.tokenizer = tokenizer or RuleTokenizer()
        model.settings(self.options)

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.model.settings(self.options).given().items())
        return f"Pipeline({self.model.name} model, {settings}, batch_tokens={self.options.batch_tokens})"

    def __call__(self, text: str) -> Doc:
        """Split raw ``text`` into sentences, tokens and words with :attr:`tokenizer` and parse them. Each token's
        ``TokenRange=start:end`` (MISC) is its character span in ``text``; ``# text`` is each sentence's span."""
        if not isinstance(text, str):
            raise TypeError(f"expected a str of raw text, got {type(text).__name__}; use parse_tokens for token lists")
        return Doc(self.parse_sentences(self._text_sentences(text, "<text>")))

    def parse_tokens(self, sentences: Iterable[Sequence[str]]) -> Doc:
        """Parse pre-tokenised sentences, each a list of token strings: ``[["I", "saw", "her"]]``."""
        if isinstance(sentences, str) or not isinstance(sentences, Iterable):
            raise TypeError("parse_tokens takes a list of sentences, each a list of token strings")
        items = list(sentences)
        if items and all(isinstance(t, str) for t in items):
            raise ValueError("parse_tokens takes a list of sentences, each a list of tokens: wrap one sentence in a list")
        return Doc(self.parse_sentences([_token_sentence(t, f"sentence {i}") for i, t in enumerate(items)]))

    def parse_file(self, path: str | Path, input_format: str = "conllu") -> Doc:
        """Parse a file in one of ``spandep parse``'s input formats: ``conllu``, ``conllx``, ``tokens`` (one
        sentence per line, tokens separated by spaces) or ``text`` (raw text). CoNLL-U columns are kept.
        The whole file is held in memory: for large files use ``parse_sentences(read_input(path, fmt))``."""
        return Doc(self.parse_sentences(read_input(path, input_format, self.tokenizer)))

    def stream(self, items: Iterable[Item]) -> Iterator[Doc]:
        """Parse a (possibly endless) stream lazily, yielding one :class:`Doc` per item, in input order.

        An item is raw text (any number of sentences, none if blank), a list of token strings (one sentence)
        or a :class:`Sentence`. Sentences of many items are batched together; only a bounded number of items
        is read ahead."""
        if isinstance(items, str):
            raise TypeError("stream takes an iterable of items (texts, token lists, Sentences); for one text call nlp(text)")
        return self._docs(items)

    def _docs(self, items: Iterable[Item]) -> Iterator[Doc]:
        counts: deque[int] = deque()  # sentences per item read so far and not yet yielded

        def sentences() -> Iterator[Sentence]:
            for index, item in enumerate(items):
                parts = self._item_sentences(item, index)
                counts.append(len(parts))
                yield from parts

        current: list[Sentence] = []
        for parsed in self.parse_sentences(sentences()):
            while counts[0] == 0:  # blank texts before this sentence's item
                counts.popleft()
                yield Doc([])
            current.append(parsed)
            if len(current) == counts[0]:
                counts.popleft()
                yield Doc(current)
                current = []
        for _ in counts:  # blank texts at the end
            yield Doc([])

    def _text_sentences(self, text: str, source: str) -> Iterator[Sentence]:
        try:
            check_text(text, source)
        except InputFormatError as exc:
            raise ValueError(f"{source}, line {exc.line}: {exc.reason}") from None
        return self.tokenizer.iter_sentences(text, source)

    def _item_sentences(self, item: object, index: int) -> list[Sentence]:
        """The sentences of one stream item: a text is tokenized, a token list is one sentence, a Sentence itself."""
        if isinstance(item, Sentence):
            return [item]
        if isinstance(item, str):
            return list(self._text_sentences(item, f"<item {index}>"))
        return [_token_sentence(item, f"item {index}")]

    def parse_sentences(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        """Parse :class:`Sentence` objects lazily, in order: each comes back with HEAD and DEPREL set and every
        other column kept (e.g. from ``spandep.data.conllu.read_input``)."""
        from spandep.pipeline.predict import parse_stream

        return parse_stream(self.model, sentences, self.options)


def load(path: str | Path | None = None, *, decoder: str | None = None, batch_tokens: int = 4000, **settings: Any) -> Pipeline:
    """Load a model folder (``None``: ``$SPANDEP_MODEL``, else the model shipped with spandep) as a :class:`Pipeline`,
    with the folder's trained tokenizer (its ``tokenizer/``) for raw text, else the rule fallback.

    ``decoder``: ``"mst"`` (non-projective) or ``"projective"``; ``None`` keeps the model's choice from dev.
    ``batch_tokens``: words per batch (lower it if memory runs out). ``settings`` override the model's other
    inference settings chosen on dev (span models: ``k``, ``lam``, ``retrieval``, ``mutual``, ``arc_weight``,
    ``label_source``; see :class:`~spandep.inference.InferenceOptions`). Raises
    :class:`~spandep.errors.ModelError` for a missing or unreadable model and ``ValueError`` for a bad option.
    """
    from spandep.pipeline.model_io import load_model, resolve_model_dir
    from spandep.tokenization import tokenizer_for

    options = InferenceOptions.from_dict({"decoder": decoder, "batch_tokens": batch_tokens, **settings})
    folder = resolve_model_dir(path)
    return Pipeline(load_model(folder), options, tokenizer_for(folder))
