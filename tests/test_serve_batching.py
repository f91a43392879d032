"""Batching across clients (the batcher alone, with a stand-in parse), overload (503 with Retry-After), timeouts
(504), graceful shutdown of ``spandep serve`` and its option errors."""

from __future__ import annotations

import os
import platform
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from serve_live import live_server
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.sentence import Sentence
from spandep.serve.batcher import Batcher, QueueFull
from spandep.serve.service import Service, ServiceSettings

runner = CliRunner()
UDPIPE = {"tokenizer": "", "tagger": "", "parser": ""}


class Recorder:
    """A stand-in for the model: records each batch (its key and sentences); the first call blocks until released."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[tuple[object, list[list[str]]]] = []
        self.started, self.release = threading.Event(), threading.Event()
        self.fail = fail

    def __call__(self, key: object, sentences: list[Sentence]) -> list[Sentence]:
        self.started.set()
        self.release.wait(10)
        self.batches.append((key, [s.forms for s in sentences]))
        if self.fail:
            raise RuntimeError("model failed")
        return [Sentence.from_tokens([f.upper() for f in s.forms]) for s in sentences]


def sentence(*forms: str) -> Sentence:
    return Sentence.from_tokens(list(forms))


def test_jobs_queued_while_the_model_runs_share_the_next_batch_and_get_their_own_sentences():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=5, wait_s=0.0, max_queue=10)
    batcher.start()
    first = batcher.submit("en", [sentence("a")])
    assert recorder.started.wait(5)  # the worker is in the model: what comes now queues
    jobs = [batcher.submit(key, [sentence(*words)]) for key, words in (
        ("en", ["b", "c"]), ("other", ["x"]), ("en", ["d"]), ("en", ["e", "f", "g"]), ("en", ["h"]),
    )]
    recorder.release.set()
    results = [job.result(5)[0].forms for job in [first, *jobs]]
    batcher.stop()
    assert results == [["A"], ["B", "C"], ["X"], ["D"], ["E", "F", "G"], ["H"]]
    # "e f g" would pass the budget of 5 words after "b c" and "d": the batch ends there (FIFO); "other" waits its turn
    assert recorder.batches == [("en", [["a"]]), ("en", [["b", "c"], ["d"]]), ("other", [["x"]]), ("en", [["e", "f", "g"], ["h"]])]
    assert batcher.counters.largest_batch == 2 and batcher.counters.jobs == 6


def test_wait_window_gathers_jobs_that_arrive_within_it():
    recorder = Recorder()
    recorder.release.set()
    batcher = Batcher(recorder, batch_words=100, wait_s=0.5, max_queue=10)
    batcher.start()
    futures = [batcher.submit("en", [sentence("a")])]
    time.sleep(0.05)
    futures.append(batcher.submit("en", [sentence("b")]))
    assert [f.result(5)[0].forms for f in futures] == [["A"], ["B"]]
    batcher.stop()
    assert recorder.batches == [("en", [["a"], ["b"]])]


def test_a_full_queue_refuses_and_a_cancelled_job_is_skipped():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=1, wait_s=0.0, max_queue=2)
    batcher.start()
    running = batcher.submit("en", [sentence("a")])
    assert recorder.started.wait(5)
    cancelled, kept = batcher.submit("en", [sentence("b")]), batcher.submit("en", [sentence("c")])
    with pytest.raises(QueueFull) as full:
        batcher.submit("en", [sentence("d")])
    assert full.value.retry_after >= 1 and batcher.counters.refused == 1
    assert cancelled.cancel()
    recorder.release.set()
    assert running.result(5)[0].forms == ["A"] and kept.result(5)[0].forms == ["C"]
    batcher.stop()
    assert [forms for _, forms in recorder.batches] == [[["a"]], [["c"]]]


def test_a_failing_batch_fails_its_jobs_and_the_worker_goes_on():
    recorder = Recorder(fail=True)
    recorder.release.set()
    batcher = Batcher(recorder, batch_words=10, wait_s=0.0, max_queue=4)
    batcher.start()
    with pytest.raises(RuntimeError, match="model failed"):
        batcher.submit("en", [sentence("a")]).result(5)
    recorder.fail = False
    assert batcher.submit("en", [sentence("b")]).result(5)[0].forms == ["B"]
    batcher.stop()


def test_stop_parses_what_is_queued_then_refuses():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=1, wait_s=0.0, max_queue=4)
    batcher.start()
    futures = [batcher.submit("en", [sentence(w)]) for w in "abc"]
    assert recorder.started.wait(5)
    stopping = threading.Thread(target=batcher.stop)
    stopping.start()
    recorder.release.set()
    stopping.join(5)
    assert [f.result(0)[0].forms for f in futures] == [["A"], ["B"], ["C"]]
    with pytest.raises(QueueFull):
        batcher.submit("en", [sentence("d")])


@pytest.fixture(scope="module")
def shipped():
    """The shipped model, loaded once for the overload tests."""
    return Service.load(["en"], ServiceSettings(), threads=1).models


def slowed(service: Service) -> Recorder:
    """Make ``service``'s model wait for ``release`` on its first batch (then parse for real)."""
    recorder, parse = Recorder(), service.batcher._parse
    service.batcher._parse = lambda key, sentences: (recorder(key, []), parse(key, sentences))[1]
    return recorder


