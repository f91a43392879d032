"""Parse every CoNLL-U file under ../shared/data with ``spandep parse`` and check that nothing is lost or altered:
per file, the same number of sentences, every comment, extra line and column except HEAD and DEPREL
(and UPOS where it was ``_``) unchanged, and each output HEAD column a tree. Prints one JSON report.

    .venv/bin/python benchmarks/scripts/robustness/parse_all_data.py --threads 2 --out benchmarks/results/robustness/all_data.json

The default model is English; other languages are parsed with it too (the check is about keeping data intact,
not about accuracy).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stream_100k import compare

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--model", help="model folder (default: the shipped model)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="also write the JSON report here")
    args = ap.parse_args()
    files = sorted(Path(args.data).resolve().rglob("*.conllu"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            out = Path(tmp) / "out.conllu"
            cmd = [sys.executable, "-m", "spandep.cli.main", "parse", str(path), "-o", str(out), "--threads", str(args.threads)]
            if args.model:
                cmd += ["--model", args.model]
            started = time.monotonic()
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            row = {"file": str(path.relative_to(Path(args.data).resolve())), "exit": proc.returncode,
                   "seconds": round(time.monotonic() - started, 1)}
            if proc.returncode == 0:
                row.update(compare(path, out))
            else:
                row["error"] = proc.stderr.strip()[-500:]
            row["ok"] = proc.returncode == 0 and row.get("first_difference") is None
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    report = {
        "schema": "spandep-parse-all-data/1",
        "command": " ".join(["python", *sys.argv]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "files": len(rows),
        "sentences": sum(r.get("sentences", 0) for r in rows),
        "files_not_ok": [r["file"] for r in rows if not r["ok"]],
        "seconds": round(sum(r["seconds"] for r in rows), 1),
        "per_file": rows,
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    sys.exit(0 if not report["files_not_ok"] else 1)


if __name__ == "__main__":
    main()
