"""The listening socket and the uvicorn server of ``spandep serve`` (also what the tests run in a thread), and the
process's memory setting.

glibc gives each thread that allocates its own malloc arena (up to 8 per core), and a server's threads (uvicorn's
pool reading and writing requests, the worker, torch's) each keep the freed memory of their arena: under load the
resident memory crept up by 134 MB in three minutes. With two arenas, as ``MALLOC_ARENA_MAX=2`` gives, it stayed
within 8.5 % of its mean and the throughput did not drop (docs/serve.md, "Load test")."""

from __future__ import annotations

import ctypes
import errno
import os
import socket

import uvicorn

from spandep.errors import OptionError
from spandep.serve.app import create_app
from spandep.serve.service import Service

__all__ = ["GRACE_S", "limit_malloc_arenas", "listen", "make_server"]

GRACE_S = 5  # after --timeout, how long a stop waits for requests in flight before it closes their connections
MALLOC_ARENAS = 2
M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)


def limit_malloc_arenas() -> bool:
    """Limit this process to ``MALLOC_ARENAS`` malloc arenas (module docstring) before its threads start, unless
    ``MALLOC_ARENA_MAX`` already says how many; whether the limit was set (``False`` without glibc)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)  # the C library this process runs on
    return mallopt is not None and mallopt(M_ARENA_MAX, MALLOC_ARENAS) == 1


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
    batcher's worker."""
    config = uvicorn.Config(create_app(service), log_level="warning", timeout_graceful_shutdown=int(service.settings.timeout_s) + GRACE_S)
    return uvicorn.Server(config)
