"""Choose on dev the precision a tokenizer's encoder features run in: float32 against bfloat16, side by side.

    python -m benchmarks.scripts.tokenizer_precision zh_gsd src/spandep/resources/zh_gsd_v1/tokenizer [--write]

The tokenizer (one with encoder features: ``spandep train-tokenizer --encoder``) is loaded twice, its encoder layers
in float32 and in bfloat16 (``load_tokenizer(..., precision=...)``; bfloat16 only where the processor computes it
natively, else the run stops: there is nothing to choose). Each tokenizes the treebank's dev text, in alternation for
``--rounds`` rounds (process CPU seconds, one torch thread; the median and the per-round ratio), and is scored once by
the official CoNLL 2018 scorer (``tokenizer_scores.score_split``). bfloat16 is chosen where its dev Tokens, Words and
Sentences F1 are each within ``--within`` (0.1, the rule the parsers' ``precision`` follows) of float32's; ``--write``
then saves ``encoder_precision`` in the tokenizer's ``config.json`` (atomically; removed when float32 is chosen).
Result: ``benchmarks/results/tokenizer/precision__<treebank>.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks.scripts.tokenizer_scores import DATA, METRICS, RESULTS, TREEBANKS, score_split, split_file
from benchmarks.suite.record import checkout, machine, portable_path, write_json
from spandep.encoders.bases import resolve_model_path
from spandep.hardware import native_bfloat16
from spandep.tokenization.corpus import raw_text, read_paragraphs
from spandep.tokenization.encoder_features import PRECISIONS
from spandep.tokenization.trained import load_tokenizer


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("treebank", choices=sorted(TREEBANKS))
    ap.add_argument("tokenizer", type=Path, help="a tokenizer folder with encoder features")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--within", type=float, default=0.1, help="F1 points bfloat16 may lose on dev in each metric")
    ap.add_argument("--write", action="store_true", help="save the choice in the tokenizer's config.json")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if not native_bfloat16(torch.device("cpu")):
        raise SystemExit("this processor has no native bfloat16 (AVX512-BF16 or AMX-BF16): nothing to choose")
    tokenizers = {p: load_tokenizer(args.tokenizer, resolve_model_path, precision=p) for p in PRECISIONS}
    if any(t.pieces is None for t in tokenizers.values()):
        raise SystemExit(f"{args.tokenizer}: the tokenizer has no encoder features")
    gold = split_file(DATA, args.treebank, "dev")
    text = raw_text(read_paragraphs(gold))
    seconds: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for tokenizer in tokenizers.values():
        tokenizer.tokenize(text[:2000])  # warm-up
    for _ in range(args.rounds):
        for p, tokenizer in tokenizers.items():
            started = time.process_time()
            tokenizer.tokenize(text)
            seconds[p].append(time.process_time() - started)
    scores = {p: score_split(t, gold) for p, t in tokenizers.items()}
    close = all(scores["bfloat16"][m]["f1"] >= scores["float32"][m]["f1"] - args.within for m in METRICS)
    chosen = "bfloat16" if close else "float32"
    ratios = [f / b for f, b in zip(seconds["float32"], seconds["bfloat16"])]
    result: dict[str, Any] = {
        "schema": "spandep-tokenizer-precision/1", "treebank": args.treebank, "tokenizer": portable_path(args.tokenizer),
        "split": "dev", "within": args.within, "chosen": chosen, "written": args.write,
        "variants": {p: {**{m: scores[p][m] for m in METRICS}, "cpu_seconds": [round(s, 3) for s in seconds[p]],
                         "median_cpu_seconds": round(statistics.median(seconds[p]), 3)} for p in PRECISIONS},
        "speed_ratio_bfloat16": {"median": round(statistics.median(ratios), 3), "rounds": [round(r, 3) for r in ratios]},
        "scorer": "udtools.udeval (CoNLL 2018)", "command": "python -m benchmarks.scripts.tokenizer_precision " + " ".join(argv or sys.argv[1:]),
        **checkout(), "machine": machine(), "date": time.strftime("%Y-%m-%d"), "torch_threads": 1,
    }
    for p in PRECISIONS:
        print(p, " ".join(f"{m} {scores[p][m]['f1']:.2f}" for m in METRICS), f"median {result['variants'][p]['median_cpu_seconds']} CPU s")
    print(f"bfloat16 {result['speed_ratio_bfloat16']['median']}x the speed; chosen: {chosen}")
    if args.write:
        path = args.tokenizer / "config.json"
        config = json.loads(path.read_text(encoding="utf-8"))
        config.pop("encoder_precision", None)
        write_json(path, {**config, **({"encoder_precision": chosen} if chosen != "float32" else {})}, indent=1)
    out = args.out or RESULTS / f"precision__{args.treebank}.json"
    write_json(out, result)
    print("wrote", out)


if __name__ == "__main__":
    main()
