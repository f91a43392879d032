"""Load test of ``spandep serve`` on loopback: N concurrent clients, every answer checked against ``spandep parse``.

Each client sends UDPipe-style requests (``POST /process``, ``tagger``, ``parser``; CoNLL-U out), one at a time, for
``--seconds`` after a ``--warmup``: consecutive sentences of ``--data`` (real EWT sentences, taken in turn) as
CoNLL-U with LEMMA, UPOS, XPOS, FEATS, HEAD and DEPREL blanked (``input=conllu``), or, one request in
``--text-share``, their text as raw text (``tokenizer=``: paragraphs of 1 to 5 sentences' texts). Most requests
hold 1 to 4 sentences; one in ``--big-share`` holds 5 to ``--max-sentences`` (150). Every answer must be byte for
byte what ``spandep parse`` wrote for those sentences with the server's ``--batch-tokens`` (raw text: the blocks of
those paragraphs in ``spandep parse -f text`` of all paragraphs, TokenRange offsets counted from the request's
start; nothing lost, reordered or changed). Measured: throughput, latency percentiles, the server's resident memory
every ``--sample-s`` seconds, errors; ``--soak``: 10 minutes after a minute of warm-up, memory every 5 s. ``spandep
parse`` is timed on the same file
with the same ``--threads``, with its default ``--batch-tokens`` and with the server's, just before and just after
the load (a parse time: the run less a run on an empty file, which is start-up and model load), so that whatever
else the machine runs weighs on both (its words per second count the CoNLL-U file only). Then an overload burst (``--burst`` requests at
once against ``--max-queue``) must be answered 503 with Retry-After, not a crash; each refused request retries after
the delay it was given, and every one must end parsed and correct. Bounded: ``--seconds`` ≤ 600, ``--max-requests``.

    .venv/bin/python -m benchmarks.scripts.serve_load --data ../shared/data/en_ewt/en_ewt-ud-test.conllu \\
        --clients 32 --seconds 60 --out benchmarks/results/serve/load_en_ewt_test_32x60.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.suite.record import git, machine, portable_path
from spandep.data.output import write_blocks

HOST = "127.0.0.1"  # loopback only
MAX_SECONDS = 600
REQUEST_TIMEOUT_S = 120
MEMORY_BAR = 0.10  # resident memory after warm-up stays within ±10 % of its mean
THROUGHPUT_BAR = 0.80  # of spandep parse's words per second
UDPIPE = {"input": "conllu", "tagger": "", "parser": "", "output": "conllu"}
BLANKED = (2, 3, 4, 5, 6, 7)  # LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL: what a client asks the server to predict
TOKEN_RANGE = re.compile(r"TokenRange=(\d+):(\d+)")
SOAK = {"seconds": 600.0, "warmup": 60.0, "sample_s": 5.0}


def blocks(text: str) -> list[str]:
    """The sentence blocks of a CoNLL-U text, each ending with its blank line."""
    return [b.strip("\n") + "\n\n" for b in re.split(r"\n\s*\n", text) if b.strip()]


def blanked(block: str) -> str:
    """A CoNLL-U block with the columns of :data:`BLANKED` set to ``_`` on its word lines."""
    lines = []
    for line in block.splitlines(keepends=True):
        cols = line.rstrip("\n").split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            line = "\t".join("_" if i in BLANKED else c for i, c in enumerate(cols)) + "\n"
        lines.append(line)
    return "".join(lines)


def paragraphs(inputs: list[str], rng: random.Random) -> list[str]:
    """The sentences' texts (their ``# text =`` lines) grouped into paragraphs of 1 to 5 sentences, in order."""
    texts = [next((ln[9:] for ln in b.splitlines() if ln.startswith("# text = ")), "") for b in inputs]
    texts = [t for t in texts if t.strip()]
    groups, i = [], 0
    while i < len(texts):
        n = rng.randint(1, 5)
        groups.append(" ".join(texts[i : i + n]))
        i += n
    return groups


