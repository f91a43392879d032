"""``spandep serve``: the web service (needs the ``serve`` extra: FastAPI, uvicorn, python-multipart).

``service.py`` holds the models and runs a request (read, parse in turns, write) without HTTP, bounded and timed;
``batcher.py`` reads and parses the requests of many clients on one worker thread, in turns, round-robin;
``naming.py`` resolves model names as UDPipe does; ``memory.py`` holds malloc's arenas and trim; ``guard.py`` checks
Origin, Host and the body's size; ``app.py`` is the HTTP side (UDPipe 2's REST API, the JSON endpoint, health, the
page); ``server.py`` the socket, the connections' bounds and the log; ``static/`` the page. Design and
measurements: docs/serve.md.
"""
