"""The HTTP side of ``spandep serve`` (FastAPI): UDPipe 2's REST API, spandep's own JSON endpoint, health, the page.

- ``GET /models``: ``{"models": {NAME: ["tokenizer", "tagger", "parser"]}, "default_model": NAME}`` (UDPipe's).
- ``GET|POST /process``: UDPipe 2's parameters (query string, form or multipart form): ``data``; ``model``;
  ``tokenizer`` (present: ``data`` is raw text; options ``presegmented``, a sentence a line, ``ranges``, always
  on, and ``rules``, the rule tokenizer, separated by ``;``), else ``input`` (``conllu``, default, ``conllx`` or
  ``horizontal``: one sentence per line, tokens separated by spaces); ``tagger`` and ``parser`` (present: predict the tags / the tree; their values are
  ignored; ``tagger`` predicts UPOS, XPOS, FEATS and LEMMA afresh, as UDPipe does, and without it the input's are
  kept); ``output`` (``conllu``, default, or any other format of ``spandep parse``); ``model``: a served model's
  name, language, treebank, ISO code or a unique prefix (``naming.py``). Every parameter is UTF-8 (query string,
  urlencoded or multipart form; an uploaded file is read as ``spandep parse`` reads a file): anything else is a 400.
  Answer: ``{"model": NAME, "acknowledgements": [...], "result": TEXT}``; an error is its status and a one-line plain
  text, as UDPipe's (``/models`` and every path but ``/parse`` and ``/health`` too, 404 and 405 included).
- ``POST /parse``: a JSON object (:class:`ParseBody`); answer ``{"model", "sentences": [...], "result"}``, each
  sentence the object of ``--output-format jsonl`` (with confidences, and its tree's SVG with ``"trees": true``),
  ``result`` the text of ``output`` when asked; an error is ``{"error": MESSAGE}`` (on ``/health`` too).
- ``GET /health``: ``{"status": "ok", "models", "queued", ...counters}``; ``GET /``: the page (``static/``).

In front of it, :class:`~spandep.serve.guard.Guard` checks Origin and Host and bounds the body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser

from spandep.data.sentence import Sentence
from spandep.data.writers import OUTPUT_FORMATS, sentence_record, tree_svg
from spandep.serve.guard import Guard
from spandep.serve.service import ParseRequest, Service, ServiceError, render

__all__ = ["ParseBody", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"
UDPIPE_INPUTS = {"conllu": "conllu", "conllx": "conllx", "horizontal": "tokens"}
TOKENIZER_OPTIONS = ("presegmented", "ranges", "rules")
ENCODING_ROOM = 3  # a form or JSON body may take up to 3 bytes per byte of data (percent or \\u escapes)
JSON_PATHS = ("/parse", "/health")  # endpoints whose errors are JSON; the others answer plain text, as UDPipe does
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class ParseBody(BaseModel):
    """``POST /parse``: ``data`` in the ``input`` format of ``spandep parse`` (``text``: raw text, split by the
    model's ``tokenizer`` or the ``rules``); ``output``: also return that format's text; ``confidence``: CoNLL-U
    with the probabilities; ``trees``: each sentence's SVG; ``decoder``, ``k``, ``lam``, ``enhanced`` and ``keep`` (CoNLL
    input: the given HEADs kept, with ``heads,deprels`` their DEPRELs too) as ``spandep parse``'s."""

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
    enhanced: bool = False
    keep: Literal["heads", "heads,deprels"] | None = None


class StrictParts(MultiPartParser):
    """Starlette's multipart parser, but a form field that is not UTF-8 is an error (Starlette reads it as Latin-1)."""

    def on_part_end(self) -> None:
        part = self._current_part
        if part.file is None:
            try:
                part.data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise MultiPartException(f"form field {part.field_name!r} is not valid UTF-8 (byte 0x{part.data[exc.start]:02x}): send UTF-8") from None
        super().on_part_end()


def _error(path: str, exc: ServiceError) -> Response:
    if path in JSON_PATHS:
        return JSONResponse({"error": exc.message}, exc.status, exc.headers)
    return PlainTextResponse(exc.message + "\n", exc.status, exc.headers)


def _pairs(raw: bytes, what: str) -> list[tuple[str, str]]:
    """The ``name=value`` pairs of a query string or urlencoded form, strictly UTF-8 (400 otherwise)."""
    try:
        return parse_qsl(raw.decode("utf-8"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise ServiceError(400, f"the {what} is not valid UTF-8: encode every parameter as UTF-8") from None


async def _params(request: Request, limit: int) -> dict[str, Any]:
    """UDPipe's parameters of ``/process``: the query string's, then the form's (an uploaded file's as bytes)."""
    params: dict[str, Any] = dict(_pairs(request.scope["query_string"], "query string"))
    if request.method != "POST":
        return params
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == FORM_TYPES[0]:
        params.update(_pairs(await request.body(), "form"))
    elif kind == FORM_TYPES[1]:
        try:
            form = await StrictParts(request.headers, request.stream(), max_part_size=limit).parse()
        except MultiPartException as exc:
            raise ServiceError(400, f"cannot read the multipart form: {exc.message}") from None
        params.update({k: await v.read() if isinstance(v, UploadFile) else v for k, v in form.multi_items()})
    elif await request.body():
        raise ServiceError(400, f"Content-Type {kind or 'none'!r} is not supported: send a form ({' or '.join(FORM_TYPES)})")
    return params


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
        tag="tagger" in params, parse="parser" in params, retag="tagger" in params,
    )
    return request, output


async def _disconnected(request: Request) -> None:
    """Return when the client of ``request`` (whose body has been read) disconnects."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


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

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:  # 404, 405: in the endpoint's format
        message = {404: f"no such endpoint {request.url.path}: use /process, /models, /parse, /health or /",
                   405: f"method {request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
        return _error(request.url.path, ServiceError(exc.status_code, message, dict(exc.headers or {})))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = [f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'body'}: {e['msg']}" for e in exc.errors()]
        return _error(request.url.path, ServiceError(400, "; ".join(problems)))

    @app.get("/models")
    async def models() -> dict[str, Any]:
        return {"models": {name: service.components(name) for name in service.models}, "default_model": service.default}

    @app.api_route("/process", methods=["GET", "POST"])
    async def process(request: Request) -> dict[str, Any]:
        parse_request, output = udpipe_request(await _params(request, limit), service)
        name = service.model_name(parse_request.model)
        sentences = await service.parse(parse_request, lambda: _disconnected(request))
        result = await run_in_threadpool(render, sentences, output)
        return {"model": name, "acknowledgements": service.acknowledgements(name), "result": result}

    @app.post("/parse")
    async def parse(body: ParseBody, request: Request) -> dict[str, Any]:
        name = service.model_name(body.model)
        options = service.options(body.decoder, body.k, body.lam, body.enhanced, body.keep)
        data = body.data.encode("utf-8", "surrogatepass")
        sentences = await service.parse(ParseRequest(data, name, body.input, body.tokenizer, options), lambda: _disconnected(request))
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
    app.add_middleware(Guard, settings=service.settings, limit=limit, error=_error)
    return app
