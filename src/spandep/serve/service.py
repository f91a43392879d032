"""What the web service does, without HTTP: the loaded models, reading a request's data, parsing it on the worker,
and writing the result with the writers of ``spandep parse``.

A request's data is read by the readers of ``spandep parse`` (:class:`~spandep.data.conllu.InputBytes`: its bytes,
read as a file holding them would be) and its result written by :func:`~spandep.data.writers.write_sentences`, so
a response holds what ``spandep parse`` writes for that data and those options. Reading (tokenizing raw text is CPU
work too) and parsing run on the :class:`~spandep.serve.batcher.Batcher`'s worker, a turn at a time, round-robin
with other clients' requests and batched with them: a turn's sentences are sorted by length and parsed in groups of
like length (the few sentences of a turn, unlike ``spandep parse``'s chunks of 512, would otherwise pad short ones
to long ones). Writing runs in a thread of the event loop's pool. Every request is bounded (its data, words per
sentence, sentences, words: 413 naming the option that raises the limit) and timed (504 after ``--timeout``, and
its work stops at its next turn, as when its client disconnects).
"""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any


from spandep.data.batching import length_groups
from spandep.data.conllu import FORMATS, InputBytes, read_conllu
from spandep.data.sentence import Sentence
from spandep.data.writers import write_sentences
from spandep.malloc import trim
from spandep.options import InferenceOptions
from spandep.serve.batcher import Batcher, QueueFull
from spandep.serve.memory import TRIM_EVERY_S
from spandep.serve.naming import Names
from spandep.tokenization.inputs import RAW_TEXT_FORMATS, read_input

if TYPE_CHECKING:
    from collections.abc import Hashable

    from spandep.api import Pipeline

__all__ = ["ClientGone", "ParseRequest", "Service", "ServiceError", "ServiceSettings", "render"]

TAG_COLUMNS = ("upos", "xpos", "feats", "lemma")
PARSE_COLUMNS = ("head", "deprel", "head_prob", "label_prob")
BYTES_PER_WORD = 6  # a request's words, before it is read, for Retry-After: English prose has about 5 bytes a word and a space
LENGTH_RATIO = 1.5  # a batch is parsed in groups of sentences of like length (docs/serve.md, "Batching")
CREDIT = "spandep: dependency parsing as MRC-based span-span prediction (Gan et al., ACL 2022)"


