"""The Python API: ``nlp = spandep.load(); doc = nlp("Some text.")``, and the one way every front end loads a model.

A :class:`ModelSpec` says how to load a model (its folder, inference options, threads, device, int8) and holds
nothing live, so it pickles cheaply; :meth:`ModelSpec.resolve` resolves a model's name once, and
:meth:`ModelSpec.load` gives a :class:`Pipeline`. The CLI, the service, the workers, Ray, spaCy and the API all parse
through a Pipeline (:meth:`Pipeline.run`).

A :class:`Pipeline` is a loaded model, its tokenizer and its inference options (the treebank of a model of several
included); each parse may put settings of its own over them. It parses raw text (split into sentences, tokens and
the words of multiword tokens by the model's trained tokenizer, or by the lossless rule fallback for a model without
one), pre-tokenised sentences, files in any input format of ``spandep parse``, and streams of any of these
(``nlp.pipe``), always in input order and batched. Results are :class:`~spandep.document.Doc` objects: sentences of
words with their head word, relation, tags and character offsets into the input (docs/api.md). Bad input raises a
``ValueError`` (a ``TypeError`` for an argument of the wrong type) that names the problem.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spandep.data.conllu import check_text, token_sentence
from spandep.data.sentence import Sentence
from spandep.document import Doc
from spandep.errors import InputFormatError
from spandep.options import DEFAULT_BATCH_TOKENS, InferenceOptions, InferenceStats
from spandep.limits import check_counts
from spandep.tokenization.inputs import RAW_TEXT_FORMATS, read_input, read_raw_text

if TYPE_CHECKING:
    from spandep.models.base import Parser
    from spandep.tokenization.text import Tokenizer

__all__ = ["Doc", "Item", "ModelSpec", "Pipeline", "load"]

Item = str | Sequence[str] | Sentence  # raw text, one pre-tokenised sentence, or a read sentence
PIPE_BATCH = 256  # items per batch of nlp.pipe
CHUNK = 2000  # sentences Pipeline.run parses together


@dataclass(frozen=True)
class ModelSpec:
    """Everything that loads a model, and nothing live (a worker process, a Ray actor or a process of
    ``pipe(n_process=...)`` loads from it): the model ``folder``, the inference ``options`` (the treebank of a model
    of several included), torch CPU ``threads`` (0: torch's default), ``device`` and ``int8`` (int8 matrix products
    in the encoder). :meth:`resolve` makes one from a model's name."""

    folder: Path
    options: InferenceOptions = field(default_factory=InferenceOptions)
    threads: int = 0
    device: str = "cpu"
    int8: bool = False

    @classmethod
    def resolve(cls, model: str | Path | None = None, options: InferenceOptions | None = None, **how: Any) -> ModelSpec:
        """The spec of ``model``: a shipped model's name, a model folder, or ``None`` (``$SPANDEP_MODEL``, else the
        default), resolved here, once (``ModelError`` for a bare word that is neither); ``options`` get a shipped
        name's treebank where they name none; ``how``: ``threads``, ``device``, ``int8``."""
        from spandep.storage.model_io import resolve_model

        choice = resolve_model(model)
        return cls(choice.folder, choice.options(options or InferenceOptions()), **how)

    def load_model(self) -> Parser:
        """The model alone, loaded in this process (``threads`` torch threads when set), in eval mode; one that parses
        in bfloat16 holds its encoder in it (:mod:`spandep.storage.precision`: the same parses in less memory; such
        a pipeline parses in bfloat16 only)."""
        import torch

        from spandep.storage.model_io import load_model
        from spandep.storage.precision import hold_bfloat16

        if self.threads:
            torch.set_num_threads(self.threads)
        model = load_model(self.folder, self.device, self.int8, merge_adapter=False)
        try:
            precision = model.settings(self.options).precision
        except ValueError:  # options the model does not take: reported by whoever parses (Pipeline, the commands)
            precision = None
        if precision != "bfloat16" or not hold_bfloat16(model):  # holding merges the adapter a layer at a time
            model.encoder.merge_adapter()
        return model

    def load(self, model: Parser | None = None) -> Pipeline:
        """The :class:`Pipeline`: the model, its folder's tokenizer (of the treebank of ``options``) and ``options``
        (``ValueError`` for a setting the model does not take). ``model``: this folder's model loaded already, on
        this device and at this precision (by another spec of the folder: a service of several names of one
        multilingual folder holds its model once, :meth:`shares`)."""
        from spandep.encoders.bases import resolve_model_path
        from spandep.tokenization import tokenizer_for

        # a base encoder's features by name; a precision asked for (not the model's saved one) is the tokenizer's too
        tokenizer = tokenizer_for(self.folder, self.options.treebank, resolve_model_path, self.options.precision)
        return Pipeline(model or self.load_model(), self.options, tokenizer, self)

    def shares(self, pipeline: Pipeline) -> bool:
        """Whether this spec may parse with ``pipeline``'s model (:meth:`load`'s ``model``): the same folder, device,
        int8 and threads, and the same encoder precision (a bfloat16 model holds its encoder in it)."""
        other = pipeline.spec
        if other is None or (other.folder.resolve(), other.device, other.int8, other.threads) != (self.folder.resolve(), self.device, self.int8, self.threads):
            return False
        try:
            return pipeline.model.settings(self.options).precision == pipeline.model.settings(other.options).precision
        except ValueError:  # options the model does not take: loaded apart, to report them
            return False


