"""``spandep serve``: the web service (needs the ``serve`` extra: FastAPI, uvicorn, python-multipart).

``service.py`` holds the models and runs a request (read, batch-parse, write) without HTTP, ``batcher.py`` batches
the requests of many clients on one worker thread, ``app.py`` is the HTTP side (UDPipe 2's REST API, the JSON
endpoint, health, the page) and ``static/`` the page. Design and measurements: docs/serve.md.
"""
