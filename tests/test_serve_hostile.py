"""``spandep serve`` against hostile and careless clients, each case bounded in time and memory, on loopback only:
huge numbers, oversized requests, a big request beside a small one, timeouts and disconnects that must stop the work,
tokenize-only requests in the queue, idle, slow and vanishing connections, foreign origins and host names, bytes that
are not UTF-8, and UDPipe's semantics (HEAD with DEPREL, ``tagger``, model names, error formats). A tiny model
(tests/conftest.py) stands in for the shipped one; where the order of work matters, a gate holds the model's first
call, so nothing here depends on how fast the machine is."""

from __future__ import annotations

import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient
from serve_live import live_server
from typer.testing import CliRunner

from spandep.cli.main import app as cli
from spandep.serve.app import create_app
from spandep.serve.server import LOG_BURST, RateLimit
from spandep.serve.service import Service, ServiceSettings

UDPIPE = {"tokenizer": "", "tagger": "", "parser": ""}
SETTLE_S = 30  # generous bound for the server to get somewhere it is sure to get (a loaded CI machine included)
CONLLU = "1\tI\tI\tPRON\tPRP\tCase=Nom\t2\tnsubj\t_\t_\n2\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_\n\n"


@pytest.fixture(scope="module")
def models(tiny_models):
    """The tiny Biaffine model, loaded once, under a short name."""
    return {"tiny": next(iter(Service.load([str(tiny_models["biaffine"])], ServiceSettings(), threads=1).models.values()))}


@pytest.fixture(scope="module")
def shipped():
    """The shipped model (it has tagger heads), loaded once."""
    return Service.load(["en"], ServiceSettings(), threads=1).models


class Gate:
    """Wrap a service's model call: record each call's sentences; the first call waits until ``release``."""

    def __init__(self, service: Service) -> None:
        self.calls: list[list[list[str]]] = []
        self.started, self.release = threading.Event(), threading.Event()
        parse = service.batcher._parse

        def gated(key, sentences):
            self.started.set()
            self.release.wait(SETTLE_S)
            self.calls.append([s.forms for s in sentences])
            return parse(key, sentences)

        service.batcher._parse = gated


class Lines(logging.Handler):
    """Collect the log lines of the server's loggers (:meth:`watch` once the server runs: uvicorn resets its loggers'
    handlers when it starts)."""

    NAMES = ("spandep.serve", "uvicorn.error", "asyncio")

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def watch(self) -> None:
        for name in self.NAMES:
            logging.getLogger(name).addHandler(self)

    def text(self) -> list[str]:
        return [r.getMessage() for r in self.records]


@pytest.fixture()
def log_lines():
    lines = Lines()
    yield lines
    for name in Lines.NAMES:
        logging.getLogger(name).removeHandler(lines)
    assert not any(r.exc_info for r in lines.records), "a traceback reached the log"


def client(service: Service) -> TestClient:
    return TestClient(create_app(service), base_url="http://127.0.0.1")


def settle(condition, what: str) -> None:
    """Wait (polling, up to SETTLE_S) for ``condition()``."""
    deadline = time.monotonic() + SETTLE_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


# ---------------------------------------------------------------- numbers and sizes


@pytest.mark.parametrize("body", [{"k": 1_000_000_000}, {"lam": 1e300}, {"k": -1}])
def test_huge_numbers_are_a_one_line_400_and_the_server_lives_on(models, body):
    with client(Service(models, ServiceSettings())) as http:
        answer = http.post("/parse", json={"data": "I saw her.", **body})
        assert answer.status_code == 400 and "must be" in answer.json()["error"] and "\n" not in answer.json()["error"]
        assert http.get("/health").json()["status"] == "ok"


@pytest.mark.parametrize(("params", "option"), [
    ({"input": "horizontal", "data": "w " * 20_000}, "--max-sentence-words"),
    ({"tokenizer": "presegmented", "data": "a b\n" * 30}, "--max-sentences"),
    ({"tokenizer": "", "data": "a b c " * 20}, "--max-words"),
    ({"input": "conllu", "data": "1\tw\t_\t_\t_\t_\t_\t_\t_\t_\n\n" * 30}, "--max-sentences"),
    ({"input": "conllu", "data": CONLLU * 30}, "--max-words"),
])
def test_each_request_bound_is_a_413_naming_its_option(models, params, option):
    settings = ServiceSettings(max_sentences=20 if option == "--max-sentences" else 10_000, max_words=50 if option == "--max-words" else 50_000, max_bytes=100_000)
    with client(Service(models, settings)) as http:
        answer = http.post("/process", data={**params, "parser": ""})
        assert answer.status_code == 413 and f"({option})" in answer.text and answer.text.count("\n") == 1, answer.text
        assert http.post("/process", data={"tokenizer": "", "parser": "", "data": "Fine."}).status_code == 200


