"""``spandep serve``: a REST service compatible with UDPipe 2's, parsing concurrent requests fairly in turns, guarded
(every request and option bounded, Origin and Host checked, slow and idle connections closed), and a page that
draws the trees (docs/serve.md)."""

from __future__ import annotations

import importlib.util
import signal
from typing import Optional

import typer

from spandep.cli.common import bound, check_options, handle_errors, inference_options
from spandep.errors import OptionError

SERVE_MODULES = ("fastapi", "uvicorn", "multipart")  # the serve extra


def _allowed(name: str) -> str:
    """The bound of an option, for its help: "Allowed: an int in [1, 64]." (spandep.limits)."""
    return f"Allowed: {bound(name)}."


def _names(values: Optional[list[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for value in values or [] for v in value.split(",") if v.strip()))


def serve(
    models: Optional[str] = typer.Option(
        None, "--models", help="Comma-separated shipped names (spandep models) or model folders; the first is the default (default: $SPANDEP_MODEL, else en).",
    ),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface; on a loopback address the Host header is checked)."),
    port: int = typer.Option(8000, help="Port to listen on (0: any free port, printed at start). " + _allowed("port")),
    threads: int = typer.Option(0, help="Torch CPU threads of the model (0: torch's default). " + _allowed("threads")),
    max_bytes: int = typer.Option(200_000, help="Largest data of a request, in bytes (UTF-8); more is 413. " + _allowed("max_bytes")),
    max_sentence_words: int = typer.Option(1000, help="Words in one sentence (up to 1,000 memory grows with its square, past it a sentence is parsed in windows: docs/design.md); more is 413. " + _allowed("max_sentence_words")),
    max_sentences: int = typer.Option(10_000, help="Sentences in one request; more is 413. " + _allowed("max_sentences")),
    max_words: int = typer.Option(50_000, help="Words in one request; more is 413. " + _allowed("max_words")),
    max_queue: int = typer.Option(256, help="Requests that may wait for the worker; one more is 503 with Retry-After. " + _allowed("max_queue")),
    timeout: float = typer.Option(120.0, help="Seconds a request may take from arrival to answer; later is 504, and its work stops. " + _allowed("timeout")),
    batch_words: int = typer.Option(1000, help="Words (a sentence counts one more) the worker parses at a time, round-robin between requests: the most a request waits for another's. " + _allowed("batch_words")),
    batch_tokens: int = typer.Option(1000, help="Padded words per batch of the model, as for parse (the same default; docs/serve.md). " + _allowed("batch_tokens")),
    batch_wait_ms: float = typer.Option(10.0, help="How long a batch waits for more requests when none is queued. " + _allowed("batch_wait_ms")),
    max_connections: int = typer.Option(512, help="Open connections; one more closes the oldest idle one. Below the open-file limit (ulimit -n) less 128. " + _allowed("max_connections")),
    read_timeout: float = typer.Option(30.0, help="Seconds a connection has to send a whole request (head and body) after opening or after its previous answer; later it is closed. " + _allowed("read_timeout")),
    idle_timeout: float = typer.Option(5.0, help="Seconds a kept-alive connection may wait for its next request. " + _allowed("idle_timeout")),
    allow_origin: Optional[list[str]] = typer.Option(None, "--allow-origin", help="An origin (https://example.org) whose pages may call the server; repeat or separate with commas; * allows any. Others sending an Origin get 403."),
    allow_host: Optional[list[str]] = typer.Option(None, "--allow-host", help="A Host name the server answers to besides localhost, 127.0.0.1 and [::1] (checked when bound to loopback, or when given); * allows any."),
    cors: bool = typer.Option(False, "--cors", help="Send Access-Control-Allow-Origin: * (as UDPipe's public service does): any page may call and read the answers."),
    device: str = typer.Option("cpu", help="cpu, cuda, cuda:N or auto (CUDA when there is one)."),
    precision: Optional[str] = typer.Option(None, help="float32 or bfloat16 matrix products (default: each model's). bfloat16 parses depend in their last digits on how sentences are batched, and the service batches requests' sentences in turns: float32 gives exactly what spandep parse --precision float32 gives."),
) -> None:
    """Serve the models over HTTP: UDPipe 2's REST API (GET /models, GET|POST /process), POST /parse (JSON, every
    output format of parse), GET /health, and a page at / that draws the trees. Requests are parsed in turns of
    --batch-words, round-robin: a small request is not held up by a big one. Ctrl-C or SIGTERM stops taking
    requests, finishes those in flight, and exits. Every bound of a request answers 413 naming the option that raises
    it (docs/limits.md lists them all)."""
    with handle_errors():
        bounded = (
            ("--port", port, "port"), ("--threads", threads, "threads"), ("--max-bytes", max_bytes, "max_bytes"),
            ("--max-sentence-words", max_sentence_words, "max_sentence_words"), ("--max-sentences", max_sentences, "max_sentences"),
            ("--max-words", max_words, "max_words"), ("--max-queue", max_queue, "max_queue"), ("--timeout", timeout, "timeout"),
            ("--batch-words", batch_words, "batch_words"), ("--batch-tokens", batch_tokens, "batch_tokens"),
            ("--batch-wait-ms", batch_wait_ms, "batch_wait_ms"), ("--max-connections", max_connections, "max_connections"),
            ("--read-timeout", read_timeout, "read_timeout"), ("--idle-timeout", idle_timeout, "idle_timeout"),
        )
        check_options(*((option, value, bound(name)) for option, value, name in bounded), ("--device", device, None))
        inference_options(None, None, None, batch_tokens, None, precision)  # --precision checked before any model loads
        missing = [m for m in SERVE_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise OptionError(f"spandep serve needs {', '.join(missing)}: pip install 'spandep[serve]'")
        from spandep.serve.memory import set_malloc_options
        from spandep.serve.server import connection_room, listen, make_server
        from spandep.serve.service import Service, ServiceSettings

        if max_connections > connection_room():
            raise OptionError(f"--max-connections {max_connections} leaves no room below the open-file limit: use at most {connection_room()}, or raise it (ulimit -n)")
        names = list(dict.fromkeys(n.strip() for n in (models or "").split(",") if n.strip()))
        settings = ServiceSettings(
            batch_words=batch_words, batch_tokens=batch_tokens, wait_ms=batch_wait_ms, max_queue=max_queue, max_bytes=max_bytes,
            timeout_s=timeout, max_sentence_words=max_sentence_words, max_sentences=max_sentences, max_words=max_words,
            read_timeout_s=read_timeout, idle_timeout_s=idle_timeout, max_connections=max_connections, host=host,
            allow_hosts=_names(allow_host), allow_origins=_names(allow_origin), cors=cors,
        )
        set_malloc_options()  # before the models load and the threads start
        with listen(host, port) as sock:  # before the models load: a port in use is an error at once
            service = Service.load(names, settings, threads=threads or None, device=device, precision=precision)
            address = sock.getsockname()
            typer.echo(f"spandep serve: http://{address[0]}:{address[1]}/ (models: {', '.join(service.models)}); Ctrl-C stops", err=True)
            for stop in (signal.SIGINT, signal.SIGTERM):  # uvicorn makes them a graceful stop, then raises them again
                signal.signal(stop, lambda signum, frame: None)
            make_server(service).run(sockets=[sock])
        counters = service.batcher.counters
        typer.echo(f"spandep serve: stopped after {counters.jobs} requests ({counters.sentences} sentences parsed)", err=True)
