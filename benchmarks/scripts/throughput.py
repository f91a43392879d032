"""Throughput of the three ways to parse a corpus on this machine, with their outputs checked identical.

Paths: one process (``parse_stream``, ``--threads`` torch threads), ``spandep parse --workers N``'s
``parse_parallel`` (N spawned processes, one thread each) and Ray Data (``spandep.integrations.ray_data``,
N actors, one thread each, on a local Ray instance). Each path parses the same sentences (forms only, as a user's
tokenised input) from memory and its wall time is measured end to end, worker start-up and model loading included
(what a user waits for); the single process's model load is timed separately. Heads and labels of every path are
compared with the single-process run, sentence by sentence. The timer is not ``spandep.pipeline.speed.measure_speed``:
that times ``parse_stream`` alone, in 2,000-sentence chunks, where each path here runs end to end in ``spandep parse``'s
512-sentence chunks.

    .venv/bin/python -m benchmarks.scripts.throughput --data ../shared/data/en_ewt/en_ewt-ud-test.conllu \\
        --out benchmarks/results/speed/throughput__en_ewt_test__default.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import torch

from benchmarks.suite.record import machine
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.storage.model_io import load_model, resolve_model_dir
from spandep.pipeline.predict import parse_stream, with_tree
from spandep.api import ModelSpec
from spandep.pipeline.workers import parse_parallel

CHUNK = 512  # sentences per chunk / Ray batch, as `spandep parse` uses


def trees(sentences: list[Sentence]) -> list[tuple[list[int | None], list[str]]]:
    return [(s.heads, s.deprels) for s in sentences]


def timed(run: Any) -> tuple[list[tuple[list[int | None], list[str]]], float]:
    start = time.perf_counter()
    out = trees(list(run()))
    return out, time.perf_counter() - start


def ray_parse(model: str, sentences: list[Sentence], actors: int) -> list[Sentence]:
    import ray

    from spandep.integrations.ray_data import parse_dataset

    ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        ds = ray.data.from_items([{"id": i, "tokens": s.forms} for i, s in enumerate(sentences)])
        rows = sorted(parse_dataset(ds, model=model, actors=actors, batch_size=CHUNK).take_all(), key=lambda r: r["id"])
    finally:
        ray.shutdown()
    return [with_tree(s, [int(h) for h in row["heads"]], [str(r) for r in row["deprels"]]) for s, row in zip(sentences, rows)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="a CoNLL-U file (its forms are parsed)")
    ap.add_argument("--model", default=None, help="model folder (default: the shipped model)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads of the single process")
    ap.add_argument("--workers", type=int, default=2, help="processes / Ray actors")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    model_dir = str(resolve_model_dir(args.model))
    sentences = [Sentence.from_tokens(s.forms) for s in read_conllu(args.data)]
    words = sum(len(s) for s in sentences)

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    model = load_model(model_dir)
    load_seconds = time.perf_counter() - start
    reference, seconds = timed(lambda: parse_stream(model, sentences, chunk_size=CHUNK))
    rows = [{"path": f"1 process, {args.threads} threads", "seconds": seconds, "identical": True}]
    print(json.dumps(rows[-1]), flush=True)

    spec = ModelSpec(model_dir, threads=1)
    got, seconds = timed(lambda: parse_parallel(spec, sentences, args.workers, CHUNK))
    rows.append({"path": f"{args.workers} processes (--workers), 1 thread each", "seconds": seconds, "identical": got == reference})
    print(json.dumps(rows[-1]), flush=True)

    if not args.skip_ray:
        got, seconds = timed(lambda: ray_parse(model_dir, sentences, args.workers))
        rows.append({"path": f"Ray Data, {args.workers} actors, 1 thread each", "seconds": seconds, "identical": got == reference})
        print(json.dumps(rows[-1]), flush=True)

    for row in rows:
        row["seconds"] = round(row["seconds"], 1)
        row["sent_per_s"] = round(len(sentences) / row["seconds"], 1)
        row["words_per_s"] = round(words / row["seconds"], 1)
    result = {
        "schema": "spandep-throughput/1", "data": args.data, "model": model_dir, "model_type": model.name, "sentences": len(sentences),
        "words": words, "model_load_seconds": round(load_seconds, 1), "paths": rows,
        "machine": machine(),
        "torch": torch.__version__, "command": "python -m benchmarks.scripts.throughput " + " ".join(sys.argv[1:]),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