def by_paragraph(reference: str) -> list[str]:
    """The blocks of ``spandep parse -f text`` output, joined per paragraph (a paragraph's first has ``# newpar``)."""
    out: list[str] = []
    for block in blocks(reference):
        if block.startswith("# newpar") or not out:
            out.append(block)
        else:
            out[-1] += block
    return out


def shifted(text: str, offset: int) -> str:
    """``text`` with every ``TokenRange=a:b`` moved ``offset`` characters to the left."""
    return TOKEN_RANGE.sub(lambda m: f"TokenRange={int(m.group(1)) - offset}:{int(m.group(2)) - offset}", text)


def word_count(block: str) -> int:
    """Words of a CoNLL-U block: its lines with an integer ID (not multiword-token ranges or empty nodes)."""
    return sum(1 for line in block.splitlines() if line.split("\t", 1)[0].isdigit())


def spandep(*args: str) -> list[str]:
    return [sys.executable, "-m", "spandep", *args]


def timed_cli(data: Path, threads: int, out: Path, *options: str) -> float:
    """Wall-clock seconds of ``spandep parse DATA -o OUT --threads N OPTIONS``."""
    started = time.perf_counter()
    command = spandep("parse", str(data), "-o", str(out), "--threads", str(threads), *options)
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL, env=env(threads))
    return time.perf_counter() - started


def env(threads: int) -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": str(threads)}


def cli_run(data: Path, threads: int, words: int, work: Path, batch_tokens: int) -> dict[str, Any]:
    """One round of reference measurements: ``spandep parse`` of ``data`` with its default ``--batch-tokens`` and
    with the server's (written to ``ref.conllu``); a parse time is the run less the run of an empty file."""
    (work / "empty.conllu").write_text("")
    start_up = timed_cli(work / "empty.conllu", threads, work / "empty.out")
    round_: dict[str, Any] = {"start_up_s": round(start_up, 2)}
    for name, out, options in (("default", "default.conllu", ()), ("same_batch_tokens", "ref.conllu", ("--batch-tokens", str(batch_tokens)))):
        parse_s = timed_cli(data, threads, work / out, *options) - start_up
        round_[name] = {"parse_s": round(parse_s, 2), "words_per_s": round(words / parse_s, 1)}
    return round_


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Corpus:
    """What clients send and must get back: CoNLL-U blocks (tags and trees blanked) and the blocks ``spandep parse``
    wrote for them; raw-text paragraphs, where each starts in the text file, and their blocks."""

    def __init__(self, inputs: list[str], expected: list[str], paras: list[str], para_expected: list[str]) -> None:
        self.inputs, self.expected = inputs, expected
        self.words = [word_count(b) for b in expected]
        self.paras, self.para_expected = paras, para_expected
        self.para_words = [sum(map(word_count, blocks(b))) for b in para_expected]
        self.para_sentences = [len(blocks(b)) for b in para_expected]
        self.para_start = [0]
        for para in paras[:-1]:
            self.para_start.append(self.para_start[-1] + len(para) + 2)  # joined by a blank line

    def request(self, kind: str, start: int, count: int) -> tuple[dict[str, str], str, int, int]:
        """The form, the expected result, the sentences and the words of a request of ``count`` units from ``start``."""
        if kind == "text":
            data = "\n\n".join(self.paras[start : start + count])
            expected = shifted("".join(self.para_expected[start : start + count]), self.para_start[start])
            form = {"tokenizer": "", "tagger": "", "parser": "", "output": "conllu", "data": data}
            return form, expected, sum(self.para_sentences[start : start + count]), sum(self.para_words[start : start + count])
        data = "".join(self.inputs[start : start + count])
        return {**UDPIPE, "data": data}, "".join(self.expected[start : start + count]), count, sum(self.words[start : start + count])


