"""Turns across clients (the batcher alone, with a stand-in parse: round-robin, budget, cancellation, reading on the
worker), overload (503 with Retry-After), timeouts (504), graceful shutdown of ``spandep serve`` and its option
errors."""

from __future__ import annotations

import gc
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
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


def given(*sentences: Sentence):
    """A job's ``read``: these sentences."""
    return lambda: list(sentences)


def test_jobs_queued_while_the_model_runs_share_the_next_turn_and_get_their_own_sentences():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=6, wait_s=0.0, max_queue=10)
    batcher.start()
    first = batcher.submit("en", given(sentence("a")))
    assert recorder.started.wait(5)  # the worker is in the model: what comes now queues
    jobs = [batcher.submit(key, given(sentence(*words))) for key, words in (
        ("en", ["b", "c"]), ("other", ["x"]), ("en", ["d"]), ("en", ["e", "f", "g"]), ("en", ["h"]),
    )]
    recorder.release.set()
    results = [job.result(5)[0].forms for job in [first, *jobs]]
    batcher.stop()
    assert results == [["A"], ["B", "C"], ["X"], ["D"], ["E", "F", "G"], ["H"]]
    # a sentence costs its words and one: "b c" (3) and "d" (2) fill 5 of 6; "e f g" (4) does not fit, so the turn
    # ends and "e f g" keeps its place at the front; "other" waits its turn
    assert recorder.batches == [("en", [["a"]]), ("en", [["b", "c"], ["d"]]), ("other", [["x"]]), ("en", [["e", "f", "g"], ["h"]])]
    assert batcher.counters.largest_batch == 2 and batcher.counters.jobs == 6


def test_a_big_job_is_parsed_a_turn_at_a_time_round_robin_with_the_others():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=4, wait_s=0.0, max_queue=10)
    batcher.start()
    big = batcher.submit("en", given(*(sentence(w) for w in "abcdef")))  # 6 sentences of cost 2: three turns
    assert recorder.started.wait(5)
    small = batcher.submit("en", given(sentence("x")))
    other = batcher.submit("other", given(sentence("y")))
    recorder.release.set()
    assert [s.forms for s in big.result(5)] == [["A"], ["B"], ["C"], ["D"], ["E"], ["F"]]
    assert small.result(5)[0].forms == ["X"] and other.result(5)[0].forms == ["Y"]
    batcher.stop()
    # the small job comes right after the big one's first turn (a job begun heads its own turns, nobody else's), then
    # the other model's job, then the rest of the big one
    assert recorder.batches == [("en", [["a"], ["b"]]), ("en", [["x"]]), ("other", [["y"]]), ("en", [["c"], ["d"]]), ("en", [["e"], ["f"]])]


def test_a_sentence_longer_than_the_budget_is_parsed_whole_in_a_turn_of_its_own():
    recorder = Recorder()
    recorder.release.set()
    batcher = Batcher(recorder, batch_words=2, wait_s=0.0, max_queue=10)
    batcher.start()
    assert batcher.submit("en", given(sentence(*"abcde"), sentence("f"))).result(5)[0].forms == list("ABCDE")
    batcher.stop()
    assert recorder.batches == [("en", [list("abcde")]), ("en", [["f"]])]


def test_wait_window_gathers_jobs_that_arrive_within_it():
    recorder = Recorder()
    recorder.release.set()
    batcher = Batcher(recorder, batch_words=100, wait_s=0.5, max_queue=10)
    batcher.start()
    futures = [batcher.submit("en", given(sentence("a")))]
    time.sleep(0.05)
    futures.append(batcher.submit("en", given(sentence("b"))))
    assert [f.result(5)[0].forms for f in futures] == [["A"], ["B"]]
    batcher.stop()
    assert recorder.batches == [("en", [["a"], ["b"]])]


def test_a_full_queue_refuses_and_a_cancelled_job_is_dropped_at_its_next_turn():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=2, wait_s=0.0, max_queue=2)
    batcher.start()
    running = batcher.submit("en", given(sentence("a"), sentence("b"), sentence("c")))  # three turns
    assert recorder.started.wait(5)  # in its first turn
    cancelled, kept = batcher.submit("en", given(sentence("d"))), batcher.submit("en", given(sentence("e")))
    with pytest.raises(QueueFull) as full:
        batcher.submit("en", given(sentence("f")))
    assert full.value.retry_after >= 1 and batcher.counters.refused == 1
    assert cancelled.cancel() and running.cancel()  # a timeout or a disconnect: the worker drops them
    recorder.release.set()
    assert kept.result(5)[0].forms == ["E"]
    batcher.stop()
    assert [forms for _, forms in recorder.batches] == [[["a"]], [["e"]]]
    assert batcher.counters.cancelled == 2


def test_reading_runs_on_the_worker_in_turn_and_its_errors_go_to_the_client():
    recorder = Recorder()
    recorder.release.set()
    batcher = Batcher(recorder, batch_words=10, wait_s=0.0, max_queue=4)
    batcher.start()
    threads = []

    def read():
        threads.append(threading.current_thread().name)
        return [sentence("t")]

    def bad():
        raise ValueError("data:1: bad input")

    assert batcher.submit(None, read).result(5)[0].forms == ["t"]  # nothing to parse: reading is the whole job
    with pytest.raises(ValueError, match="bad input"):
        batcher.submit("en", bad).result(5)
    assert batcher.submit("en", read).result(5)[0].forms == ["T"]
    batcher.stop()
    assert threads == ["spandep-batcher"] * 2 and recorder.batches == [("en", [["t"]])]


