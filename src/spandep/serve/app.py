"""The HTTP side of ``spandep serve`` (FastAPI): UDPipe 2's REST API, spandep's own JSON endpoint, health, the page.

- ``GET /models``: ``{"models": {NAME: ["tokenizer", "tagger", "parser"]}, "default_model": NAME}`` (UDPipe's).
- ``GET|POST /process``: UDPipe 2's parameters (query string, form or multipart form): ``data``; ``model``;
  ``tokenizer`` (present: ``data`` is raw text; options ``presegmented``, a sentence a line, ``ranges``, always
  on, and ``rules``, the rule tokenizer, separated by ``;``), else ``input`` (``conllu``, default, ``conllx`` or
  ``horizontal``: one sentence per line, tokens separated by spaces); ``tagger`` and ``parser`` (present: predict the tags / the tree; their values are
  ignored); ``output`` (``conllu``, default, or any other format of ``spandep parse``). Answer:
  ``{"model": NAME, "acknowledgements": [...], "result": TEXT}``; an error is its status and a one-line plain text.
- ``POST /parse``: a JSON object (:class:`ParseBody`); answer ``{"model", "sentences": [...], "result"}``, each
  sentence the object of ``--output-format jsonl`` (with confidences, and its tree's SVG with ``"trees": true``),
  ``result`` the text of ``output`` when asked; an error is ``{"error": MESSAGE}``.
- ``GET /health``: ``{"status": "ok", "models", "queued", ...counters}``; ``GET /``: the page (``static/``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from spandep.data.sentence import Sentence
from spandep.data.writers import OUTPUT_FORMATS, sentence_record, tree_svg
from spandep.serve.service import ParseRequest, Service, ServiceError, render

__all__ = ["ParseBody", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"
UDPIPE_INPUTS = {"conllu": "conllu", "conllx": "conllx", "horizontal": "tokens"}
TOKENIZER_OPTIONS = ("presegmented", "ranges", "rules")
ENCODING_ROOM = 3  # a form or JSON body may take up to 3 bytes per byte of data (percent or \\u escapes)
JSON_PATHS = ("/parse",)  # endpoints whose errors are JSON; the others answer plain text, as UDPipe does


class ParseBody(BaseModel):
    """``POST /parse``: ``data`` in the ``input`` format of ``spandep parse`` (``text``: raw text, split by the
    model's ``tokenizer`` or the ``rules``); ``output``: also return that format's text; ``confidence``: CoNLL-U
    with the probabilities; ``trees``: each sentence's SVG; ``decoder``, ``k``, ``lam`` as ``spandep parse``'s."""

    model_config = ConfigDict(extra="forbid", strict=True)

    data: str
    model: str | None = None
    input: Literal["text", "lines", "tokens", "conllu", "conllx"] = "text"
    tokenizer: Literal["model", "rules"] = "model"
    output: Literal["conllu", "jsonl", "svg", "html"] | None = None
    confidence: bool = False
    trees: bool = False
    decoder: str | None = None
    k: int | None = None
    lam: float | None = None


class BodyLimit:
    """413 for a request body over ``limit`` bytes: at once from its Content-Length, else as it streams in."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if length.isdigit() and int(length) > self.limit:
            await _error(scope["path"], ServiceError(413, self._message(int(length))))(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise ServiceError(413, self._message(seen))
            return message

        await self.app(scope, counted, send)

    def _message(self, size: int) -> str:
        return f"request body of {size} bytes or more; this server takes at most {self.limit} (--max-bytes): send the data in parts"


def _error(path: str, exc: ServiceError) -> Response:
    if path in JSON_PATHS:
        return JSONResponse({"error": exc.message}, exc.status, exc.headers)
    return PlainTextResponse(exc.message + "\n", exc.status, exc.headers)


def _data(value: str | bytes | None) -> bytes:
    """A ``data`` parameter's bytes (an uploaded file's are kept as sent: read as ``spandep parse`` reads a file)."""
    if value is None:
        raise ServiceError(400, "no data: send the text to parse in the 'data' parameter")
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


def udpipe_request(params: dict[str, Any], service: Service) -> tuple[ParseRequest, str]:
    """The :class:`ParseRequest` and output format of UDPipe 2's ``/process`` parameters."""
    tokenizer = params.get("tokenizer")
    if tokenizer is not None:
        options = [o.strip() for o in str(tokenizer).split(";") if o.strip()]
        unknown = [o for o in options if o not in TOKENIZER_OPTIONS]
        if unknown:
            raise ServiceError(400, f"tokenizer option {unknown[0]!r} is not supported; use none, presegmented, ranges (always on) or rules")
        input_format, chosen = "lines" if "presegmented" in options else "text", "rules" if "rules" in options else "model"
    else:
        given = str(params.get("input", "conllu"))
        if given not in UDPIPE_INPUTS:
            raise ServiceError(400, f"input {given!r} is not supported; use {', '.join(UDPIPE_INPUTS)}, or send tokenizer= for raw text")
        input_format, chosen = UDPIPE_INPUTS[given], "model"
    output = str(params.get("output", "conllu"))
    if output not in OUTPUT_FORMATS:
        raise ServiceError(400, f"output {output!r} is not supported; use {', '.join(OUTPUT_FORMATS)}")
    request = ParseRequest(
        _data(params.get("data")), params.get("model"), input_format, chosen, service.options(),
        tag="tagger" in params, parse="parser" in params,
    )
    return request, output


def _records(sentences: list[Sentence], trees: bool) -> list[dict[str, Any]]:
    return [{**sentence_record(s), **({"svg": tree_svg(s, i)[0]} if trees else {})} for i, s in enumerate(sentences)]


def create_app(service: Service) -> FastAPI:
    """The application over a :class:`Service`; its lifespan starts and stops the batcher's worker."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.start()
        yield
        service.stop()

    app = FastAPI(title="spandep", lifespan=lifespan, docs_url=None, redoc_url=None)
    limit = ENCODING_ROOM * service.settings.max_bytes + 65536

    @app.exception_handler(ServiceError)
    async def refused(request: Request, exc: ServiceError) -> Response:
        return _error(request.url.path, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = [f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'body'}: {e['msg']}" for e in exc.errors()]
        return _error(request.url.path, ServiceError(400, "; ".join(problems)))

    @app.get("/models")
    async def models() -> dict[str, Any]:
        return {"models": {name: service.components(name) for name in service.models}, "default_model": service.default}

    @app.api_route("/process", methods=["GET", "POST"])
    async def process(request: Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query_params)
        if request.method == "POST":
            form = await request.form(max_part_size=limit)
            params.update({k: await v.read() if isinstance(v, UploadFile) else v for k, v in form.items()})
        parse_request, output = udpipe_request(params, service)
        name = service.model_name(parse_request.model)
        sentences = await service.parse(parse_request)
        result = await run_in_threadpool(render, sentences, output)
        return {"model": name, "acknowledgements": service.acknowledgements(name), "result": result}

    @app.post("/parse")
    async def parse(body: ParseBody) -> dict[str, Any]:
        name = service.model_name(body.model)
        options = service.options(body.decoder, body.k, body.lam)
        data = body.data.encode("utf-8", "surrogatepass")
        sentences = await service.parse(ParseRequest(data, name, body.input, body.tokenizer, options))
        answer: dict[str, Any] = {"model": name, "sentences": await run_in_threadpool(_records, sentences, body.trees)}
        if body.output is not None:
            answer["result"] = await run_in_threadpool(render, sentences, body.output, body.confidence)
        return answer

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return service.health()

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit, limit=limit)
    return app
