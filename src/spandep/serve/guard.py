"""The ASGI guard in front of the app: who may call (Origin, Host), how big a body may be, CORS, and one log line
for a client that disconnects.

- **Origin.** A browser sends ``Origin`` with a page's cross-site requests (and a form post): a page of another site
  could otherwise make the user's browser post to a server on their machine. A request whose ``Origin`` is neither
  the server itself (``http://`` + its ``Host``) nor allowed (``--allow-origin``, ``*``: any; ``--cors`` allows any)
  is refused 403. Requests without ``Origin`` (curl, UDPipe's clients, scripts) are not concerned.
- **Host.** Bound to a loopback address, the server answers only to the loopback names (``localhost``,
  ``127.0.0.1``, ``[::1]``, the bound address) and those ``--allow-host`` adds (``*``: any): a name of another site
  rebound by its DNS to 127.0.0.1 gets 403 (DNS rebinding). Bound elsewhere, the Host is checked only when
  ``--allow-host`` names some.
- **Body.** Read whole here, at most ``limit`` bytes (413 past it, at once from ``Content-Length`` else as it streams
  in, and the connection closed), then handed to the app; a client that disconnects before sending it all is one
  log line. The connection's deadline for sending its request is the protocol's (``server.py``).
- **CORS.** With ``--cors`` every answer carries ``Access-Control-Allow-Origin: *``, as UDPipe's public service's do.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from spandep.serve.service import ClientGone, ServiceError, ServiceSettings

__all__ = ["Guard", "LOOPBACK_NAMES", "is_loopback"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
BODY_METHODS = (b"POST", b"PUT", b"PATCH")
log = logging.getLogger("spandep.serve")

ErrorResponse = Callable[[str, ServiceError], Response]  # (path, error) -> the error in its endpoint's format


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to listen on) is a loopback one."""
    if host.strip("[]").lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(host: str) -> str:
    """The name of a ``Host`` header, without its port (``[::1]:8000`` → ``::1``)."""
    if host.startswith("["):
        return host[1 : host.find("]")].lower() if "]" in host else host.lower()
    return host.rsplit(":", 1)[0].lower() if host.count(":") == 1 else host.lower()


class Guard:
    """The checks of the module docstring around ``app``; ``error`` writes a refusal in its endpoint's format."""

    def __init__(self, app: ASGIApp, settings: ServiceSettings, limit: int, error: ErrorResponse) -> None:
        self.app = app
        self.limit = limit
        self.error = error
        self.cors = settings.cors
        self.any_origin = settings.cors or "*" in settings.allow_origins
        self.origins = {o.rstrip("/").lower() for o in settings.allow_origins}
        self.check_host = "*" not in settings.allow_hosts and (is_loopback(settings.host) or bool(settings.allow_hosts))
        self.hosts = {*LOOPBACK_NAMES, _host_name(settings.host), *(_host_name(h) for h in settings.allow_hosts)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.cors:
            send = self._with_cors(send)
        refusal = self._refusal(Headers(scope=scope))
        body = b""
        if refusal is None and scope["method"].encode() in BODY_METHODS:
            try:
                body = await self._body(scope, receive)
            except ServiceError as exc:
                refusal = exc
            except ClientGone:
                log.warning("client %s: connection closed before its whole request to %s came in (it disconnected, or passed --read-timeout)", _client(scope), scope["path"])
                return
        if refusal is not None:
            await self.error(scope["path"], refusal)(scope, receive, send)
            return
        try:
            await self.app(scope, _replay(body, receive), send)
        except ClientGone:
            log.warning("client %s disconnected before its answer from %s; its work was dropped", _client(scope), scope["path"])

    def _refusal(self, headers: Headers) -> ServiceError | None:
        """403 for a Host or an Origin not allowed (module docstring), else ``None``."""
        host = headers.get("host")
        if self.check_host and host is not None and _host_name(host) not in self.hosts:
            return ServiceError(403, f"host name {_host_name(host)!r} is not this server's: call it as localhost or 127.0.0.1, or start it with --allow-host {_host_name(host)}")
        origin = headers.get("origin")
        if origin is None or self.any_origin:
            return None
        origin = origin.rstrip("/").lower()
        if origin in self.origins or (host is not None and origin in (f"http://{host.lower()}", f"https://{host.lower()}")):
            return None
        return ServiceError(403, f"origin {origin!r} may not call this server: start it with --allow-origin {origin} to allow that site (--cors: any)")

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        """The request's body, at most ``limit`` bytes (:class:`ServiceError` 413 past it; :class:`ClientGone` when
        the client disconnects first)."""
        length = Headers(scope=scope).get("content-length", "0")
        if length.isdigit() and int(length) > self.limit:
            raise self._too_big(int(length))
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone()
            body += message.get("body", b"")
            if len(body) > self.limit:
                raise self._too_big(len(body))
            if not message.get("more_body", False):
                return bytes(body)

    def _too_big(self, size: int) -> ServiceError:
        return ServiceError(413, f"request body of {size} bytes or more; this server reads at most {self.limit} (3 × --max-bytes and 64 KiB, for the "
                                 "form's encoding): send the data in parts, or raise --max-bytes", {"Connection": "close"})

    @staticmethod
    def _with_cors(send: Send) -> Send:
        async def cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"access-control-allow-origin", b"*")]}
            await send(message)

        return cors


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app ``body`` once, then what the connection says (its disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"
