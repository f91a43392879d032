"""Parse and score one test file with one model, in a process of its own so that its peak RSS is the parse's.

The first parse gives the trees that are scored (and warms up); the second is timed with
``spandep.pipeline.speed.measure_speed`` (model load and file reading excluded). Prints one JSON object:
the evaluation report, the speed, the span parser's counters and the process's peak RSS (model load included).
benchmarks.suite.run calls this once per system and dataset.

    python -m benchmarks.suite.measure --model runs/ewt-biaffine-minilm/model --test ../shared/data/en_ewt/en_ewt-ud-test.conllu
"""

from __future__ import annotations

import argparse
import json
import resource
from dataclasses import asdict
from itertools import islice

import torch

from benchmarks.suite.record import portable_path
from spandep.data.conllu import read_conllu
from spandep.evaluation.metrics import evaluate
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.options import DEFAULT_BATCH_TOKENS, InferenceOptions, InferenceStats
from spandep.pipeline.speed import measure_speed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--decoder", help="mst or projective (default: the model's)")
    ap.add_argument("--limit", type=int, help="first N sentences only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-tokens", type=int, default=DEFAULT_BATCH_TOKENS)
    ap.add_argument("--device", default="cpu", help="cpu or cuda: where the model parses (and is timed)")
    ap.add_argument("--treebank", help="a model of several treebanks: the one to parse as")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model(args.model, device=args.device)
    gold = list(islice(read_conllu(args.test), args.limit))
    stats = InferenceStats()
    options = InferenceOptions(decoder=args.decoder, batch_tokens=args.batch_tokens, treebank=args.treebank)
    pred = list(parse_stream(model, gold, options, stats=stats))
    report = evaluate(gold, pred, gold_source=portable_path(args.test), pred_source=f"{portable_path(args.model)} (in memory)")
    speed = measure_speed(model, gold, runs=1, warmup=0, options=options)
    print(json.dumps({
        "evaluation": report.to_dict(),
        "speed": speed,
        "span_stats": asdict(stats),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),  # Linux: ru_maxrss in KiB
    }))


if __name__ == "__main__":
    main()
