"""A live ``spandep serve`` app on a free loopback port, run by uvicorn in a thread of the test process (used by
tests/test_serve.py and tests/test_serve_page.py)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from spandep.serve.server import listen, make_server
from spandep.serve.service import Service

START_S = 30  # how long the server may take to start


@contextlib.contextmanager
def live_server(service: Service) -> Iterator[str]:
    """Serve ``service`` on 127.0.0.1 (a free port) and yield its base URL; the server stops (gracefully) after."""
    sock = listen("127.0.0.1", 0)
    server = make_server(service)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(START_S)
