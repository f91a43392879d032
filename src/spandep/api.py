"""The Python API: ``nlp = spandep.load(); doc = nlp("Some text.")``.

A :class:`Pipeline` is a loaded model, its tokenizer and its inference options. It parses raw text (split into
sentences, tokens and the words of multiword tokens by the model's trained tokenizer, or by the lossless rule
fallback for a model without one), pre-tokenised sentences, files in any input format of ``spandep parse``, and streams of any
of these (``nlp.pipe``), always in input order and batched. Results are :class:`~spandep.document.Doc` objects:
sentences of words with their head word, relation, tags and character offsets into the input (docs/api.md). Bad
input raises a ``ValueError`` (a ``TypeError`` for an argument of the wrong type) that names the problem.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spandep.data.conllu import check_text, token_sentence
from spandep.data.sentence import Sentence
from spandep.document import Doc
from spandep.errors import InputFormatError
from spandep.inference import InferenceOptions
from spandep.limits import check_counts
from spandep.tokenization.inputs import RAW_TEXT_FORMATS, read_input, read_raw_text

if TYPE_CHECKING:
    from spandep.models.base import Parser
    from spandep.pipeline.workers import ParserFactory
    from spandep.tokenization.text import Tokenizer

__all__ = ["Doc", "Item", "Pipeline", "load"]

Item = str | Sequence[str] | Sentence  # raw text, one pre-tokenised sentence, or a read sentence
PIPE_BATCH = 256  # items per batch of nlp.pipe


class Pipeline:
    """A loaded parser, the tokenizer for its raw text (``None``: the rule fallback) and its inference options; made
    by :func:`load`. ``factory`` loads the same parser in another process (for ``pipe(n_process=...)``; ``load``
    sets it). ``ValueError`` for options the model's type does not have (``k`` for a Biaffine model)."""

    def __init__(
        self,
        model: Parser,
        options: InferenceOptions | None = None,
        tokenizer: Tokenizer | None = None,
        factory: ParserFactory | None = None,
    ) -> None:
        from spandep.tokenization import RuleTokenizer

        self.model = model
        self.options = options or InferenceOptions()
        self.tokenizer = tokenizer or RuleTokenizer()
        self.factory = factory
        model.settings(self.options)

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.model.settings(self.options).given().items())
        treebank = f", treebank={self.options.treebank!r}" if self.options.treebank else ""
        return f"Pipeline({self.model.name} model, {settings}, batch_tokens={self.options.batch_tokens}{treebank})"

    def __call__(self, text: str) -> Doc:
        """Split raw ``text`` into sentences, tokens and words with :attr:`tokenizer` and parse them; every word's
        ``start_char``/``end_char`` is its span of ``text`` (``doc.text``)."""
        if not isinstance(text, str):
            raise TypeError(f"expected a str of raw text, got {type(text).__name__}; use parse_tokens for token lists")
        return Doc(self.parse_sentences(self._text_sentences(text, "<text>")), text)

    def parse_tokens(self, sentences: Iterable[Sequence[str]]) -> Doc:
        """Parse pre-tokenised sentences, each a list of token strings: ``[["I", "saw", "her"]]``."""
        if isinstance(sentences, str) or not isinstance(sentences, Iterable):
            raise TypeError("parse_tokens takes a list of sentences, each a list of token strings")
        items = list(sentences)
        if items and all(isinstance(t, str) for t in items):
            raise ValueError("parse_tokens takes a list of sentences, each a list of tokens: wrap one sentence in a list")
        return Doc(self.parse_sentences([token_sentence(t, f"sentence {i}") for i, t in enumerate(items)]))

    def parse_file(self, path: str | Path, input_format: str = "conllu") -> Doc:
        """Parse a file in one of ``spandep parse``'s input formats: ``conllu``, ``conllx``, ``tokens`` (one
        sentence per line, tokens separated by spaces), ``text`` (raw text: ``doc.text`` is the file's text and
        words have offsets into it) or ``lines`` (raw text of a sentence a line, the same way). CoNLL-U columns are
        kept. The whole file is held in memory: for large files use ``parse_sentences(read_input(path, fmt))``."""
        if input_format in RAW_TEXT_FORMATS:
            text = read_raw_text(path)
            split = self.tokenizer.iter_lines if input_format == "lines" else self.tokenizer.iter_sentences
            return Doc(self.parse_sentences(split(text, str(path))), text)
        return Doc(self.parse_sentences(read_input(path, input_format, self.tokenizer)))

    def pipe(self, items: Iterable[Item], batch_size: int = PIPE_BATCH, n_process: int = 1) -> Iterator[Doc]:
        """Parse a (possibly endless) stream lazily, yielding one :class:`Doc` per item, in input order.

        An item is raw text (any number of sentences, none if blank), a list of token strings (one sentence) or a
        :class:`~spandep.data.sentence.Sentence`. Items are read ``batch_size`` at a time and the sentences of a
        batch parsed together: the Docs of a batch are yielded as soon as it is parsed, before the next batch is
        read. ``n_process`` > 1 parses batches in that many spawned processes (up to ``2 × n_process`` batches in
        flight; the output is the same): the script must then call ``pipe`` under ``if __name__ == "__main__":``."""
        if isinstance(items, str) or not isinstance(items, Iterable):
            raise TypeError("pipe takes an iterable of items (texts, token lists, Sentences); for one text call nlp(text)")
        check_counts(("batch_size", batch_size, "pipe_batch"), ("n_process", n_process, "workers"))
        if n_process > 1 and self.factory is None:
            raise ValueError("n_process > 1 needs a pipeline made by spandep.load(), which knows how to load the model again")
        return self._pipe(iter(items), batch_size, n_process)

    def stream(self, items: Iterable[Item]) -> Iterator[Doc]:
        """:meth:`pipe` with its default batch size, in this process (the name of earlier releases)."""
        return self.pipe(items)

    def _pipe(self, items: Iterator[Item], batch_size: int, n_process: int) -> Iterator[Doc]:
        from spandep.pipeline.predict import parse_stream
        from spandep.pipeline.workers import parse_chunks

        shapes: deque[list[tuple[str | None, int]]] = deque()  # per batch read, not yet yielded: each item's text and sentence count

        def chunks() -> Iterator[list[Sentence]]:
            index = 0
            while batch := list(islice(items, batch_size)):
                chunk: list[Sentence] = []
                shape = []
                for item in batch:
                    parts = self._item_sentences(item, index)
                    shape.append((item if isinstance(item, str) else None, len(parts)))
                    chunk.extend(parts)
                    index += 1
                shapes.append(shape)
                yield chunk

        if n_process == 1:
            parsed = (list(parse_stream(self.model, c, self.options, chunk_size=max(1, len(c)))) for c in chunks())
        else:
            assert self.factory is not None  # checked by pipe
            factory = replace(self.factory, options=self.options, threads=self.factory.threads or 1)
            parsed = (sentences for sentences, _ in parse_chunks(factory, chunks(), n_process))
        for sentences in parsed:
            start = 0
            for text, count in shapes.popleft():
                yield Doc(sentences[start : start + count], text)
                start += count

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
        return [token_sentence(item, f"item {index}")]

    def parse_sentences(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        """Parse :class:`~spandep.data.sentence.Sentence` objects lazily, in order: each comes back with HEAD and
        DEPREL set and every other column kept (e.g. from ``spandep.tokenization.inputs.read_input``)."""
        from spandep.pipeline.predict import parse_stream

        return parse_stream(self.model, sentences, self.options)


def load(
    path: str | Path | None = None,
    *,
    device: str = "cpu",
    threads: int | None = None,
    decoder: str | None = None,
    batch_tokens: int = 4000,
    treebank: str | None = None,
    **settings: Any,
) -> Pipeline:
    """Load a model as a :class:`Pipeline`: a shipped model's name (``"en"``, the default; ``spandep models`` lists
    them) or a model folder (``None``: ``$SPANDEP_MODEL``, else ``"en"``), with the folder's trained tokenizer (its
    ``tokenizer/``) for raw text, else the rule fallback.

    ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (CUDA when there is one). ``threads``: torch's
    CPU threads for this process (``None``: torch's default) and for each worker of ``pipe(n_process=...)``
    (``None``: 1). ``decoder``: ``"mst"`` (non-projective) or ``"projective"``; ``None`` keeps the model's choice
    from dev. ``batch_tokens``: words per batch (lower it if memory runs out). ``settings`` override the model's
    other inference settings chosen on dev (span models: ``k``, ``lam``, ``retrieval``, ``mutual``,
    ``arc_weight``, ``label_source``; see :class:`~spandep.inference.InferenceOptions`). ``treebank``: for a model
    trained on several treebanks, the one to parse as (its labels, tags and tokenizer; a shipped name such as
    ``"fr"`` names its own); a ``ValueError`` listing the model's treebanks when it is missing or unknown. Raises
    :class:`~spandep.errors.ModelError` for a missing or unreadable model, an unknown name, a base encoder not
    installed (its message names ``make models``) or a CUDA device this machine lacks and
    ``ValueError`` for a bad option (an unknown device name included).
    """
    from spandep.pipeline.model_io import resolve_model
    from spandep.pipeline.workers import ParserFactory
    from spandep.tokenization import tokenizer_for

    if threads is not None:
        check_counts(("threads", threads, "threads"))
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'cpu', 'cuda', 'cuda:1' or 'auto', not {device!r}")
    choice = resolve_model(path)
    options = choice.options(InferenceOptions.from_dict({"decoder": decoder, "batch_tokens": batch_tokens, "treebank": treebank, **settings}))
    factory = ParserFactory(str(choice.folder), options, threads or 0, device)
    return Pipeline(factory.load(), options, tokenizer_for(choice.folder, options.treebank), factory)