class Load:
    """The clients' shared state: which sentences come next, what came back, what it cost."""

    def __init__(self, corpus: Corpus, args: argparse.Namespace, seed: int, max_requests: int) -> None:
        self.corpus, self.args = corpus, args
        self.rng = random.Random(seed)
        self.next = {"conllu": 0, "text": 0}
        self.max_requests = max_requests
        self.requests = self.sentences = self.words = self.errors = self.mismatches = 0
        self.latencies: list[float] = []
        self.statuses: dict[str, int] = {}
        self.kinds: dict[str, int] = {}

    def take(self) -> tuple[str, int, int]:
        """The next request: its kind, first unit and units (sentences, or paragraphs of about 3 sentences)."""
        kind = "text" if self.corpus.paras and self.rng.random() < self.args.text_share else "conllu"
        sentences = self.rng.randint(5, self.args.max_sentences) if self.rng.random() < self.args.big_share else self.rng.randint(1, 4)
        units = len(self.corpus.paras) if kind == "text" else len(self.corpus.inputs)
        count = min(max(1, round(sentences / 3)) if kind == "text" else sentences, units)
        start = self.next[kind] if self.next[kind] + count <= units else 0
        self.next[kind] = start + count
        return kind, start, count

    async def request(self, client: httpx.AsyncClient, url: str, kind: str, start: int, count: int, retry: bool = False) -> None:
        form, expected, sentences, words = self.corpus.request(kind, start, count)
        began = time.perf_counter()
        for _ in range(10 if retry else 1):
            try:
                response = await client.post(f"{url}/process", data=form, timeout=REQUEST_TIMEOUT_S)
            except httpx.HTTPError as exc:
                self.statuses[type(exc).__name__] = self.statuses.get(type(exc).__name__, 0) + 1
                self.errors += 1
                return
            self.statuses[str(response.status_code)] = self.statuses.get(str(response.status_code), 0) + 1
            if response.status_code == 503 and retry:
                await asyncio.sleep(float(response.headers["Retry-After"]))
                continue
            break
        self.latencies.append(time.perf_counter() - began)
        self.requests += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if response.status_code != 200:
            self.errors += 1
            return
        self.sentences += sentences
        self.words += words
        if response.json()["result"] != expected:
            self.mismatches += 1

    async def client(self, http: httpx.AsyncClient, url: str, until: float) -> None:
        while time.monotonic() < until and self.requests < self.max_requests:
            await self.request(http, url, *self.take())

    def summary(self, seconds: float) -> dict[str, Any]:
        return {
            "requests": self.requests, "sentences": self.sentences, "words": self.words, "seconds": round(seconds, 2),
            "requests_per_s": round(self.requests / seconds, 1), "sentences_per_s": round(self.sentences / seconds, 1),
            "words_per_s": round(self.words / seconds, 1), "errors": self.errors, "mismatches": self.mismatches,
            "statuses": self.statuses, "kinds": self.kinds, **{f"latency_p{q}_ms": round(1000 * percentile(self.latencies, q / 100), 1) for q in (50, 95, 99)},
        }


async def watch_memory(pid: int, samples: list[tuple[float, float]], loads: list[float], started: float, stop: asyncio.Event, every_s: float) -> None:
    """Every ``every_s``: the server's resident memory (into ``samples``) and the machine's 1-minute load average."""
    while not stop.is_set():
        samples.append((round(time.monotonic() - started, 1), round(rss_mb(pid), 1)))
        loads.append(round(os.getloadavg()[0], 2))
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except asyncio.TimeoutError:
            pass


