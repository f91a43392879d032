"""Span parser vs Biaffine parse speed, measured in alternation, with the span parser's accuracy beside it.

The bar: the default span parser parses EWT test at least half as fast as our Biaffine parser with the same
encoder. On a shared 2-core machine a single timing drifts by ±10 % from minute to minute, so the two models are
timed in alternation (one full parse of the file each per round, after a warm-up of each, timed by
``spandep.pipeline.speed.measure_speed``) and the ratio is taken of the medians (the ratio of each round is recorded
too). Each span setting (``--ks``) is also parsed once more and scored against the file's gold trees.

    .venv/bin/python -m benchmarks.scripts.speed_ratio --baseline runs/default-biaffine \\
        --test ../shared/data/en_ewt/en_ewt-ud-test.conllu --ks 2 5 --rounds 5 \\
        --out benchmarks/results/speed/speed_ratio__en_ewt_test__default_model_span.json
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.record import git, write_json
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.evaluation.metrics import evaluate
from spandep.options import InferenceOptions
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.pipeline.speed import measure_speed

DEFAULT_MODEL = "src/spandep/resources/default_model"


def parse_seconds(model: Any, sentences: list[Sentence], options: InferenceOptions) -> float:
    """Wall-clock seconds of one full parse of ``sentences`` (trees built, nothing written)."""
    return measure_speed(model, sentences, runs=1, warmup=0, options=options)["runs_seconds"][0]


def accuracy(model: Any, sentences: list[Sentence], options: InferenceOptions) -> dict[str, float]:
    report = evaluate(sentences, list(parse_stream(model, sentences, options)))
    return {key: round(float(getattr(report, key)), 2) for key in ("uas", "las", "uas_no_punct", "las_no_punct")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="Biaffine model folder")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="span model folder (default: the shipped model)")
    ap.add_argument("--test", required=True, help="CoNLL-U file with gold trees")
    ap.add_argument("--ks", type=int, nargs="+", default=None, help="span settings to time (default: the model's k)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    baseline, span = load_model(args.baseline), load_model(args.model)
    sentences = list(read_conllu(args.test))
    words = sum(len(s) for s in sentences)
    saved_k = int(span.settings().k or 0)
    ks = args.ks or [saved_k]
    systems: list[tuple[str, Any, InferenceOptions]] = [("biaffine", baseline, InferenceOptions())]
    systems += [(f"span k={k}" + (" (saved)" if k == saved_k else ""), span, InferenceOptions(k=k)) for k in ks]
    for _, model, options in systems:  # warm-up
        parse_seconds(model, sentences, options)
    seconds: dict[str, list[float]] = {name: [] for name, _, _ in systems}
    for r in range(args.rounds):
        for name, model, options in systems:
            seconds[name].append(parse_seconds(model, sentences, options))
        print(f"round {r + 1}: " + ", ".join(f"{n} {len(sentences) / s[-1]:.1f} sent/s" for n, s in seconds.items()), file=sys.stderr)
    base = statistics.median(seconds["biaffine"])
    rows = []
    for name, model, options in systems:
        med = statistics.median(seconds[name])
        rows.append({
            "system": name,
            "seconds": seconds[name],
            "median_seconds": round(med, 3),
            "sent_per_s": round(len(sentences) / med, 1),
            "words_per_s": round(words / med, 1),
            "vs_biaffine": round(base / med, 3),
            "vs_biaffine_by_round": [round(b / t, 3) for b, t in zip(seconds["biaffine"], seconds[name])],
            "inference": model.settings(options).given(),
            "accuracy": accuracy(model, sentences, options),
        })
    result = {
        "schema": "spandep-speed-ratio/1", "test": args.test, "sentences": len(sentences), "words": words, "baseline": args.baseline,
        "model": args.model, "rounds": args.rounds, "threads": args.threads, "torch": torch.__version__,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "git_commit": git("rev-parse", "--short", "HEAD"),
        "command": "python -m benchmarks.scripts.speed_ratio " + " ".join(sys.argv[1:]), "systems": rows,
    }
    for row in rows:
        print(f"{row['system']:>18}: {row['sent_per_s']:7.1f} sent/s ({row['vs_biaffine']:.0%} of Biaffine)  "
              f"UAS/LAS no punct {row['accuracy']['uas_no_punct']}/{row['accuracy']['las_no_punct']}")
    if args.out:
        write_json(Path(args.out), result, indent=1)


if __name__ == "__main__":
    main()
