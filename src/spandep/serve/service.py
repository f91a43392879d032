"""What the web service does, without HTTP: the loaded models, reading a request's data, batching the parse, and
writing the result with the writers of ``spandep parse``.

A request's data is read by the readers of ``spandep parse`` (:class:`~spandep.data.conllu.InputBytes`: its bytes,
read as a file holding them would be) and its result written by :func:`~spandep.data.writers.write_sentences`, so
a response holds what ``spandep parse`` writes for that data and those options. Reading and writing run in
threads of the event loop's pool; parsing runs on the :class:`~spandep.serve.batcher.Batcher`'s worker, batched
with other clients' requests: a batch's sentences are sorted by length and parsed in groups of like length (the few
sentences of a batch, unlike ``spandep parse``'s chunks of 512, would otherwise pad short ones to long ones).
"""

from __future__ import annotations

import asyncio
import io
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool

from spandep.data.batching import length_groups
from spandep.data.conllu import RAW_TEXT_FORMATS, InputBytes, read_input
from spandep.data.sentence import Sentence
from spandep.data.writers import write_sentences
from spandep.inference import InferenceOptions
from spandep.serve.batcher import Batcher, QueueFull

if TYPE_CHECKING:
    from collections.abc import Hashable

    from spandep.api import Pipeline

__all__ = ["ParseRequest", "Service", "ServiceError", "ServiceSettings", "render"]

TAG_COLUMNS = ("upos", "xpos", "feats", "lemma")
PARSE_COLUMNS = ("head", "deprel", "head_prob", "label_prob")
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


@dataclass(frozen=True)
class ServiceSettings:
    """``spandep serve``'s options: the limits of a request and of the queue, and how batches are made."""

    batch_words: int = 4000  # the token budget of a batch of requests: words gathered from the queue
    batch_tokens: int = 1000  # padded words per batch of the model, as parse's --batch-tokens (see docs/serve.md)
    wait_ms: float = 10.0  # how long a batch waits for more requests when the queue has none
    max_queue: int = 256  # requests waiting for the model; one more gets 503
    max_bytes: int = 200_000  # request body and data; more gets 413
    timeout_s: float = 120.0  # from arrival to parsed; later gets 504


@dataclass(frozen=True)
class ParseRequest:
    """One request: ``data`` (its bytes), the served ``model``'s name (``None``: the default), the input format of
    ``spandep parse``, the raw-text ``tokenizer`` (``model`` or ``rules``), the inference ``options``, and whether
    to tag and to parse (UDPipe's ``tagger`` and ``parser``: a column not predicted is kept as the input had it)."""

    data: bytes
    model: str | None = None
    input_format: str = "text"
    tokenizer: str = "model"
    options: InferenceOptions = InferenceOptions()
    tag: bool = True
    parse: bool = True


def render(sentences: list[Sentence], fmt: str, confidence: bool = False) -> str:
    """What ``spandep parse --output-format FMT [--confidence]`` writes for ``sentences``."""
    out = io.StringIO()
    write_sentences(sentences, out, fmt, confidence)
    return out.getvalue()


def _kept(parsed: Sentence, given: Sentence, columns: tuple[str, ...]) -> Sentence:
    words = [replace(p, **{c: getattr(g, c) for c in columns}) for p, g in zip(parsed.words, given.words)]
    confidence = None if "head" in columns else parsed.confidence
    return replace(parsed, words=words, confidence=confidence)