def test_the_413_of_a_body_names_the_limit_it_applies(models):
    with client(Service(models, ServiceSettings(max_bytes=1000))) as http:
        answer = http.post("/process", content=b"data=" + b"x" * 4000, headers={"content-type": "application/x-www-form-urlencoded"})
        assert answer.status_code == 413 and answer.text.startswith("data of 4000 bytes; this server takes at most 1000 (--max-bytes)")
        over = http.post("/parse", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"})
        assert over.status_code == 413 and "this server reads at most 68536 (3 × --max-bytes and 64 KiB" in over.json()["error"]


# ---------------------------------------------------------------- fairness, timeouts, disconnects, the queue


@pytest.mark.slow
def test_a_small_request_waits_for_at_most_one_turn_of_a_big_one(models):
    service = Service(models, ServiceSettings(batch_words=4))  # a turn: two one-word sentences
    gate = Gate(service)
    with live_server(service) as url, ThreadPoolExecutor(2) as pool:
        big = pool.submit(httpx.post, f"{url}/process", data={"tokenizer": "presegmented", "parser": "", "data": "w\n" * 40}, timeout=SETTLE_S)
        assert gate.started.wait(SETTLE_S)
        small = pool.submit(httpx.post, f"{url}/process", data={"tokenizer": "", "parser": "", "data": "small"}, timeout=SETTLE_S)
        settle(lambda: service.batcher.queued() == 1, "the small request did not queue")  # the big one is in its turn
        gate.release.set()
        assert small.result().status_code == big.result().status_code == 200
    turn = next(i for i, forms in enumerate(gate.calls) if ["small"] in forms)
    assert turn == 1 and gate.calls[1] == [["small"]]  # right after the big request's first turn, of its twenty
    assert sum(map(len, gate.calls)) == 41 and len(gate.calls) == 21


@pytest.mark.slow
def test_after_a_504_the_work_stops_at_its_next_turn(models):
    service = Service(models, ServiceSettings(batch_words=4, timeout_s=0.5))
    gate = Gate(service)
    with live_server(service) as url:
        answer = httpx.post(f"{url}/process", data={"tokenizer": "presegmented", "parser": "", "data": "w\n" * 40}, timeout=SETTLE_S)
        assert answer.status_code == 504 and answer.text.startswith("not parsed within 0.5 s (--timeout)")
        gate.release.set()
        settle(lambda: service.batcher.counters.cancelled == 1, "the timed-out request was not dropped")
        assert len(gate.calls) == 1 and service.batcher.queued() == 0  # one turn of twenty
        assert httpx.post(f"{url}/process", data={"tokenizer": "", "parser": "", "data": "Next."}).status_code == 200


def test_a_client_that_disconnects_has_its_work_dropped_and_one_log_line(models, log_lines):
    service = Service(models, ServiceSettings(batch_words=4))
    gate = Gate(service)
    with live_server(service) as url:
        log_lines.watch()
        body = b"tokenizer=presegmented&parser=&data=" + b"w%0A" * 40
        with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=SETTLE_S) as sock:
            sock.sendall(b"POST /process HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            assert gate.started.wait(SETTLE_S)
        settle(lambda: any("disconnected before its answer" in line for line in log_lines.text()), "the disconnect was not seen")
        gate.release.set()
        settle(lambda: service.batcher.counters.cancelled == 1, "the abandoned request was not dropped")
        assert len(gate.calls) == 1
    assert sum("disconnected" in line for line in log_lines.text()) == 1


def test_tokenize_only_requests_go_through_the_queue(models):
    service = Service(models, ServiceSettings(max_queue=1))
    gate = Gate(service)
    tokenize = {"tokenizer": "", "data": "Just tokens."}
    with live_server(service) as url, ThreadPoolExecutor(2) as pool:
        first = pool.submit(httpx.post, f"{url}/process", data={**UDPIPE, "data": "One."}, timeout=SETTLE_S)
        assert gate.started.wait(SETTLE_S)
        queued = pool.submit(httpx.post, f"{url}/process", data=tokenize, timeout=SETTLE_S)
        settle(lambda: service.batcher.queued() == 1, "the tokenize-only request did not queue")
        refused = httpx.post(f"{url}/process", data=tokenize)
        assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
        gate.release.set()
        assert first.result().status_code == queued.result().status_code == 200
        assert "1\tJust" in queued.result().json()["result"]


# ---------------------------------------------------------------- connections


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` (read until EOF, within SETTLE_S)."""
    sock.settimeout(SETTLE_S)
    try:
        while sock.recv(4096):
            pass
    except (ConnectionResetError, socket.timeout) as exc:
        return isinstance(exc, ConnectionResetError)
    return True


@pytest.mark.slow
def test_idle_connections_are_closed_and_a_normal_client_is_still_answered(models, log_lines):
    service = Service(models, ServiceSettings(max_connections=20, read_timeout_s=1.0, idle_timeout_s=0.5))
    with live_server(service) as url:
        log_lines.watch()
        idle = [socket.create_connection(("127.0.0.1", port_of(url))) for _ in range(60)]
        try:
            answer = httpx.post(f"{url}/process", data={"tokenizer": "", "parser": "", "data": "Still here."}, timeout=SETTLE_S)
            assert answer.status_code == 200
            assert all(closed_by_server(s) for s in idle)
        finally:
            for s in idle:
                s.close()
    assert len(log_lines.records) <= 2 * LOG_BURST + 2  # evictions and read timeouts, each kind held to its burst


@pytest.mark.slow
def test_a_stalled_upload_is_cut_at_the_read_timeout(models, log_lines):
    service = Service(models, ServiceSettings(read_timeout_s=1.0))
    with live_server(service) as url:
        log_lines.watch()
        for head in (b"POST /process HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ndata=abc",
                     b"POST /process HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "):  # a body, then a head, that never end
            with socket.create_connection(("127.0.0.1", port_of(url))) as sock:
                sock.sendall(head)
                assert closed_by_server(sock)
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
    assert len(log_lines.records) == 2  # one line each


def test_a_client_that_disconnects_mid_upload_is_one_log_line(models, log_lines):
    with live_server(Service(models, ServiceSettings())) as url:
        log_lines.watch()
        with socket.create_connection(("127.0.0.1", port_of(url))) as sock:
            sock.sendall(b"POST /process HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ndata=abc")
        settle(lambda: log_lines.records, "the disconnect was not logged")
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
    assert len(log_lines.records) == 1 and "connection closed before its whole request" in log_lines.text()[0]


def test_the_log_lets_each_kind_of_line_through_its_burst_then_counts():
    limit = RateLimit()
    records = [logging.LogRecord("uvicorn.error", logging.WARNING, "", 0, "Invalid HTTP request received.", None, None) for _ in range(100)]
    assert sum(limit.filter(r) for r in records) == LOG_BURST
    other = logging.LogRecord("spandep.serve", logging.WARNING, "", 0, "another kind", None, None)
    assert limit.filter(other)
    start, count = limit.windows["Invalid HTTP request received."]
    limit.windows["Invalid HTTP request received."] = (start - 3600, count)  # as if a window had passed
    late = logging.LogRecord("uvicorn.error", logging.WARNING, "", 0, "Invalid HTTP request received.", None, None)
    assert limit.filter(late) and "(90 more like this were not logged" in late.getMessage()


# ---------------------------------------------------------------- origin and host


def test_origin_and_host_are_checked(models):
    service = Service(models, ServiceSettings())
    post = {"tokenizer": "", "data": "Hi."}
    with client(service) as http:
        foreign = http.post("/process", data=post, headers={"origin": "https://evil.example"})
        assert foreign.status_code == 403 and "--allow-origin https://evil.example" in foreign.text
        assert http.post("/parse", json={"data": "Hi."}, headers={"origin": "null"}).json()["error"].startswith("origin 'null' may not call")
        assert http.post("/process", data=post, headers={"origin": "http://127.0.0.1"}).status_code == 200  # the page itself
        assert http.post("/process", data=post).status_code == 200  # no Origin: curl, scripts
        rebound = http.post("/process", data=post, headers={"host": "evil.example:8000"})
        assert rebound.status_code == 403 and "--allow-host evil.example" in rebound.text
        for host in ("localhost:8000", "127.0.0.1", "[::1]:8000"):
            assert http.get("/health", headers={"host": host}).status_code == 200
    allowed = ServiceSettings(allow_origins=("https://good.example",), allow_hosts=("parser.lan",))
    with client(Service(models, allowed)) as http:
        assert http.post("/process", data=post, headers={"origin": "https://good.example", "host": "parser.lan"}).status_code == 200
        assert http.post("/process", data=post, headers={"origin": "https://evil.example"}).status_code == 403
    with client(Service(models, ServiceSettings(cors=True, host="0.0.0.0"))) as http:
        answer = http.post("/process", data=post, headers={"origin": "https://any.example", "host": "parser.lan"})
        assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"


# ---------------------------------------------------------------- UTF-8, columns, names, error formats


def test_parameters_are_utf8_everywhere_and_anything_else_is_400(models):
    form = {"content-type": "application/x-www-form-urlencoded"}
    with client(Service(models, ServiceSettings())) as http:
        raw = http.post("/process", content="tokenizer=&data=Café".encode(), headers=form)  # curl -d 'data=Café'
        assert "1\tCafé\t" in raw.json()["result"]
        for answer in (
            http.post("/process", content=b"tokenizer=&data=Caf\xe9", headers=form),
            http.post("/process", content=b"tokenizer=&data=Caf%E9", headers=form),
            http.get("/process?tokenizer=&data=Caf%E9"),
            http.post("/process", content=b'--b\r\nContent-Disposition: form-data; name="data"\r\n\r\nCaf\xe9\r\n--b--\r\n',
                      headers={"content-type": "multipart/form-data; boundary=b"}),
        ):
            assert answer.status_code == 400 and "not valid UTF-8" in answer.text and answer.text.count("\n") == 1, answer.text
        bad_json = http.post("/parse", content=b'{"data": "Caf\xe9"}', headers={"content-type": "application/json"})
        assert bad_json.status_code == 400 and "error" in bad_json.json()


def test_head_and_deprel_are_kept_together_when_the_parser_is_off(models):
    with client(Service(models, ServiceSettings())) as http:
        result = http.post("/process", data={"input": "conllu", "data": CONLLU}).json()["result"]
        assert result == CONLLU  # nothing asked: every column as given
        assert [line.split("\t")[6:8] for line in result.splitlines() if line] == [["2", "nsubj"], ["0", "root"]]


def test_tagger_retags_on_process_and_without_it_the_input_tags_stay(shipped):
    wrong = CONLLU.replace("PRON\tPRP\tCase=Nom", "NOUN\tNN\tNumber=Sing")
    with client(Service(shipped, ServiceSettings())) as http:
        kept = http.post("/process", data={"input": "conllu", "parser": "", "data": wrong}).json()["result"]
        assert kept.splitlines()[0].split("\t")[3:6] == ["NOUN", "NN", "Number=Sing"]
        retagged = http.post("/process", data={"input": "conllu", "tagger": "", "data": wrong}).json()["result"]
        assert retagged.splitlines()[0].split("\t")[3:5] == ["PRON", "PRP"] and retagged.splitlines()[0].split("\t")[6:8] == ["2", "nsubj"]
        spandep_parse_like = http.post("/parse", json={"input": "conllu", "data": wrong, "output": "conllu"}).json()["result"]
        assert spandep_parse_like.splitlines()[0].split("\t")[3] == "NOUN"  # /parse, as spandep parse, keeps given tags


@pytest.mark.parametrize("name", ["en", "english", "en_ewt", "english-ewt", "engl", "EN", "eng", "English", "EN_EWT"])
def test_model_names_resolve_as_udpipe_does(shipped, name):
    with client(Service(shipped, ServiceSettings())) as http:
        assert http.post("/process", data={"tokenizer": "", "model": name, "data": "Hi."}).json()["model"] == "en"


def test_errors_have_one_format_per_endpoint_family(models):
    with client(Service(models, ServiceSettings())) as http:
        for answer, status in ((http.get("/nosuch"), 404), (http.put("/process"), 405), (http.get("/models", params={"x": "1"}), 200),
                               (http.post("/process", data={"tokenizer": "", "data": "x", "model": "nosuch"}), 400),
                               (http.post("/process", content=b"--b\r\nbroken", headers={"content-type": "multipart/form-data; boundary=b"}), 400)):
            assert answer.status_code == status and (status == 200 or answer.headers["content-type"].startswith("text/plain")), answer.text
        for answer, status in ((http.get("/parse"), 405), (http.post("/parse", json={"data": 3}), 400), (http.post("/health"), 405)):
            assert answer.status_code == status and "error" in answer.json(), answer.text


def test_serve_options_are_bounded():
    runner = CliRunner()
    for option, value in (("--max-bytes", "100000000000"), ("--timeout", "1e9"), ("--max-connections", "100000"), ("--batch-words", "0")):
        result = runner.invoke(cli, ["serve", "--port", "0", option, value])
        assert result.exit_code == 2 and option in result.output and "Traceback" not in result.output, result.output