class ServiceError(Exception):
    """A request the service refuses: an HTTP ``status``, a one-line ``message`` saying how to fix it, and
    ``headers`` (``Retry-After`` for a full queue)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class ClientGone(Exception):
    """The client disconnected while its request waited: its work was dropped, nobody is left to answer."""


@dataclass(frozen=True)
class ServiceSettings:
    """``spandep serve``'s options (each bounded in :mod:`spandep.limits` under its option's name): the limits of a
    request, of the queue and of connections, how turns are made, and who may call (origins, host names)."""

    batch_words: int = 1000  # words (a sentence counts one more) the worker takes at a time: the most a request waits for another's
    batch_tokens: int = 1000  # padded words per batch of the model, as parse's --batch-tokens (see docs/serve.md)
    wait_ms: float = 10.0  # how long a turn waits for more requests when the queue has none of its model
    max_queue: int = 256  # requests waiting for the worker; one more gets 503
    max_bytes: int = 200_000  # a request's data; more gets 413
    timeout_s: float = 120.0  # from arrival to parsed; later gets 504 (and the work stops)
    max_sentence_words: int = 1000  # words in one sentence (UDPipe's limit); more gets 413
    max_sentences: int = 10_000  # sentences in one request; more gets 413
    max_words: int = 50_000  # words in one request; more gets 413
    read_timeout_s: float = 30.0  # a connection sends a whole request (head and body) within this, or is closed
    idle_timeout_s: float = 5.0  # a kept-alive connection may wait this long for its next request
    max_connections: int = 512  # open connections; past it the oldest idle one is closed (else the new one)
    host: str = "127.0.0.1"  # the address listened on (a loopback one: Host names are checked)
    allow_hosts: tuple[str, ...] = ()  # Host names taken besides the loopback ones ("*": any)
    allow_origins: tuple[str, ...] = ()  # Origins of other sites that may call ("*": any)
    cors: bool = False  # send Access-Control-Allow-Origin: * (UDPipe's public service does), which allows any origin


@dataclass(frozen=True)
class ParseRequest:
    """One request: ``data`` (its bytes), the served ``model``'s name (``None``: the default), the input format of
    ``spandep parse``, the raw-text ``tokenizer`` (``model`` or ``rules``), the inference ``options`` (the settings
    it gives, put over the served pipeline's own, whose treebank it keeps; its batch size), and whether
    to tag and to parse (UDPipe's ``tagger`` and ``parser``: a column not predicted is kept as the input had it);
    ``retag``: blank the input's UPOS, XPOS, FEATS and LEMMA that the model has a head for before parsing, so it
    predicts them afresh (UDPipe's ``tagger`` on ``/process``; a column the model cannot predict stays the user's;
    ``spandep parse`` and ``/parse`` fill only what the input leaves blank)."""

    data: bytes
    model: str | None = None
    input_format: str = "text"
    tokenizer: str = "model"
    options: InferenceOptions = InferenceOptions()
    tag: bool = True
    parse: bool = True
    retag: bool = False


def render(sentences: list[Sentence], fmt: str, confidence: bool = False) -> str:
    """What ``spandep parse --output-format FMT [--confidence]`` writes for ``sentences``."""
    out = io.StringIO()
    write_sentences(sentences, out, fmt, confidence)
    return out.getvalue()


def _kept(parsed: Sentence, given: Sentence, columns: tuple[str, ...]) -> Sentence:
    words = [replace(p, **{c: getattr(g, c) for c in columns}) for p, g in zip(parsed.words, given.words)]
    confidence = None if "head" in columns else parsed.confidence
    return replace(parsed, words=words, confidence=confidence)


def _too_many(what: str, most: int, option: str) -> ServiceError:
    """The 413 of a request with more ``what`` (sentences, words) than ``most``, naming the ``option`` that raises it."""
    return ServiceError(413, f"more than {most} {what} in one request; this server takes at most {most} ({option}): send it in parts")


class Service:
    """The served models by name (the first is the default), the names they answer to, and the batcher."""

    def __init__(self, models: dict[str, Pipeline], settings: ServiceSettings) -> None:
        from spandep.storage.catalogue import find, shipped_models

        if not models:
            raise ValueError("a service needs at least one model")
        self.models = models
        self.default = next(iter(models))
        self.settings = settings
        shipped = {line.name: line for line in shipped_models()}
        lines = {n: find(n, shipped) for n in models}  # the catalogue line spandep.load found for each name (None: a folder)
        self.notes = {n: f"{line.treebank} ({line.language})" for n, line in lines.items() if line}  # for acknowledgements
        self.names = Names(lines)
        self.batcher = Batcher(self._parse_batch, settings.batch_words, settings.wait_ms / 1000, settings.max_queue)
        self.trimmed = 0.0  # when the worker last handed free memory back (spandep.malloc.trim)

    @classmethod
    def load(
        cls, names: list[str], settings: ServiceSettings, threads: int | None = None, device: str = "cpu", precision: str | None = None
    ) -> Service:
        """A service of the models ``names`` (shipped names or folders, as ``spandep.load`` takes them; none: the
        default model, served under the name it resolves from: ``$SPANDEP_MODEL``, else ``en``), each loaded once,
        and the names of one folder (the treebanks of the multilingual model) parsing with one copy of it, so memory
        grows with the folders served, not the names; ``precision``: the encoder's, over each model's saved one
        (``None``: the model's)."""
        from spandep.api import ModelSpec
        from spandep.storage.catalogue import read_catalogue

        default = read_catalogue()[0]
        options = InferenceOptions(batch_tokens=settings.batch_tokens, precision=precision)
        pipelines: dict[str, Pipeline] = {}
        for name in names or [os.environ.get("SPANDEP_MODEL") or default]:
            spec = ModelSpec.resolve(name, options, threads=threads or 0, device=device)
            held = next((p for p in pipelines.values() if spec.shares(p)), None)
            pipelines[name] = spec.load(held.model if held is not None else None)
        return cls(pipelines, settings)

    def start(self) -> None:
        self.batcher.start()

    def stop(self) -> None:
        """Finish what is queued, then stop the worker (after the server has stopped taking requests)."""
        self.batcher.stop()

    def model_name(self, name: str | None) -> str:
        """The served model a request names (UDPipe's way: :mod:`spandep.serve.naming`); ``None`` or "": the default."""
        if name is None or name == "":
            return self.default
        found = self.names.resolve(name)
        if found is None:
            raise ServiceError(400, f"unknown model {name!r}; this server has {', '.join(self.models)} (GET /models)")
        return found

    def components(self, name: str) -> list[str]:
        """What a model does, in UDPipe's words: every model tokenizes and parses; ``tagger`` when it has output
        heads (UPOS, XPOS, FEATS or lemmas)."""
        return ["tokenizer", *(["tagger"] if len(self.models[name].model.heads) else []), "parser"]

    def acknowledgements(self, name: str) -> list[str]:
        return [CREDIT, *([f"model {name}: {self.notes[name]}"] if name in self.notes else [])]

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok", "models": list(self.models),
            "queued": self.batcher.queued(), "parsing": self.batcher.parsing, **self.batcher.counters.as_dict(),
        }

    def options(
        self, decoder: str | None = None, k: int | None = None, lam: float | None = None, enhanced: bool = False,
        keep: str | None = None,
    ) -> InferenceOptions:
        """Inference options of a request, to put over each served pipeline's own (400 for a value out of its
        range)."""
        try:
            return InferenceOptions(decoder=decoder, k=k, lam=lam, batch_tokens=self.settings.batch_tokens, enhanced=enhanced, keep=keep)
        except ValueError as exc:
            raise ServiceError(400, str(exc)) from None

    async def parse(self, request: ParseRequest, gone: Callable[[], Awaitable[None]] | None = None) -> list[Sentence]:
        """The request's sentences, read as ``spandep parse`` reads its input, then tagged and parsed on the worker;
        ``gone`` returns when the client disconnects (its work is then dropped: :class:`ClientGone`)."""
        name = self.model_name(request.model)
        self._check_size(request)
        if request.options.keep and request.input_format not in FORMATS:
            raise ServiceError(400, f"keep: heads are read from conllu or conllx input, not {request.input_format}: send CoNLL-U with HEADs given")
        try:  # the pipeline's options (its treebank) with the request's settings over them
            options = self.models[name].options_for(
                batch_tokens=request.options.batch_tokens, enhanced=request.options.enhanced, keep=request.options.keep, **request.options.given()
            )
        except ValueError as exc:
            raise ServiceError(400, f"model {name}: {exc}") from None
        given: list[Sentence] = []
        key = (name, options) if request.tag or request.parse else None
        try:
            future = self.batcher.submit(key, lambda: self._read(name, request, given), len(request.data) // BYTES_PER_WORD)
        except QueueFull as full:
            raise ServiceError(503, f"server busy: {self.batcher.max_queue} requests are waiting; retry after {full.retry_after} s",
                               {"Retry-After": str(full.retry_after)}) from None
        parsed = await self._wait(asyncio.wrap_future(future), gone)
        if key is not None and not request.tag:
            parsed = [_kept(p, g, TAG_COLUMNS) for p, g in zip(parsed, given)]
        if key is not None and not request.parse:
            parsed = [_kept(p, g, PARSE_COLUMNS) for p, g in zip(parsed, given)]
        return parsed

    async def _wait(self, answer: asyncio.Future[list[Sentence]], gone: Callable[[], Awaitable[None]] | None) -> list[Sentence]:
        """``answer``'s sentences within ``--timeout``: else 504, or :class:`ClientGone` when ``gone`` returns first;
        either way the job is cancelled (the worker drops it at its next turn)."""
        watch = asyncio.ensure_future(gone()) if gone is not None else None
        try:
            done, _ = await asyncio.wait([answer, *([watch] if watch else [])], timeout=self.settings.timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if watch is not None:
                watch.cancel()
        if answer in done:
            return answer.result()
        answer.cancel()
        if watch is not None and watch in done:
            raise ClientGone()
        raise ServiceError(504, f"not parsed within {self.settings.timeout_s:g} s (--timeout): send less data per request, or raise --timeout")

    def _check_size(self, request: ParseRequest) -> None:
        """413 at once for what the bytes alone show: more than ``--max-bytes``; for raw text or tokens, more pieces
        between spaces than ``--max-words`` (each is a word at least), or more lines than ``--max-sentences`` when
        each line is a sentence."""
        s, data = self.settings, request.data
        if len(data) > s.max_bytes:
            raise ServiceError(413, f"data of {len(data)} bytes; this server takes at most {s.max_bytes} (--max-bytes): send it in parts")
        if request.input_format not in FORMATS and len(data.split()) > s.max_words:
            raise _too_many("words", s.max_words, "--max-words")
        if request.input_format in ("lines", "tokens") and sum(1 for line in data.splitlines() if line.strip()) > s.max_sentences:
            raise _too_many("sentences", s.max_sentences, "--max-sentences")

    def _read(self, name: str, request: ParseRequest, given: list[Sentence]) -> list[Sentence]:
        """The request's sentences as read (into ``given``) and as they go to the model (tags blanked for UDPipe's
        ``tagger``: ``retag``); 400 for a bad input, 413 past a limit. Runs on the worker."""
        from spandep.pipeline.long import check_kept_length
        from spandep.tokenization import RuleTokenizer

        s = self.settings
        fmt = request.input_format
        tokenizer = (RuleTokenizer() if request.tokenizer == "rules" else self.models[name].tokenizer) if fmt in RAW_TEXT_FORMATS else None
        source = InputBytes("data", request.data)
        words = 0
        try:  # a CoNLL input's HEAD is read when the parser is off (it comes back as it was, with its DEPREL) or keeps it
            for sentence in read_conllu(source, fmt, heads=not request.parse or bool(request.options.keep)) if fmt in FORMATS else read_input(source, fmt, tokenizer):
                words += len(sentence)
                if len(sentence) > s.max_sentence_words:
                    raise ServiceError(413, f"data:{sentence.line}: a sentence of {len(sentence)} words; this server takes at most {s.max_sentence_words} words per sentence (--max-sentence-words): split it")
                if len(given) == s.max_sentences:
                    raise _too_many("sentences", s.max_sentences, "--max-sentences")
                if words > s.max_words:
                    raise _too_many("words", s.max_words, "--max-words")
                given.append(sentence)
            if request.options.keep:  # heads no tree keeps: this request's 400 here, not an error of the turn it is parsed in
                pipeline = self.models[name]
                settings = pipeline.model.settings(pipeline.options_for(keep=request.options.keep, **request.options.given()))
                for sentence in given:
                    check_kept_length(sentence, settings)
                    pipeline.model.constraints(sentence, settings)
        except ValueError as exc:  # InputFormatError: "data:LINE: reason"
            raise ServiceError(400, str(exc)) from None
        predicted = tuple(c for c in TAG_COLUMNS if c in self.models[name].model.heads)
        return [x.blanked(predicted) for x in given] if request.retag and predicted else given

    def _parse_batch(self, key: Hashable, sentences: list[Sentence]) -> list[Sentence]:
        name, options = key  # type: ignore[misc]
        parsed: list[Sentence | None] = [None] * len(sentences)
        for group in length_groups([len(s) for s in sentences], LENGTH_RATIO):
            for i, s in zip(group, self.models[name].parse_chunk([sentences[i] for i in group], options)[0]):
                parsed[i] = s
        if not self.batcher.queued() or time.monotonic() - self.trimmed >= TRIM_EVERY_S:  # the turn's peak back, when idle or every 2 s
            trim()
            self.trimmed = time.monotonic()
        return parsed  # type: ignore[return-value]