class Pipeline:
    """A loaded parser, the tokenizer for its raw text (``None``: the rule fallback) and its inference options; made
    by :func:`load` or :meth:`ModelSpec.load`. ``spec`` loads the same pipeline in another process (workers,
    ``pipe(n_process=...)``; ``ModelSpec.load`` sets it). ``ValueError`` for options the model's type does not have
    (``k`` for a Biaffine model), or without the treebank a model of several needs.

    Each parse may take settings of its own (keywords such as ``k=5``, ``decoder="mst"``: :meth:`options_for`), put
    over the pipeline's options; the treebank stays the pipeline's unless one is named."""

    def __init__(
        self,
        model: Parser,
        options: InferenceOptions | None = None,
        tokenizer: Tokenizer | None = None,
        spec: ModelSpec | None = None,
    ) -> None:
        from spandep.tokenization import RuleTokenizer

        self.model = model
        self.options = options or InferenceOptions()
        self.tokenizer = tokenizer or RuleTokenizer()
        self.spec = spec
        model.settings(self.options)

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.model.settings(self.options).given().items())
        treebank = f", treebank={self.options.treebank!r}" if self.options.treebank else ""
        return f"Pipeline({self.model.name} model, {settings}, batch_tokens={self.options.batch_tokens}{treebank})"

    def options_for(self, **settings: Any) -> InferenceOptions:
        """The options of one parse: the pipeline's with ``settings`` (fields of
        :class:`~spandep.options.InferenceOptions`) over them; ``ValueError`` for an unknown or bad setting, or one
        the model does not take."""
        if not settings:
            return self.options
        options = InferenceOptions.from_dict({**asdict(self.options), **settings})
        self.model.settings(options)
        return options

    def __call__(self, text: str, **settings: Any) -> Doc:
        """Split raw ``text`` into sentences, tokens and words with :attr:`tokenizer` and parse them; every word's
        ``start_char``/``end_char`` is its span of ``text`` (``doc.text``). ``settings``: :meth:`options_for`."""
        if not isinstance(text, str):
            raise TypeError(f"expected a str of raw text, got {type(text).__name__}; use parse_tokens for token lists")
        options = self.options_for(**settings)
        return Doc(self.run(self._text_sentences(text, "<text>"), options), text)

    def parse_tokens(self, sentences: Iterable[Sequence[str]], fixed: Sequence[Mapping[int, Any]] | None = None, **settings: Any) -> Doc:
        """Parse pre-tokenised sentences, each a list of token strings: ``[["I", "saw", "her"]]``. ``fixed``: what
        the parse keeps, a mapping per sentence from a word's 1-based id to its head's id (0: the root) or to a
        ``(head, deprel)`` pair: ``[{3: 2}]`` or ``[{3: (2, "obj")}]`` (docs/constrained.md)."""
        if isinstance(sentences, str) or not isinstance(sentences, Iterable):
            raise TypeError("parse_tokens takes a list of sentences, each a list of token strings")
        items = list(sentences)
        if items and all(isinstance(t, str) for t in items):
            raise ValueError("parse_tokens takes a list of sentences, each a list of tokens: wrap one sentence in a list")
        data = [token_sentence(t, f"sentence {i}") for i, t in enumerate(items)]
        if fixed is not None:
            data, settings = _with_fixed(data, fixed), {"keep": "heads,deprels", **settings}
        return Doc(self.parse_sentences(data, **settings))

    def parse_file(self, path: str | Path, input_format: str = "conllu", **settings: Any) -> Doc:
        """Parse a file in one of ``spandep parse``'s input formats: ``conllu``, ``conllx``, ``tokens`` (one
        sentence per line, tokens separated by spaces), ``text`` (raw text: ``doc.text`` is the file's text and
        words have offsets into it) or ``lines`` (raw text of a sentence a line, the same way). CoNLL-U columns are
        kept. The whole file is held in memory: for large files use ``parse_sentences(read_input(path, fmt))``."""
        options = self.options_for(**settings)
        if input_format in RAW_TEXT_FORMATS:
            text = read_raw_text(path)
            split = self.tokenizer.iter_lines if input_format == "lines" else self.tokenizer.iter_sentences
            return Doc(self.run(split(text, str(path)), options), text)
        return Doc(self.run(read_input(path, input_format, self.tokenizer, options.keep is not None), options))

    def pipe(self, items: Iterable[Item], batch_size: int = PIPE_BATCH, n_process: int = 1, **settings: Any) -> Iterator[Doc]:
        """Parse a (possibly endless) stream lazily, yielding one :class:`Doc` per item, in input order.

        An item is raw text (any number of sentences, none if blank), a list of token strings (one sentence) or a
        :class:`~spandep.data.sentence.Sentence`. Items are read ``batch_size`` at a time and the sentences of a
        batch parsed together: the Docs of a batch are yielded as soon as it is parsed, before the next batch is
        read. ``n_process`` > 1 parses batches in that many spawned processes (up to ``2 × n_process`` batches in
        flight; the output is the same): the script must then call ``pipe`` under ``if __name__ == "__main__":``.
        ``settings``: :meth:`options_for`."""
        if isinstance(items, str) or not isinstance(items, Iterable):
            raise TypeError("pipe takes an iterable of items (texts, token lists, Sentences); for one text call nlp(text)")
        check_counts(("batch_size", batch_size, "pipe_batch"), ("n_process", n_process, "workers"))
        options = self.options_for(**settings)
        spec = self.worker_spec(options) if n_process > 1 else None
        return self._pipe(iter(items), batch_size, n_process, options, spec)

    def stream(self, items: Iterable[Item]) -> Iterator[Doc]:
        """:meth:`pipe` with its default batch size, in this process (the name of earlier releases)."""
        return self.pipe(items)

    def _pipe(
        self, items: Iterator[Item], batch_size: int, n_process: int, options: InferenceOptions, spec: ModelSpec | None
    ) -> Iterator[Doc]:
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

        if spec is None:
            parsed = (self.parse_chunk(c, options)[0] for c in chunks())
        else:
            parsed = (sentences for sentences, _ in parse_chunks(spec, chunks(), n_process))
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

    def parse_sentences(self, sentences: Iterable[Sentence], **settings: Any) -> Iterator[Sentence]:
        """Parse :class:`~spandep.data.sentence.Sentence` objects lazily, in order: each comes back with HEAD and
        DEPREL set and every other column kept (e.g. from ``spandep.tokenization.inputs.read_input``). ``settings``:
        :meth:`options_for`."""
        return self.run(sentences, self.options_for(**settings))

    def run(
        self,
        sentences: Iterable[Sentence],
        options: InferenceOptions | None = None,
        chunk_size: int = CHUNK,
        stats: InferenceStats | None = None,
    ) -> Iterator[Sentence]:
        """The parse every front end runs: ``sentences`` lazily, ``chunk_size`` at a time, in input order and with
        bounded memory, with ``options`` (:meth:`options_for`'s; ``None``: the pipeline's; ``enhanced``: each with
        its enhanced graph in DEPS, :func:`spandep.enhancement.enhance`); ``stats`` accumulates the run's counters."""
        from spandep.pipeline.predict import parse_stream

        options = options or self.options
        parsed = parse_stream(self.model, sentences, options, chunk_size, stats)
        return _enhanced(parsed, self.language(options)) if options.enhanced else parsed

    def language(self, options: InferenceOptions | None = None) -> str | None:
        """The ISO 639-1 code of the language parsed with ``options`` (the pipeline's by default): the treebank's,
        for a model of several, else the shipped model's; ``None`` for a model folder of the user's."""
        from spandep.storage.catalogue import model_language

        treebank = (options or self.options).treebank
        return model_language(None, treebank) if treebank else self._folder_language

    @cached_property
    def _folder_language(self) -> str | None:
        """The language of the shipped model in this pipeline's folder, looked up in the catalogue once (not at every
        chunk a worker, an actor or the service parses)."""
        from spandep.storage.catalogue import model_language

        return model_language(self.spec.folder if self.spec else None)

    def parse_chunk(self, chunk: list[Sentence], options: InferenceOptions | None = None) -> tuple[list[Sentence], InferenceStats]:
        """One chunk parsed together (:meth:`run` of a chunk its size: what a worker or an actor does with each), and
        its counters."""
        stats = InferenceStats()
        return list(self.run(chunk, options, max(1, len(chunk)), stats)), stats

    def worker_spec(self, options: InferenceOptions | None = None) -> ModelSpec:
        """The spec a worker process loads this pipeline from, to parse with ``options`` (``None``: the pipeline's),
        with one torch thread unless the spec says more; ``ValueError`` for a pipeline not made from a spec."""
        if self.spec is None:
            raise ValueError("n_process > 1 needs a pipeline made by spandep.load(), which knows how to load the model again")
        return replace(self.spec, options=options or self.options, threads=self.spec.threads or 1)


