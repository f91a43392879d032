"""``spandep serve``: a REST service compatible with UDPipe 2's, batching concurrent requests, and a page that draws
the trees (docs/serve.md)."""

from __future__ import annotations

import errno
import signal
import socket
from typing import Optional

import typer

from spandep.checks import Range
from spandep.cli.common import COUNT, POSITIVE, check_options, handle_errors
from spandep.errors import OptionError

PORT = Range(0, 65535)
WAIT_MS = Range(0, 10_000, integer=False)
TIMEOUT_S = Range(0, 86_400, integer=False, open_low=True)


def serve(
    models: Optional[str] = typer.Option(
        None, "--models", help="Comma-separated shipped names (spandep models) or model folders; the first is the default (default: $SPANDEP_MODEL, else en).",
    ),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
    port: int = typer.Option(8000, help="Port to listen on (0: any free port, printed at start)."),
    threads: int = typer.Option(0, help="Torch CPU threads of the model (0: torch's default)."),
    batch_tokens: int = typer.Option(4000, help="Token budget of a batch of requests (and of the model's batches, as for parse)."),
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
            ("--port", port, PORT), ("--threads", threads, COUNT), ("--batch-tokens", batch_tokens, POSITIVE),
            ("--batch-wait-ms", batch_wait_ms, WAIT_MS), ("--max-queue", max_queue, POSITIVE),
            ("--max-bytes", max_bytes, POSITIVE), ("--timeout", timeout, TIMEOUT_S), ("--device", device, None),
        )
        names = list(dict.fromkeys(n.strip() for n in (models or "").split(",") if n.strip())) or [None]
        sock = _listen(host, port)
        import uvicorn

        from spandep.serve.app import create_app
        from spandep.serve.service import Service, ServiceSettings

        settings = ServiceSettings(batch_tokens, batch_wait_ms, max_queue, max_bytes, timeout)
        pipelines, notes = _load(names, threads, device, batch_tokens)
        service = Service(pipelines, settings, notes)
        config = uvicorn.Config(create_app(service), log_level="warning", timeout_graceful_shutdown=int(timeout) + 5)
        server = uvicorn.Server(config)
        address = sock.getsockname()
        typer.echo(f"spandep serve: http://{address[0]}:{address[1]}/ (models: {', '.join(service.models)}); Ctrl-C stops", err=True)
        for stop in (signal.SIGINT, signal.SIGTERM):  # uvicorn turns them into a graceful stop and raises them again after
            signal.signal(stop, lambda signum, frame: None)
        server.run(sockets=[sock])
        counters = service.batcher.counters
        typer.echo(f"spandep serve: stopped after {counters.jobs} parse requests ({counters.sentences} sentences)", err=True)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket, before any model loads: a port in use is a one-line error at once."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OptionError(f"--host: cannot resolve {host!r} ({exc.strerror}); use an address such as 127.0.0.1") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        fix = "choose another --port (0: any free one)" if exc.errno == errno.EADDRINUSE else "choose another --host or --port"
        raise OptionError(f"--port: cannot listen on {host}:{port} ({exc.strerror}); {fix}") from None
    sock.listen(2048)
    return sock


def _load(names: list[str | None], threads: int, device: str, batch_tokens: int) -> tuple[dict, dict[str, str]]:
    """The pipelines by served name (``None``: the default model, named as ``spandep.load`` resolves it) and, for
    shipped models, where each comes from."""
    import os

    import spandep
    from spandep.pipeline.catalogue import read_catalogue

    default, shipped = read_catalogue()
    pipelines, notes = {}, {}
    for name in names:
        served = name or os.environ.get("SPANDEP_MODEL") or default
        pipelines[served] = spandep.load(served, device=device, threads=threads or None, batch_tokens=batch_tokens)
        if served in shipped:
            notes[served] = f"{shipped[served].treebank} ({shipped[served].language})"
    return pipelines, notes
