"""Where ``spandep serve``'s memory goes under load: the service in-process, without HTTP, sampled as it runs.

``--clients`` clients send :mod:`serve_load`'s requests (the same mix: CoNLL-U with tags and trees blanked, raw text,
1 to 4 sentences, one in ten up to 150) straight to :class:`~spandep.serve.service.Service` through the server's own
reading of UDPipe's parameters, and render each answer as the server does; the answers are not checked here
(``serve_load`` checks them over HTTP). Every ``--sample-s`` seconds: the resident memory (anonymous and file-backed),
the data segment (``VmData``), what glibc's malloc has in use and holds free (``mallinfo2``, every arena), Python's
allocated blocks, the anonymous executable mappings (code compiled at run time: oneDNN's kernels) and the requests
and turns so far. ``--kernel-cache N`` sets oneDNN's cache of compiled kernels (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``)
as ``spandep serve`` does; 0 leaves oneDNN's default (1,024). Malloc's options are set as ``spandep serve`` sets them.
Linux with glibc only (it reads ``/proc/self`` and calls ``mallinfo2``).

    PYTHONPATH=src:. OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.scripts.serve_memory \\
        --data ../shared/data/en_ewt/en_ewt-ud-test.conllu --seconds 300 --kernel-cache 0 \\
        --out benchmarks/results/serve/memory_en_ewt_test_32x300_kernel_cache_default.json
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.scripts.serve_load import Corpus, Load, add_mix_options, blanked, blocks, paragraphs
from benchmarks.suite.record import git, machine, portable_path
from spandep.data.output import write_blocks

FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
MB = 1 << 20
ONEDNN_DEFAULT = 1024  # oneDNN's own kernel-cache capacity: what --kernel-cache 0 asks for


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS]  # glibc's struct mallinfo2 (malloc.h)


def sample(started: float, load: Load, turns: int) -> dict[str, Any]:
    """One sample of this process's memory (module docstring), in MB."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    row: dict[str, Any] = {"t": round(time.monotonic() - started, 1), "requests": load.requests, "turns": turns}
    row.update({key.lower(): int(status[key].split()[0]) // 1024 for key in ("VmRSS", "RssAnon", "RssFile", "VmData")})
    mallinfo2 = ctypes.CDLL(None).mallinfo2
    mallinfo2.restype = MallInfo2
    info = mallinfo2()
    row.update(malloc_in_use=round(info.uordblks / MB, 1), malloc_free=round(info.fordblks / MB, 1), malloc_mapped=round(info.hblkhd / MB, 1))
    row["python_blocks"] = sys.getallocatedblocks()
    jit = [line.split() for line in Path("/proc/self/maps").read_text().splitlines() if line.split()[1] == "rwxp"]
    row["jit_mappings"] = len(jit)
    row["jit_mb"] = round(sum(int(b, 16) - int(a, 16) for a, b in (m[0].split("-") for m in jit)) / MB, 1)
    return row


async def run(service: Any, load: Load, args: argparse.Namespace) -> list[dict[str, Any]]:
    from spandep.serve.app import udpipe_request
    from spandep.serve.service import render

    started = time.monotonic()
    until = started + args.seconds
    samples: list[dict[str, Any]] = []

    async def client() -> None:
        while time.monotonic() < until:
            request, output = udpipe_request(load.corpus.request(*load.take())[0], service)
            await asyncio.to_thread(render, await service.parse(request), output)
            load.requests += 1

    async def watch() -> None:
        while time.monotonic() < until:
            samples.append(sample(started, load, service.batcher.counters.batches))
            await asyncio.sleep(args.sample_s)

    await asyncio.gather(watch(), *(client() for _ in range(args.clients)))
    return samples


def summary(samples: list[dict[str, Any]], after_s: float) -> dict[str, Any]:
    """Each measure's first, last, least, largest and mean value from ``after_s`` on, and its largest distance from
    the mean."""
    kept = [s for s in samples if s["t"] >= after_s]
    out = {}
    for key in ("vmrss", "rssanon", "rssfile", "vmdata", "malloc_in_use", "malloc_free", "python_blocks", "jit_mappings", "jit_mb"):
        values = [s[key] for s in kept]
        mean = sum(values) / len(values)
        out[key] = {"first": values[0], "last": values[-1], "min": min(values), "max": max(values), "mean": round(mean, 1),
                    "max_deviation_from_mean": round(max(abs(v - mean) for v in values) / mean, 4) if mean else 0.0}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="CoNLL-U file of the sentences the clients send")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--sample-s", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=60.0, help="seconds left out of the summary")
    ap.add_argument("--kernel-cache", type=int, default=64, help="oneDNN's compiled kernels kept (0: oneDNN's default)")
    add_mix_options(ap)
    ap.add_argument("--out", help="result JSON (benchmarks/results/serve/...)")
    args = ap.parse_args()
    from spandep.serve.memory import set_malloc_options
    from spandep.serve.service import Service, ServiceSettings
    from spandep.storage.kernels import KERNEL_CACHE

    set_malloc_options()
    os.environ[KERNEL_CACHE[0]] = str(args.kernel_cache or ONEDNN_DEFAULT)  # said, so the model load keeps it
    inputs = [blanked(b) for b in blocks(Path(args.data).read_text(encoding="utf-8"))]
    corpus = Corpus(inputs, [], paragraphs(inputs, random.Random(args.seed)), [])  # nothing expected: not checked here
    load = Load(corpus, args, args.seed, max_requests=0)
    service = Service.load([], ServiceSettings(), threads=1)
    service.start()
    try:
        samples = asyncio.run(run(service, load, args))
    finally:
        service.stop()
    result = {
        "schema": "spandep-serve-memory/1",
        "command": " ".join([Path(sys.executable).name, "-m", "benchmarks.scripts.serve_memory",
                             *(portable_path(a) if a == args.data else a for a in sys.argv[1:])]),
        "commit": git("rev-parse", "HEAD"), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
        "load_average_at_end": os.getloadavg(), "data": portable_path(args.data),
        "settings": {k: v for k, v in vars(args).items() if k not in ("data", "out")},
        "requests": load.requests, "turns": service.batcher.counters.batches, "summary_after_warmup": summary(samples, args.warmup),
        "samples": samples,
    }
    text = json.dumps(result, indent=1)
    if args.out:
        write_blocks([text + "\n"], Path(args.out))
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=1))


if __name__ == "__main__":
    main()