def _enhanced(parsed: Iterator[Sentence], language: str | None) -> Iterator[Sentence]:
    """``parsed`` with each sentence's enhanced graph in DEPS, written by ``language``'s conventions (English's for
    a language without its own); closing it closes ``parsed`` (and its workers)."""
    from spandep.enhancement import CONVENTIONS, ENGLISH, RULES, enhance

    conventions = CONVENTIONS.get(language or "", ENGLISH)
    with contextlib.closing(parsed):  # type: ignore[type-var]
        for sentence in parsed:
            yield enhance(sentence, RULES, conventions)


def _with_fixed(sentences: list[Sentence], fixed: Sequence[Mapping[int, Any]]) -> list[Sentence]:
    """``sentences`` with the heads (and labels) of ``fixed`` (:meth:`Pipeline.parse_tokens`) in their HEAD and
    DEPREL; a ``ValueError`` (``TypeError`` for a wrong type) naming the sentence and word for a bad one."""
    if isinstance(fixed, Mapping) or not isinstance(fixed, Sequence) or len(fixed) != len(sentences):
        raise TypeError(f"fixed must be a list of {len(sentences)} mappings, one per sentence ({{word id: head id or (head id, deprel)}})")
    out = []
    for i, (sentence, given) in enumerate(zip(sentences, fixed)):
        if not isinstance(given, Mapping):
            raise TypeError(f"fixed, sentence {i}: expected a mapping {{word id: head id or (head id, deprel)}}, got {type(given).__name__}")
        words = list(sentence.words)
        for word, value in given.items():
            head, deprel = value if isinstance(value, tuple) and len(value) == 2 else (value, "_")
            n = len(words)
            if not isinstance(word, int) or not 1 <= word <= n or not isinstance(head, int) or not 0 <= head <= n:
                raise ValueError(f"fixed, sentence {i}: {word!r}: {value!r} must map a word id 1..{n} to a head id 0..{n} (or a (head, deprel) pair)")
            if not isinstance(deprel, str) or not deprel or any(c.isspace() for c in deprel):
                raise ValueError(f"fixed, sentence {i}, word {word}: the deprel {deprel!r} must be a label without spaces")
            words[word - 1] = replace(words[word - 1], head=head, deprel=deprel)
        out.append(replace(sentence, words=words))
    return out


