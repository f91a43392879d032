"""The listening socket and the uvicorn server of ``spandep serve`` (also what the tests run in a thread)."""

from __future__ import annotations

import errno
import socket

import uvicorn

from spandep.errors import OptionError
from spandep.serve.app import create_app
from spandep.serve.service import Service

__all__ = ["GRACE_S", "listen", "make_server"]

GRACE_S = 5  # after --timeout, how long a stop waits for requests in flight before it closes their connections


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
