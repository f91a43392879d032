"""Parse a 100,000-sentence file with ``spandep parse`` and check that it streams: peak RSS stays bounded and
the output has exactly the input's sentences, tokens and columns, in order.

Builds the input by repeating the sentences of EWT train (../shared/data/en_ewt; read, never copied into the
repository) until ``--sentences`` are written, each block unchanged (comments, multiword tokens and empty nodes
included). Runs ``spandep parse`` as a child process, samples its RSS every ``--sample`` seconds and takes its
peak from the kernel (``ru_maxrss`` of the child; with ``--workers`` the largest process, not their sum). Then reads input and output side by side and compares every sentence:
comments, extra lines and all columns but HEAD and DEPREL equal (UPOS may only fill a ``_``), HEAD a tree. Prints one JSON report.

    .venv/bin/python benchmarks/scripts/robustness/stream_100k.py --sentences 100000 --threads 2
    .venv/bin/python benchmarks/scripts/robustness/stream_100k.py --sentences 2000 --model runs/ewt-biaffine-minilm/model

The input and output go to a temporary folder (kept with ``--work DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from itertools import zip_longest
from pathlib import Path

from spandep.data.conllu import read_conllu
from spandep.data.trees import is_valid_tree

EWT_TRAIN = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "en_ewt" / "en_ewt-ud-train.conllu"


def build_input(source: Path, target: Path, sentences: int) -> int:
    """Write ``sentences`` blocks of ``source``, cycling through it; returns the number of words written."""
    blocks, block = [], []
    for line in source.read_text(encoding="utf-8").splitlines():
        if line:
            block.append(line)
        elif block:
            blocks.append("\n".join(block) + "\n\n")
            block = []
    if block:
        blocks.append("\n".join(block) + "\n\n")
    words = [sum(1 for line in b.splitlines() if line.split("\t", 1)[0].isdigit()) for b in blocks]
    total = 0
    with open(target, "w", encoding="utf-8", newline="") as fh:
        for i in range(sentences):
            fh.write(blocks[i % len(blocks)])
            total += words[i % len(blocks)]
    return total


def rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return None


def compare(inp: Path, out: Path) -> dict:
    """Sentences read, and the first difference between input and output (None if they agree)."""
    n = 0
    for a, b in zip_longest(read_conllu(inp), read_conllu(out)):
        n += 1
        if a is None or b is None:
            return {"sentences": n - 1, "first_difference": f"sentence {n}: {'input' if a is None else 'output'} ended first"}
        kept = [(w.id, w.form, w.lemma, w.xpos, w.feats, w.deps, w.misc) for w in a.words]
        if (a.comments, a.extra_lines) != (b.comments, b.extra_lines) or kept != [
            (w.id, w.form, w.lemma, w.xpos, w.feats, w.deps, w.misc) for w in b.words
        ] or any(w.upos not in ("_", v.upos) for w, v in zip(a.words, b.words)):  # UPOS may only fill a "_"
            return {"sentences": n, "first_difference": f"sentence {n} (input line {a.line}) differs"}
        if not is_valid_tree(b.heads):
            return {"sentences": n, "first_difference": f"sentence {n} (output line {b.line}) is not a tree"}
    return {"sentences": n, "first_difference": None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--model", help="model folder (default: the shipped model)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch-tokens", type=int, default=4000)
    ap.add_argument("--source", default=str(EWT_TRAIN), help="CoNLL-U file whose sentences are repeated")
    ap.add_argument("--sample", type=float, default=1.0, help="seconds between RSS samples")
    ap.add_argument("--work", help="folder for input and output (default: a temporary one, removed)")
    ap.add_argument("--out", help="also write the JSON report here")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        inp, out = work / "stream_in.conllu", work / "stream_out.conllu"
        words = build_input(Path(args.source), inp, args.sentences)
        cmd = [sys.executable, "-m", "spandep.cli.main", "parse", str(inp), "-o", str(out), "--threads", str(args.threads),
               "--workers", str(args.workers), "--batch-tokens", str(args.batch_tokens)]
        if args.model:
            cmd += ["--model", args.model]
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        samples = []
        while proc.poll() is None:
            rss = rss_kb(proc.pid)
            if rss is not None:
                samples.append((round(time.monotonic() - started, 1), rss))
            time.sleep(args.sample)
        seconds = time.monotonic() - started
        stderr = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0:
            sys.exit(f"spandep parse failed (exit {proc.returncode}): {stderr.strip()[-2000:]}")
        # RSS over the run at its 10/25/50/75/100 % marks: flat after the model is loaded if parsing streams
        marks = {f"{p}%": samples[min(len(samples) - 1, len(samples) * p // 100)][1] // 1024 for p in (10, 25, 50, 75, 100)} if samples else {}
        report = {
            "schema": "spandep-stream-100k/1",
            "command": "spandep " + " ".join(cmd[3:]),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "input_sentences": args.sentences,
            "input_words": words,
            "input_mb": round(inp.stat().st_size / 2**20, 1),
            "seconds": round(seconds, 1),
            "sentences_per_s": round(args.sentences / seconds, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),  # kernel's, the parser's
            "rss_mb_over_time": marks,
            "rss_samples": len(samples),
            **compare(inp, out),
        }
    report["ok"] = report["sentences"] == args.sentences and report["first_difference"] is None
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    sys.exit(0 if report["ok"] else 1)


if __name__ == "__main__":
    main()