def load(
    path: str | Path | None = None,
    *,
    device: str = "cpu",
    threads: int | None = None,
    decoder: str | None = None,
    batch_tokens: int = DEFAULT_BATCH_TOKENS,
    treebank: str | None = None,
    int8: bool = False,
    **settings: Any,
) -> Pipeline:
    """Load a model as a :class:`Pipeline` (:meth:`ModelSpec.load`): a shipped model's name (``"en"``, the default;
    ``spandep models`` lists them) or a model folder (``None``: ``$SPANDEP_MODEL``, else ``"en"``), with the folder's
    trained tokenizer (its ``tokenizer/``) for raw text, else the rule fallback.

    ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (CUDA when there is one). ``threads``: torch's
    CPU threads for this process (``None``: torch's default) and for each worker of ``pipe(n_process=...)``
    (``None``: 1). ``decoder``: ``"mst"`` (non-projective) or ``"projective"``; ``None`` keeps the model's choice
    from dev. ``batch_tokens``: words per batch (lower it if memory runs out). ``settings`` override the model's
    other inference settings chosen on dev (span models: ``k``, ``lam``, ``retrieval``, ``mutual``,
    ``arc_weight``, ``label_source``, ``prune``; every model: ``precision``, ``"float32"`` or ``"bfloat16"`` matrix
    products; see :class:`~spandep.options.InferenceOptions`). ``treebank``: for a model
    trained on several treebanks, the one to parse as (its labels, tags and tokenizer; a shipped name such as
    ``"fr"`` names its own); a ``ValueError`` listing the model's treebanks when it is missing or unknown. ``int8``:
    int8 matrix products in the encoder (CPU; faster, its accuracy cost in BENCHMARKS.md). Raises
    :class:`~spandep.errors.ModelError` for a missing or unreadable model, an unknown name, a base encoder not
    installed (its message names ``make models``) or a CUDA device this machine lacks and ``ValueError`` for a bad
    option (an unknown device name included).
    """
    if threads is not None:
        check_counts(("threads", threads, "threads"))
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'cpu', 'cuda', 'cuda:1' or 'auto', not {device!r}")
    options = InferenceOptions.from_dict({"decoder": decoder, "batch_tokens": batch_tokens, "treebank": treebank, **settings})
    return ModelSpec.resolve(path, options, threads=threads or 0, device=device, int8=int8).load()