def test_overload_is_503_with_retry_after_and_the_server_lives_on(shipped):
    service = Service(shipped, ServiceSettings(max_queue=1))
    recorder = slowed(service)
    with live_server(service) as url, ThreadPoolExecutor(4) as pool:
        post = lambda text: httpx.post(f"{url}/process", data={**UDPIPE, "data": text}, timeout=60)  # noqa: E731
        first = pool.submit(post, "The first one.")
        assert recorder.started.wait(30)
        queued = pool.submit(post, "The queued one.")
        while service.batcher.queued() < 1:
            time.sleep(0.01)
        refused = [post("One too many."), httpx.post(f"{url}/parse", json={"data": "And another."})]
        recorder.release.set()
        assert first.result().status_code == queued.result().status_code == 200
        assert "# text = The queued one." in queued.result().json()["result"]
        assert [r.status_code for r in refused] == [503, 503]
        assert all(int(r.headers["Retry-After"]) >= 1 for r in refused)
        assert refused[0].text.startswith("server busy: 1 requests are waiting; retry after") and "error" in refused[1].json()
        assert post("Fine again.").status_code == 200
        assert httpx.get(f"{url}/health").json()["refused"] == 2


def test_a_request_not_parsed_in_time_is_504(shipped):
    service = Service(shipped, ServiceSettings(timeout_s=0.3))
    recorder = slowed(service)
    with live_server(service) as url:
        response = httpx.post(f"{url}/process", data={**UDPIPE, "data": "Too slow."}, timeout=30)
        recorder.release.set()
        assert response.status_code == 504 and response.text.startswith("not parsed within 0.3 s (--timeout)")


def test_sigterm_lets_the_request_in_flight_finish(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen([sys.executable, "-m", "spandep", "serve", "--port", "0", "--threads", "1"],
                              stderr=subprocess.PIPE, text=True, env=env)
    try:
        started = server.stderr.readline()
        url = re.search(r"(http://[0-9.:]+)/", started).group(1)
        text = "The parser proposes a span for every word, and then it links the spans together. " * 150
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(httpx.post, f"{url}/process", data={**UDPIPE, "data": text}, timeout=120)
            while httpx.get(f"{url}/health").json()["parsing"] == 0:
                assert not answer.done(), "the request finished before the server could be stopped"
                time.sleep(0.01)
            server.send_signal(signal.SIGTERM)
            response = answer.result()
        assert response.status_code == 200 and response.json()["result"].count("# text = ") == 150
        assert server.wait(60) == 0
        assert "stopped after 1 parse requests (150 sentences)" in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()


def test_a_port_in_use_and_a_missing_model_are_one_line_errors():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = runner.invoke(app, ["serve", "--port", str(taken.getsockname()[1])])
    assert result.exit_code == 2 and "choose another --port (0: any free one)" in result.output
    result = runner.invoke(app, ["serve", "--port", "0", "--models", "nosuch"])
    assert result.exit_code == 3 and "Traceback" not in result.output


def test_the_server_limits_malloc_arenas_unless_the_environment_says(monkeypatch):
    from spandep.serve.server import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False  # the user's setting stands
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert limit_malloc_arenas() is (platform.libc_ver()[0] == "glibc")