async def drive(url: str, pid: int, load: Load, args: argparse.Namespace) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=max(args.clients, args.burst) + 8)
    async with httpx.AsyncClient(limits=limits) as http:
        warm = Load(load.corpus, args, args.seed + 1, args.max_requests)
        await asyncio.gather(*(warm.client(http, url, time.monotonic() + args.warmup) for _ in range(args.clients)))
        samples: list[tuple[float, float]] = []
        loads: list[float] = []
        stop = asyncio.Event()
        health = (await http.get(f"{url}/health")).json()
        cpu = (cpu_seconds(pid), time.process_time())
        started = time.monotonic()
        watcher = asyncio.create_task(watch_memory(pid, samples, loads, started, stop, args.sample_s))
        await asyncio.gather(*(load.client(http, url, started + args.seconds) for _ in range(args.clients)))
        elapsed = time.monotonic() - started
        busy = (await http.get(f"{url}/health")).json()["parse_seconds"] - health["parse_seconds"]
        use = {"server_cpu_s": round(cpu_seconds(pid) - cpu[0], 1), "client_cpu_s": round(time.process_time() - cpu[1], 1),
               "worker_in_model_s": round(busy, 1)}
        stop.set()
        await watcher
        burst = Load(load.corpus, args, args.seed + 2, args.burst)
        burst_started = time.monotonic()
        await asyncio.gather(*(burst.request(http, url, *burst.take(), retry=True) for _ in range(args.burst)))
        burst_s = time.monotonic() - burst_started
        health = (await http.get(f"{url}/health")).json()
    return {"elapsed": elapsed, "cpu": use, "warmup": warm.summary(args.warmup), "memory": samples, "loads": loads, "burst": burst.summary(burst_s), "health": health}


def load_summary(loads: list[float]) -> dict[str, Any]:
    """The machine's 1-minute load average at the memory samples: the soak is a memory bar, the machine may be shared."""
    return {"samples": loads, "min": min(loads), "mean": round(sum(loads) / len(loads), 2), "max": max(loads)}


def memory_summary(samples: list[tuple[float, float]]) -> dict[str, Any]:
    values = [mb for _, mb in samples]
    mean = sum(values) / len(values)
    return {"samples_mb": samples, "first_mb": values[0], "last_mb": values[-1], "min_mb": min(values), "max_mb": max(values),
            "mean_mb": round(mean, 1), "max_deviation_from_mean": round(max(abs(v - mean) for v in values) / mean, 4)}