class Service:
    """The served models by name (the first is the default) and the batcher that parses for them."""

    def __init__(self, models: dict[str, Pipeline], settings: ServiceSettings, notes: dict[str, str] | None = None) -> None:
        if not models:
            raise ValueError("a service needs at least one model")
        self.models = models
        self.default = next(iter(models))
        self.settings = settings
        self.notes = notes or {}  # model name -> where it comes from (its treebank), for acknowledgements
        self.batcher = Batcher(self._parse_batch, settings.batch_words, settings.wait_ms / 1000, settings.max_queue)

    @classmethod
    def load(cls, names: list[str], settings: ServiceSettings, threads: int | None = None, device: str = "cpu") -> Service:
        """A service of the models ``names`` (shipped names or folders, as ``spandep.load`` takes them; none: the
        default model, served under the name it resolves from: ``$SPANDEP_MODEL``, else ``en``), each loaded once."""
        import spandep
        from spandep.pipeline.catalogue import read_catalogue

        default, shipped = read_catalogue()
        pipelines, notes = {}, {}
        for name in names or [os.environ.get("SPANDEP_MODEL") or default]:
            pipelines[name] = spandep.load(name, device=device, threads=threads, batch_tokens=settings.batch_tokens)
            if name in shipped:
                notes[name] = f"{shipped[name].treebank} ({shipped[name].language})"
        return cls(pipelines, settings, notes)

    def start(self) -> None:
        self.batcher.start()

    def stop(self) -> None:
        """Parse what is queued, then stop the worker (after the server has stopped taking requests)."""
        self.batcher.stop()

    def model_name(self, name: str | None) -> str:
        if name is None or name == "":
            return self.default
        if name not in self.models:
            raise ServiceError(400, f"unknown model {name!r}; this server has {', '.join(self.models)} (GET /models)")
        return name

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

    def options(self, decoder: str | None = None, k: int | None = None, lam: float | None = None) -> InferenceOptions:
        """Inference options of a request, over each model's own (400 for a value out of its range)."""
        try:
            return InferenceOptions(decoder=decoder, k=k, lam=lam, batch_tokens=self.settings.batch_tokens)
        except ValueError as exc:
            raise ServiceError(400, str(exc)) from None

    async def parse(self, request: ParseRequest) -> list[Sentence]:
        """The request's sentences, read as ``spandep parse`` reads its input, then tagged and parsed in a batch."""
        name = self.model_name(request.model)
        if len(request.data) > self.settings.max_bytes:
            raise ServiceError(413, f"data of {len(request.data)} bytes; this server takes at most {self.settings.max_bytes} (--max-bytes): send it in parts")
        try:
            self.models[name].model.settings(request.options)
        except ValueError as exc:
            raise ServiceError(400, f"model {name}: {exc}") from None
        sentences = await run_in_threadpool(self._read, name, request)
        if not sentences or not (request.tag or request.parse):
            return sentences
        try:
            future = self.batcher.submit((name, request.options), sentences)
        except QueueFull as full:
            raise ServiceError(503, f"server busy: {self.batcher.max_queue} requests are waiting; retry after {full.retry_after} s",
                               {"Retry-After": str(full.retry_after)}) from None
        try:
            parsed = await asyncio.wait_for(asyncio.wrap_future(future), self.settings.timeout_s)
        except asyncio.TimeoutError:
            raise ServiceError(504, f"not parsed within {self.settings.timeout_s:g} s (--timeout): send less data per request") from None
        if not request.tag:
            parsed = [_kept(p, g, TAG_COLUMNS) for p, g in zip(parsed, sentences)]
        if not request.parse:
            parsed = [_kept(p, g, PARSE_COLUMNS) for p, g in zip(parsed, sentences)]
        return parsed

    def _read(self, name: str, request: ParseRequest) -> list[Sentence]:
        from spandep.tokenization import RuleTokenizer

        text = request.input_format in RAW_TEXT_FORMATS
        tokenizer = (RuleTokenizer() if request.tokenizer == "rules" else self.models[name].tokenizer) if text else None
        try:
            return list(read_input(InputBytes("data", request.data), request.input_format, tokenizer))
        except ValueError as exc:  # InputFormatError: "data:LINE: reason"
            raise ServiceError(400, str(exc)) from None

    def _parse_batch(self, key: Hashable, sentences: list[Sentence]) -> list[Sentence]:
        from spandep.pipeline.predict import parse_stream

        name, options = key  # type: ignore[misc]
        parsed: list[Sentence | None] = [None] * len(sentences)
        for group in length_groups([len(s) for s in sentences], LENGTH_RATIO):
            for i, s in zip(group, parse_stream(self.models[name].model, [sentences[i] for i in group], options, len(group))):
                parsed[i] = s
        return parsed  # type: ignore[return-value]
