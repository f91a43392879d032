"""The listening socket and the uvicorn server of ``spandep serve`` (also what the tests run in a thread): connections
bounded in number and time, and a log that cannot flood.

- **Connections** (:class:`GuardedH11`, uvicorn's h11 protocol): at most ``--max-connections`` are open; one more
  closes the oldest connection that has no request in progress (an idle keep-alive one, or one still sending its
  request's head or body), else it is itself closed at once. The limit must leave room below the open-file limit
  (``RLIMIT_NOFILE``; :func:`connection_room`), so that ``accept`` never fails. A connection must send a whole
  request (head and body) within ``--read-timeout`` of opening or of its previous answer, else it is closed (a slow
  or stalled upload, a connection that never sends anything); between requests a kept-alive connection waits at most
  ``--idle-timeout`` (uvicorn's ``timeout_keep_alive``); a request's head is at most :data:`HEAD_BYTES`.
- **Log**: :class:`RateLimit` lets each kind of line through :data:`LOG_BURST` times a minute, then counts the rest
  and says how many it held back.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import resource
import socket
import time
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from spandep.errors import OptionError
from spandep.serve.app import create_app
from spandep.serve.service import Service, ServiceSettings

__all__ = ["GRACE_S", "GuardedH11", "RateLimit", "connection_room", "listen", "make_server"]

GRACE_S = 5  # after --timeout, how long a stop waits for requests in flight before it closes their connections
HEAD_BYTES = 16_384  # the largest request head (request line and headers): h11's incomplete-event limit
FILES_RESERVED = 128  # open files kept for the process itself (model files, logs, threads' pipes)
LOG_BURST = 10  # lines of one kind let through per LOG_WINDOW_S
LOG_WINDOW_S = 60.0


def connection_room() -> int:
    """How many connections the open-file limit leaves room for (its soft value less :data:`FILES_RESERVED`)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(1, (soft if soft != resource.RLIM_INFINITY else 1 << 20) - FILES_RESERVED)


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a bound on open connections and a deadline for each request (module docstring)."""

    def __init__(self, *args: Any, settings: ServiceSettings, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings = settings
        self.opened = time.monotonic()
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        live = [c for c in self.connections if isinstance(c, GuardedH11) and not c.transport.is_closing()]
        if len(live) > self.settings.max_connections:
            idle = [c for c in live if c is not self and not c.busy()]
            victim = min(idle, key=lambda c: c.opened) if idle else self
            self.logger.warning("%d connections open (--max-connections): closed the oldest idle one", len(live))
            victim.transport.close()
        self._restart_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._restart_deadline()

    def busy(self) -> bool:
        """Whether a whole request has come in and is not answered yet (the app is on it)."""
        return self.cycle is not None and not self.cycle.more_body and not self.cycle.response_complete

    def _restart_deadline(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline = self.loop.call_later(self.settings.read_timeout_s, self._read_timed_out)

    def _read_timed_out(self) -> None:
        """Close the connection unless the app is on its request (a body half sent is the app's to log: one line)."""
        if self.busy() or self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:
            self.logger.warning("a connection sent no whole request within %g s (--read-timeout): closed", self.settings.read_timeout_s)
        self.transport.close()


class RateLimit(logging.Filter):
    """Let each kind of line (its format string) through :data:`LOG_BURST` times per :data:`LOG_WINDOW_S`; the
    first line of a kind after a window in which some were held back says how many."""

    def __init__(self) -> None:
        super().__init__()
        self.windows: dict[str, tuple[float, int]] = {}  # kind -> (window start, lines in it)

    def filter(self, record: logging.LogRecord) -> bool:
        kind, now = str(record.msg), time.monotonic()
        start, count = self.windows.get(kind, (now, 0))
        if now - start >= LOG_WINDOW_S:
            if count > LOG_BURST:
                record.msg = f"{record.msg} ({count - LOG_BURST} more like this were not logged in the last {LOG_WINDOW_S:g} s)"
            start, count = now, 0
        self.windows[kind] = (start, count + 1)
        return count < LOG_BURST


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (``port`` 0: a free one), made before any model loads so that a port in
    use is a one-line :class:`OptionError` at once; connections wait in its backlog until the server runs."""
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


def make_server(service: Service) -> uvicorn.Server:
    """The uvicorn server of ``service``'s app (run it with ``server.run(sockets=[listen(...)])``): a stop (Ctrl-C,
    SIGTERM, ``server.should_exit``) takes no new connections, lets requests in flight finish, then stops the
    batcher's worker. Its log lines (uvicorn's and the service's) go through one :class:`RateLimit`."""
    s = service.settings
    config = uvicorn.Config(
        create_app(service), log_level="warning", timeout_graceful_shutdown=int(s.timeout_s) + GRACE_S,
        http=functools.partial(GuardedH11, settings=s), timeout_keep_alive=s.idle_timeout_s,  # type: ignore[arg-type]
        limit_concurrency=2 * s.max_connections, h11_max_incomplete_event_size=HEAD_BYTES,  # room for those being closed
    )
    server = uvicorn.Server(config)
    for name in ("uvicorn.error", "spandep.serve", "asyncio"):
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, RateLimit)]:  # one per logger: the latest server's
            logger.removeFilter(old)
        logger.addFilter(RateLimit())
    return server
