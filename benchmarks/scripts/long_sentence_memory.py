"""Peak resident memory and time of `spandep parse` on one sentence of each length, under an old revision of the code
and under this checkout, side by side (docs/design.md, "Long sentences").

Each run is a fresh process, `spandep parse SENTENCE.txt -f tokens --model MODEL` with one thread, on the first N
words of a treebank file's forms as one line; its peak RSS is the child's own (``os.wait4``), its output is checked to
be one tree over all N words. The old revision's `src` is exported with `git archive` (the repository is only read);
lengths over ``--old-max-words`` are not run under it (its memory grows with the square of the length: 20,000 words
would need about 13 GB on the default model).

    PYTHONPATH=src:. python -m benchmarks.scripts.long_sentence_memory --old 2a0d3a7 --lengths 100 1000 5000 20000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EWT_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "en_ewt" / "en_ewt-ud-dev.conllu"


def forms_of(conllu: Path) -> list[str]:
    """Every syntactic word's form of a CoNLL-U file, in order."""
    forms = []
    for line in conllu.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            forms.append(cols[1])
    return forms


def export_src(revision: str, into: Path) -> Path:
    """The ``src`` folder of ``revision`` written under ``into`` (``git archive``; the repository is only read)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def one_tree_over(path: Path, n: int, src: Path) -> bool:
    """Whether the CoNLL-U file ``path`` holds one sentence of ``n`` words forming one tree (read with ``src``)."""
    code = (
        "import sys; from spandep.data.conllu import read_conllu; from spandep.data.trees import is_valid_tree; "
        f"s = list(read_conllu({str(path)!r})); sys.exit(0 if len(s) == 1 and len(s[0]) == {n} and is_valid_tree(s[0].heads) else 1)"
    )
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(src)}).returncode == 0


def measure(src: Path, model: str, sentence: Path, n: int, timeout: float) -> str:
    """``"PEAK_MB SECONDS tree"`` of one `spandep parse` run under ``src`` (``timeout`` seconds at most)."""
    out = sentence.with_suffix(".conllu")
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "spandep.cli.main", "parse", str(sentence), "-f", "tokens", "--model", model, "-o", str(out), "--threads", "1"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:  # os.wait4 reaps the child and gives its own rusage (its peak RSS)
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            os.wait4(proc.pid, 0)
            return f"timeout after {timeout:.0f} s"
        time.sleep(0.2)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code:
        return f"failed (exit {code})"
    peak = usage.ru_maxrss / 1024  # ru_maxrss: kB on Linux
    return f"{peak:8.0f} MB {seconds:7.1f} s {'one tree' if one_tree_over(out, n, src) else 'NOT ONE TREE'}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="2a0d3a7", help="the revision to compare with (default: before the long-sentence path)")
    ap.add_argument("--model", default="en", help="a shipped model's name or a model folder")
    ap.add_argument("--lengths", type=int, nargs="+", default=[100, 1000, 5000, 20000])
    ap.add_argument("--old-max-words", type=int, default=5000, help="longer sentences are not run under --old")
    ap.add_argument("--words-from", type=Path, default=EWT_DEV, help="CoNLL-U file whose forms (repeated) make the sentences")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per run")
    args = ap.parse_args()
    forms = forms_of(args.words_from)
    with tempfile.TemporaryDirectory() as tmp:
        old_src, new_src = export_src(args.old, Path(tmp) / "old"), ROOT / "src"
        print(f"model {args.model}; words from {args.words_from.name}; peak RSS and wall time of spandep parse, one thread")
        print(f"{'words':>7}  {'old (' + args.old + ')':<38}  new (this checkout)")
        for n in args.lengths:
            sentence = Path(tmp) / f"s{n}.txt"
            sentence.write_text(" ".join(forms[i % len(forms)] for i in range(n)) + "\n", encoding="utf-8")
            old = measure(old_src, args.model, sentence, n, args.timeout) if n <= args.old_max_words else "not run (--old-max-words)"
            new = measure(new_src, args.model, sentence, n, args.timeout)
            print(f"{n:>7}  {old:<38}  {new}", flush=True)


if __name__ == "__main__":
    main()