def add_mix_options(ap: argparse.ArgumentParser) -> None:
    """The options of the requests' mix (:meth:`Load.take`), which ``serve_memory`` sends too."""
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--text-share", type=float, default=0.3, help="share of requests sent as raw text")
    ap.add_argument("--big-share", type=float, default=0.1, help="share of requests of 5 to --max-sentences sentences")
    ap.add_argument("--max-sentences", type=int, default=150, help="sentences of the biggest requests")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="CoNLL-U file of the sentences the clients send")
    ap.add_argument("--limit", type=int, help="only the first LIMIT sentences of --data")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=60.0, help=f"length of the measured load (at most {MAX_SECONDS})")
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds of load before the measurement")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the server and of spandep parse")
    ap.add_argument("--max-queue", type=int, default=64, help="the server's --max-queue")
    ap.add_argument("--batch-tokens", type=int, default=1000, help="the server's --batch-tokens (spandep serve's default)")
    ap.add_argument("--batch-wait-ms", type=float, default=10.0, help="the server's --batch-wait-ms (spandep serve's default)")
    ap.add_argument("--burst", type=int, default=256, help="requests sent at once to overload the queue")
    ap.add_argument("--max-requests", type=int, default=200_000, help="stop the measured load after this many")
    add_mix_options(ap)
    ap.add_argument("--sample-s", type=float, default=1.0, help="seconds between samples of the server's memory")
    ap.add_argument("--soak", action="store_true", help="10 minutes of load after 1 of warm-up, memory every 5 s (sets --seconds, --warmup, --sample-s)")
    ap.add_argument("--out", help="result JSON (benchmarks/results/serve/...)")
    args = ap.parse_args()
    if args.soak:
        vars(args).update(SOAK)
    if not 0 < args.seconds <= MAX_SECONDS:
        ap.error(f"--seconds must be in (0, {MAX_SECONDS}]")
    inputs = [blanked(b) for b in blocks(Path(args.data).read_text(encoding="utf-8"))[: args.limit]]
    words = sum(map(word_count, inputs))
    paras = paragraphs(inputs, random.Random(args.seed))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data.conllu"  # what the clients send, as spandep parse reads it
        data.write_text("".join(inputs), encoding="utf-8")
        before = cli_run(data, args.threads, words, work, args.batch_tokens)
        expected = blocks((work / "ref.conllu").read_text(encoding="utf-8"))
        assert len(expected) == len(inputs), "spandep parse wrote one block per sentence"
        default = blocks((work / "default.conllu").read_text(encoding="utf-8"))
        (work / "text.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
        subprocess.run(spandep("parse", str(work / "text.txt"), "-f", "text", "-o", str(work / "text.conllu"), "--threads", str(args.threads),
                               "--batch-tokens", str(args.batch_tokens)), check=True, stderr=subprocess.DEVNULL, env=env(args.threads))
        para_expected = by_paragraph((work / "text.conllu").read_text(encoding="utf-8"))
        assert len(para_expected) == len(paras), "spandep parse -f text wrote one # newpar per paragraph"
        server = subprocess.Popen(spandep("serve", "--host", HOST, "--port", "0", "--threads", str(args.threads), "--max-queue", str(args.max_queue),
                                          "--batch-tokens", str(args.batch_tokens), "--batch-wait-ms", str(args.batch_wait_ms)), stderr=subprocess.PIPE, text=True, env=env(args.threads))
        try:
            url = re.search(r"(http://[0-9.:]+)/", server.stderr.readline()).group(1)
            load = Load(Corpus(inputs, expected, paras, para_expected), args, args.seed, args.max_requests)
            run = asyncio.run(drive(url, server.pid, load, args))
        finally:
            server.terminate()
            server.wait(60)
        after = cli_run(data, args.threads, words, work, args.batch_tokens)
    served = load.summary(run["elapsed"])
    cli = {name: round((before[name]["words_per_s"] + after[name]["words_per_s"]) / 2, 1) for name in ("default", "same_batch_tokens")}
    memory = memory_summary(run["memory"])
    burst = run["burst"]
    result = {
        "schema": "spandep-serve-load/1",
        "command": " ".join([Path(sys.executable).name, "-m", "benchmarks.scripts.serve_load",
                             *(portable_path(a) if a == args.data else a for a in sys.argv[1:])]),
        "commit": git("rev-parse", "HEAD"), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
        "load_average_at_end": os.getloadavg(), "load_average_1min_during_load": load_summary(run["loads"]), "data": portable_path(args.data), "sentences": len(inputs), "words": words,
        "settings": {k: v for k, v in vars(args).items() if k not in ("data", "out")},
        "spandep_parse": {"before": before, "after": after, "words_per_s_mean": cli,
                          "sentences_that_differ_default_vs_same_batch_tokens": sum(a != b for a, b in zip(default, expected))},
        "served": {**served, **run["cpu"]}, "throughput_ratio": {name: round(served["words_per_s"] / value, 3) if value else None for name, value in cli.items()},
        "memory": memory, "warmup": run["warmup"],
        "overload": {k: burst[k] for k in ("requests", "sentences", "errors", "mismatches", "statuses", "latency_p50_ms", "latency_p99_ms")},
        "server_health_at_end": run["health"],
    }
    result["bars"] = {
        "no_errors": served["errors"] == 0, "no_mismatches": served["mismatches"] == 0,
        # the bar: 80 % of `spandep parse` as it runs (its default --batch-tokens); beside it, against `spandep parse`
        # given the server's --batch-tokens, which on the default model parses faster than its own default does
        "throughput_at_least_80_percent": result["throughput_ratio"]["default"] >= THROUGHPUT_BAR,
        "throughput_at_least_80_percent_at_the_servers_batch_tokens": result["throughput_ratio"]["same_batch_tokens"] >= THROUGHPUT_BAR,
        "memory_flat_10_percent": memory["max_deviation_from_mean"] <= MEMORY_BAR,
        "overload_answered_503": burst["statuses"].get("503", 0) > 0 and burst["errors"] == 0 and burst["mismatches"] == 0,
    }
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_blocks([text + "\n"], Path(args.out))
    printed = {k: v for k, v in result.items() if k != "memory"}
    print(json.dumps({**printed, "memory": {k: v for k, v in memory.items() if k != "samples_mb"}}, indent=1))


if __name__ == "__main__":
    main()