def test_a_failing_batch_fails_its_jobs_and_the_worker_goes_on():
    recorder = Recorder(fail=True)
    recorder.release.set()
    batcher = Batcher(recorder, batch_words=10, wait_s=0.0, max_queue=4)
    batcher.start()
    with pytest.raises(RuntimeError, match="model failed"):
        batcher.submit("en", given(sentence("a"))).result(5)
    recorder.fail = False
    assert batcher.submit("en", given(sentence("b"))).result(5)[0].forms == ["B"]
    batcher.stop()


def test_stop_parses_what_is_queued_then_refuses():
    recorder = Recorder()
    batcher = Batcher(recorder, batch_words=1, wait_s=0.0, max_queue=4)
    batcher.start()
    futures = [batcher.submit("en", given(sentence(w))) for w in "abc"]
    assert recorder.started.wait(5)
    stopping = threading.Thread(target=batcher.stop)
    stopping.start()
    recorder.release.set()
    stopping.join(5)
    assert [f.result(0)[0].forms for f in futures] == [["A"], ["B"], ["C"]]
    with pytest.raises(QueueFull):
        batcher.submit("en", given(sentence("d")))


@pytest.fixture(scope="module")
def shipped():
    """The shipped model, loaded once for the overload tests."""
    return Service.load(["en"], ServiceSettings(), threads=1).models


def slowed(service: Service) -> Recorder:
    """Make ``service``'s model wait for ``release`` on its first batch (then parse for real)."""
    recorder, parse = Recorder(), service.batcher._parse
    service.batcher._parse = lambda key, sentences: (recorder(key, []), parse(key, sentences))[1]
    return recorder


@pytest.mark.slow
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


@pytest.mark.slow
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
        assert "stopped after 1 requests (150 sentences parsed)" in server.stderr.read()
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


def test_the_server_sets_malloc_options_unless_the_environment_says(monkeypatch):
    from spandep.serve.memory import MALLOC_OPTIONS, set_malloc_options

    glibc = platform.libc_ver()[0] == "glibc"
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert set_malloc_options() == (["MALLOC_MMAP_THRESHOLD_"] if glibc else [])  # the user's arena setting stands
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert set_malloc_options() == (list(MALLOC_OPTIONS) if glibc else [])


KERNELS = """
import sys, torch
from spandep.storage.kernels import KERNEL_CACHE, bound_kernel_cache
if sys.argv[1] == "bounded":
    assert bound_kernel_cache()  # after torch is imported, before its first kernel: as a model load does
lstm = torch.nn.LSTM(2, 2, batch_first=True).eval()
with torch.inference_mode():
    for n in [*range(1, KERNEL_CACHE[1] + 2), 1]:  # one shape more than the cache holds, then the first again
        lstm(torch.zeros(1, n, 2))  # (1, n, 2)
"""


@pytest.mark.skipif(not __import__("torch").backends.mkldnn.is_available(), reason="torch built without oneDNN")
def test_the_server_bounds_onednns_kernel_cache_a_shape_seen_long_ago_is_compiled_again():
    """oneDNN says in its verbose log whether a kernel came from its cache: with the bound the first shape has been
    dropped by the time it comes back; without it (the default 1,024) it is still there."""
    from spandep.storage.kernels import KERNEL_CACHE

    env = {k: v for k, v in os.environ.items() if k != "ONEDNN_PRIMITIVE_CACHE_CAPACITY"}
    env.update(ONEDNN_VERBOSE="profile_create", OMP_NUM_THREADS="1")
    last = {}
    for mode in ("bounded", "default"):
        run = subprocess.run([sys.executable, "-c", KERNELS, mode], env=env, capture_output=True, text=True, timeout=120, check=True)
        lstm = [line for line in run.stdout.splitlines() if ",primitive,create:" in line and ",rnn," in line]
        assert len(lstm) >= KERNEL_CACHE[1] + 2, run.stdout[-2000:]  # a kernel asked for on each call
        last[mode] = lstm[-1].split(",")[3]
    assert last == {"bounded": "create:cache_miss", "default": "create:cache_hit"}


def test_the_users_kernel_cache_setting_stands(monkeypatch):
    from spandep.storage.kernels import KERNEL_CACHE, bound_kernel_cache

    monkeypatch.setenv(KERNEL_CACHE[0], "7")
    assert not bound_kernel_cache() and os.environ[KERNEL_CACHE[0]] == "7"
    monkeypatch.delenv(KERNEL_CACHE[0])
    assert bound_kernel_cache() and os.environ[KERNEL_CACHE[0]] == str(KERNEL_CACHE[1])


def test_the_worker_keeps_nothing_of_an_answered_request_while_it_waits():
    """The request's sentences are freed once it is answered, not when the next request comes."""

    class Watched(Batcher):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            self.waits, self.waiting = 0, threading.Event()

        def _first(self):
            self.waits += 1
            if self.waits == 2:  # the worker is done with the first request and waits for the next
                self.waiting.set()
            return super()._first()

    recorder = Recorder()
    recorder.release.set()
    batcher = Watched(recorder, 10, 0.0, 10)
    read = sentence("a", "b")
    kept = weakref.ref(read)
    batcher.start()
    answer = batcher.submit("en", given(read))
    del read
    assert answer.result(5)[0].forms == ["A", "B"]
    assert batcher.waiting.wait(5)
    gc.collect()
    assert kept() is None
    batcher.stop()
