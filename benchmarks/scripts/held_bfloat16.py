"""A model that parses in bfloat16, with its encoder held in bfloat16 (``spandep.storage.precision``) and without
(the float32 weights under autocast, as before), side by side in one run (issue 48).

Each round runs both, one after the other, each in a fresh process that loads the model with ``spandep.load`` (one
torch thread), parses the gold tokens of INPUT's first ``--limit`` sentences and reports its resident memory after
loading, its peak resident memory (``VmHWM``), the parse's process CPU seconds and a hash of every word's head,
label, UPOS, XPOS, features and lemma with the head's and label's probabilities (the parses must be the same). The
medians per variant and the median of the per-round CPU ratios go to ``--out``:

    python -m benchmarks.scripts.held_bfloat16 en-accurate ../shared/data/en_ewt/en_ewt-ud-dev.conllu --limit 400 \\
        --out benchmarks/results/speed/held_bfloat16__en-accurate.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.suite.record import checkout, machine, portable_path, write_json

CHILD = r"""
import hashlib, json, sys, time
import torch
import spandep
from spandep.data.conllu import read_conllu
from spandep.storage import precision

def status(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key)) / 1e6

model, path, limit, held = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "held"
if not held:
    precision.hold_bfloat16 = lambda model: False  # the float32 weights kept, as before
nlp = spandep.load(model, threads=1)
tokens = [s.forms for s in read_conllu(path, heads=False)][:limit]
loaded = status("VmRSS")
start = time.process_time()
doc = nlp.parse_tokens(tokens)
seconds = time.process_time() - start
out = "\n".join(f"{w.head} {w.deprel} {w.upos} {w.xpos} {w.feats} {w.lemma} {w.head_prob!r} {w.label_prob!r}" for s in doc for w in s)
print(json.dumps({"held": nlp.model.encoder.held_bfloat16, "precision": nlp.model.settings(nlp.options).precision,
                  "loaded_gb": round(loaded, 3), "peak_gb": round(status("VmHWM"), 3), "cpu_seconds": round(seconds, 2),
                  "words": sum(len(t) for t in tokens), "parses": hashlib.sha256(out.encode()).hexdigest()[:16]}))
"""


def run(model: str, path: Path, limit: int, variant: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, model, str(path), str(limit), variant], check=True,
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a shipped model's name or a folder")
    ap.add_argument("input", type=Path, help="a CoNLL-U file whose tokens are parsed")
    ap.add_argument("--limit", type=int, default=400, help="its first sentences only")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rounds = []
    for k in range(args.rounds):
        pair = {variant: run(args.model, args.input, args.limit, variant) for variant in ("float32-weights", "held")}
        print(k + 1, json.dumps(pair), flush=True)
        rounds.append(pair)
    same = len({r[v]["parses"] for r in rounds for v in r}) == 1
    summary = {v: {key: statistics.median(r[v][key] for r in rounds) for key in ("loaded_gb", "peak_gb", "cpu_seconds")}
               for v in ("float32-weights", "held")}
    ratio = statistics.median(r["float32-weights"]["cpu_seconds"] / r["held"]["cpu_seconds"] for r in rounds)
    result = {
        "schema": "spandep-held-bfloat16/1", "model": args.model, "input": portable_path(args.input), "limit": args.limit,
        "words": rounds[0]["held"]["words"], "rounds": rounds, "median": summary, "speedup_cpu": round(ratio, 3),
        "same_parses": same, "command": "python -m benchmarks.scripts.held_bfloat16 " + " ".join(sys.argv[1:]),
        "machine": machine(), **checkout(),
    }
    write_json(args.out, result)
    print(json.dumps({"median": summary, "speedup_cpu": result["speedup_cpu"], "same_parses": same}))


if __name__ == "__main__":
    main()
