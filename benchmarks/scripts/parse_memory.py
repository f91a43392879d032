"""Memory and time of loading a model and parsing a whole CoNLL-U file, through ``spandep.load`` (the Python API, its
default chunk of 2,000 sentences) and through ``spandep parse`` (the command, 512 sentences a chunk, written to a
file), under an old revision of the code and under this checkout, in alternation.

Each run is a fresh process (one torch thread). The API's: resident memory after loading, the peak while loading,
the peak while parsing (the kernel's high-water mark reset after loading: ``/proc/self/clear_refs``), the parse's
process CPU seconds, and two hashes of the output: every word's head, label, UPOS, XPOS, features and lemma
("trees"), and the same with the head's and label's probabilities ("with probabilities"). The command's: the
process's peak resident memory and CPU seconds (``os.wait4``, loading included) and a hash of the file it wrote.
The old revision's ``src`` is exported with ``git archive``. Medians per revision and the median of the per-round CPU
ratios go to ``--out``:

    python -m benchmarks.scripts.parse_memory en-accurate ../shared/data/en_ewt/en_ewt-ud-test.conllu --old c92a7c6 \\
        --out benchmarks/results/speed/parse_memory__en-accurate.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.scripts.long_sentence_memory import ROOT, export_src
from benchmarks.suite.record import checkout, machine, portable_path, write_json

CHILD = r"""
import hashlib, json, sys, time
import spandep

def gb(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key)) / 1e6

nlp = spandep.load(sys.argv[1], threads=1)
loaded, load_peak = gb("VmRSS"), gb("VmHWM")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the high-water mark starts again from here
start = time.process_time()
doc = nlp.parse_file(sys.argv[2])
seconds = time.process_time() - start
words = [w for s in doc for w in s]
trees = "\n".join(f"{w.head} {w.deprel} {w.upos} {w.xpos} {w.feats} {w.lemma}" for w in words)
probs = "\n".join(f"{w.head_prob!r} {w.label_prob!r}" for w in words)
digest = lambda text: hashlib.sha256(text.encode()).hexdigest()[:16]
print(json.dumps({"loaded_gb": round(loaded, 3), "load_peak_gb": round(load_peak, 3), "parse_peak_gb": round(gb("VmHWM"), 3),
                  "cpu_seconds": round(seconds, 2), "words": len(words), "trees": digest(trees), "with_probabilities": digest(trees + probs)}))
"""
KEYS = ("loaded_gb", "load_peak_gb", "parse_peak_gb", "cpu_seconds", "cli_peak_gb", "cli_cpu_seconds")


def run(src: Path, model: str, path: Path, tmp: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", CHILD, model, str(path)], check=True, capture_output=True, text=True, env=env)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    out = tmp / "parsed.conllu"
    cmd = [sys.executable, "-m", "spandep.cli.main", "parse", str(path), "--model", model, "-o", str(out), "--threads", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage: its peak RSS (kB) and CPU time
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"spandep parse failed under {src}")
    found.update(cli_peak_gb=round(usage.ru_maxrss / 1e6, 3), cli_cpu_seconds=round(usage.ru_utime + usage.ru_stime, 2),
                 cli_output=hashlib.sha256(out.read_bytes()).hexdigest()[:16])
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a shipped model's name or a folder")
    ap.add_argument("input", type=Path, help="a CoNLL-U file, parsed whole from its tokens")
    ap.add_argument("--old", required=True, help="the revision to compare with")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"old": export_src(args.old, Path(tmp) / "old"), "new": ROOT / "src"}
        for k in range(args.rounds):
            pair = {name: run(src, args.model, args.input.resolve(), Path(tmp)) for name, src in sources.items()}
            print(k + 1, json.dumps(pair), flush=True)
            rounds.append(pair)
    result = {
        "schema": "spandep-parse-memory/1", "model": args.model, "input": portable_path(args.input), "old": args.old,
        "words": rounds[0]["new"]["words"], "rounds": rounds,
        "median": {name: {key: statistics.median(r[name][key] for r in rounds) for key in KEYS} for name in ("old", "new")},
        "speedup_cpu": round(statistics.median(r["old"]["cpu_seconds"] / r["new"]["cpu_seconds"] for r in rounds), 3),
        "same_trees": len({r[name]["trees"] for r in rounds for name in r}) == 1,
        "same_with_probabilities": len({r[name]["with_probabilities"] for r in rounds for name in r}) == 1,
        "same_cli_output": len({r[name]["cli_output"] for r in rounds for name in r}) == 1,
        "command": "python -m benchmarks.scripts.parse_memory " + " ".join(sys.argv[1:]), "machine": machine(), **checkout(),
    }
    write_json(args.out, result)
    print(json.dumps(result["median"]), "speed-up", result["speedup_cpu"], "same trees", result["same_trees"])


if __name__ == "__main__":
    main()
