"""``spandep serve``: a REST service compatible with UDPipe 2's, batching concurrent requests, and a page that draws
the trees (docs/serve.md)."""

from __future__ import annotations

import importlib.util
import signal
from typing import Optional

import typer

from spandep.checks import Range
from spandep.cli.common import COUNT, POSITIVE, check_options, handle_errors
from spandep.errors import OptionError

PORT = Range(0, 65535)
WAIT_MS = Range(0, 10_000, integer=False)
TIMEOUT_S = Range(0, 86_400, integer=False, open_low=True)
SERVE_MODULES = ("fastapi", "uvicorn", "multipart")  # the serve extra


def serve(
    models: Optional[str] = typer.Option(
        None, "--models", help="Comma-separated shipped names (spandep models) or model folders; the first is the default (default: $SPANDEP_MODEL, else en).",
    ),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
    port: int = typer.Option(8000, help="Port to listen on (0: any free port, printed at start)."),
    threads: int = typer.Option(0, help="Torch CPU threads of the model (0: torch's default)."),
    batch_words: int = typer.Option(4000, help="Token budget of a batch of requests: words gathered from the queue."),
    batch_tokens: int = typer.Option(1000, help="Padded words per batch of the model, as for parse (whose default is 4000; docs/serve.md)."),
    batch_wait_ms: float = typer.Option(10.0, help="How long a batch waits for more requests when none is queued."),
    max_queue: int = typer.Option(256, help="Requests that may wait for the model; one more is answered 503 with Retry-After."),
    max_bytes: int = typer.Option(200_000, help="Largest data of a request, in bytes (UTF-8); more is answered 413."),
    timeout: float = typer.Option(120.0, help="Seconds a request may take from arrival to parsed; later is answered 504."),
    device: str = typer.Option("cpu", help="cpu, cuda, cuda:N or auto (CUDA when there is one)."),
) -> None:
    """Serve the models over HTTP: UDPipe 2's REST API (GET /models, GET|POST /process), POST /parse (JSON, every
    output format of parse), GET /health, and a page at / that draws the trees. Ctrl-C or SIGTERM stops taking
    requests, finishes those in flight, and exits."""
    with handle_errors():
        check_options(
            ("--port", port, PORT), ("--threads", threads, COUNT), ("--batch-words", batch_words, POSITIVE),
            ("--batch-tokens", batch_tokens, POSITIVE), ("--batch-wait-ms", batch_wait_ms, WAIT_MS), ("--max-queue", max_queue, POSITIVE),
            ("--max-bytes", max_bytes, POSITIVE), ("--timeout", timeout, TIMEOUT_S), ("--device", device, None),
        )
        missing = [m for m in SERVE_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise OptionError(f"spandep serve needs {', '.join(missing)}: pip install 'spandep[serve]'")
        from spandep.serve.server import limit_malloc_arenas, listen, make_server
        from spandep.serve.service import Service, ServiceSettings

        names = list(dict.fromkeys(n.strip() for n in (models or "").split(",") if n.strip()))
        settings = ServiceSettings(batch_words, batch_tokens, batch_wait_ms, max_queue, max_bytes, timeout)
        limit_malloc_arenas()  # before the models load and the threads start
        with listen(host, port) as sock:  # before the models load: a port in use is an error at once
            service = Service.load(names, settings, threads=threads or None, device=device)
            address = sock.getsockname()
            typer.echo(f"spandep serve: http://{address[0]}:{address[1]}/ (models: {', '.join(service.models)}); Ctrl-C stops", err=True)
            for stop in (signal.SIGINT, signal.SIGTERM):  # uvicorn makes them a graceful stop, then raises them again
                signal.signal(stop, lambda signum, frame: None)
            make_server(service).run(sockets=[sock])
        counters = service.batcher.counters
        typer.echo(f"spandep serve: stopped after {counters.jobs} parse requests ({counters.sentences} sentences)", err=True)
