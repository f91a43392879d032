"""The guard bars of ``spandep serve`` (issue 43), measured against a real server with the shipped model on loopback.

Each bar starts its own ``spandep serve --threads 1`` (its stderr, the log, kept to count lines) and records what it
saw: status, the answer's first line, seconds. ``huge_k``: ``POST /parse`` with k = 1,000,000,000 (400 within 2 s,
``/health`` after); ``long_sentence``: a sentence of 20,000 words (413 naming the limit); ``fair``: one client sends
the largest request the limits allow (``--max-sentences`` one-word sentences; ``fair_text``: EWT test's raw text,
125 kB, under ``--max-bytes``), another sends one sentence a second meanwhile (each answered within 5 s); ``timeout``: the same big request against ``--timeout 2``, then how long until
the worker is idle (within 5 s) and a one-sentence request's latency; ``idle``: ``--idle-connections`` connections
held open ``--idle-seconds`` without a byte while a client sends a request every 5 s (all answered, the idle ones
closed by the server, under 100 log lines); ``udpipe``: ``curl -d 'data=Café'``, HEAD with the parser off,
``model=english`` and ``model=en_ewt``; ``memory``: the server's resident memory after each of four big requests
(the one-word sentences, then EWT test's raw text, twice), with and without the worker's trim.

    PYTHONPATH=src:. OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.scripts.serve_bars \\
        --out benchmarks/results/serve/bars.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from benchmarks.scripts.serve_load import rss_mb
from benchmarks.suite.record import git, machine
from spandep.data.output import write_blocks

HOST = "127.0.0.1"  # loopback only
MAX_SENTENCES = 10_000  # spandep serve's default --max-sentences: the biggest request of one-word sentences
CONLLU = "1\tI\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\tran\t_\t_\t_\t_\t0\troot\t_\t_\n\n"


NO_TRIM = "import spandep.serve.service as s; s.TRIM_EVERY_S = float('inf'); from spandep.cli.main import app; app(prog_name='spandep')"


@contextlib.contextmanager
def server(*options: str, trim: bool = True) -> Iterator[tuple[str, int, Path]]:
    """A ``spandep serve`` on a free loopback port: ``(url, pid, log file)``; stopped (SIGTERM) after. ``trim=False``:
    never hand memory back (for the comparison of ``memory``)."""
    log = Path(tempfile.mkstemp(suffix=".log")[1])
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    start = ["-m", "spandep"] if trim else ["-c", NO_TRIM]
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, *start, "serve", "--host", HOST, "--port", "0", "--threads", "1", *options],
                                stderr=err, env=env)
    try:
        deadline = time.monotonic() + 120
        while not (match := re.search(r"(http://[0-9.:]+)/", log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield match.group(1), proc.pid, log
    finally:
        proc.terminate()
        proc.wait(120)


def timed(call: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = call()
    return response, round(time.perf_counter() - started, 3)


def first_line(response: httpx.Response) -> str:
    return response.text.splitlines()[0] if response.text else ""


def huge_k() -> dict[str, Any]:
    with server() as (url, _, _):
        answer, seconds = timed(lambda: httpx.post(f"{url}/parse", json={"data": "I saw her.", "k": 1_000_000_000}, timeout=60))
        return {"status": answer.status_code, "answer": answer.text, "lines": answer.text.count("\n") + 1, "seconds": seconds,
                "health_after": httpx.get(f"{url}/health").json()["status"]}


def long_sentence() -> dict[str, Any]:
    with server() as (url, _, _):
        answer, seconds = timed(lambda: httpx.post(f"{url}/process", data={"input": "horizontal", "parser": "", "data": "word " * 20_000}, timeout=60))
        return {"status": answer.status_code, "answer": first_line(answer), "seconds": seconds, "health_after": httpx.get(f"{url}/health").json()["status"]}


BIG = {"tokenizer": "presegmented", "tagger": "", "parser": "", "data": "Yes\n" * MAX_SENTENCES}
SMALL = {"tokenizer": "", "tagger": "", "parser": "", "data": "The small request is answered."}
EWT = Path(__file__).resolve().parents[3] / "shared" / "data" / "en_ewt" / "en_ewt-ud-test.conllu"  # its sentences' texts: 125 kB of raw text


def ewt_text(limit: int = 199_000) -> str:
    texts = [ln[9:] for ln in EWT.read_text(encoding="utf-8").splitlines() if ln.startswith("# text = ")]
    return " ".join(texts).encode()[:limit].decode("utf-8", "ignore")


TEXT = {"tokenizer": "", "tagger": "", "parser": "", "data": ewt_text()}


def fair(data: dict[str, str]) -> dict[str, Any]:
    with server() as (url, _, _), ThreadPoolExecutor(1) as pool:
        httpx.post(f"{url}/process", data=SMALL, timeout=60)  # warm
        big = pool.submit(timed, lambda: httpx.post(f"{url}/process", data=data, timeout=600))
        small = []
        while not big.done():
            time.sleep(1)
            answer, seconds = timed(lambda: httpx.post(f"{url}/process", data=SMALL, timeout=600))
            small.append((answer.status_code, seconds))
        answer, seconds = big.result()
        return {"big": {"status": answer.status_code, "bytes": len(data["data"].encode()), "seconds": seconds}, "small": small,
                "small_max_seconds": max(s for _, s in small), "small_all_200": all(c == 200 for c, _ in small)}


def timeout() -> dict[str, Any]:
    with server("--timeout", "2") as (url, _, _):
        httpx.post(f"{url}/process", data=SMALL, timeout=60)
        answer, seconds = timed(lambda: httpx.post(f"{url}/process", data=BIG, timeout=600))
        told = time.perf_counter()
        while (health := httpx.get(f"{url}/health").json())["parsing"] or health["queued"]:
            time.sleep(0.05)
        free = round(time.perf_counter() - told, 3)
        after, after_s = timed(lambda: httpx.post(f"{url}/process", data=SMALL, timeout=60))
        return {"status": answer.status_code, "answer": first_line(answer), "seconds": seconds, "worker_free_after_s": free,
                "cancelled": health["cancelled"], "next_request": {"status": after.status_code, "seconds": after_s}}


def closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def idle(count: int, seconds: float) -> dict[str, Any]:
    with server() as (url, _, log):
        port = int(url.rsplit(":", 1)[1])
        lines_before = len(log.read_text().splitlines())
        socks, refused = [], 0
        for _ in range(count):
            try:
                socks.append(socket.create_connection((HOST, port), timeout=10))
            except OSError:
                refused += 1
        answers = []
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            answer, took = timed(lambda: httpx.post(f"{url}/process", data=SMALL, timeout=60))
            answers.append((answer.status_code, took))
            time.sleep(5)
        closed_count = sum(closed(s) for s in socks)
        for s in socks:
            s.close()
        return {"idle_connections": count, "held_s": seconds, "connect_refused": refused, "closed_by_server": closed_count,
                "normal_requests": answers, "all_answered": all(c == 200 for c, _ in answers), "log_lines": len(log.read_text().splitlines()) - lines_before,
                "health_after": httpx.get(f"{url}/health").json()["status"]}


def udpipe() -> dict[str, Any]:
    with server() as (url, _, _):
        curl = subprocess.run(["curl", "-s", "-d", "tokenizer=", "-d", "data=Café", f"{url}/process"], capture_output=True, text=True, timeout=60)
        cafe = json.loads(curl.stdout)["result"]
        kept = httpx.post(f"{url}/process", data={"input": "conllu", "tagger": "", "data": CONLLU}, timeout=60).json()["result"]
        names = {n: httpx.post(f"{url}/process", data={"tokenizer": "", "model": n, "data": "Hi."}, timeout=60).json()["model"] for n in ("english", "en_ewt")}
        return {"curl_cafe": [ln for ln in cafe.splitlines() if ln.startswith("1\t")][0], "cafe_ok": "\tCafé\t" in cafe,
                "head_deprel_with_parser_off": [ln.split("\t")[6:8] for ln in kept.splitlines() if ln], "models": names}


def memory() -> dict[str, Any]:
    samples: dict[str, Any] = {}
    for trim in (True, False):
        with server(trim=trim) as (url, pid, _):
            httpx.post(f"{url}/process", data=SMALL, timeout=60)
            runs = samples["trim" if trim else "no_trim"] = {"after_start_mb": round(rss_mb(pid), 1), "after_big_mb": []}
            for data in (BIG, TEXT, BIG, TEXT):
                httpx.post(f"{url}/process", data=data, timeout=600)
                runs["after_big_mb"].append(round(rss_mb(pid), 1))
    return samples


BARS = {"huge_k": huge_k, "long_sentence": long_sentence, "fair": lambda: fair(BIG), "fair_text": lambda: fair(TEXT), "timeout": timeout,
        "udpipe": udpipe, "memory": memory}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bars", default=",".join([*BARS, "idle"]), help="which bars, comma-separated")
    ap.add_argument("--idle-connections", type=int, default=1000)
    ap.add_argument("--idle-seconds", type=float, default=60.0)
    ap.add_argument("--out", help="result JSON (benchmarks/results/serve/...)")
    args = ap.parse_args()
    result: dict[str, Any] = {"schema": "spandep-serve-bars/1",
                              "command": " ".join([Path(sys.executable).name, "-m", "benchmarks.scripts.serve_bars", *sys.argv[1:]]),
                              "commit": git("rev-parse", "HEAD"), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine()}
    for name in args.bars.split(","):
        result[name] = idle(args.idle_connections, args.idle_seconds) if name == "idle" else BARS[name]()
        print(name, json.dumps(result[name])[:600], flush=True)
    result["load_average_at_end"] = os.getloadavg()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_blocks([json.dumps(result, indent=1) + "\n"], Path(args.out))


if __name__ == "__main__":
    main()
