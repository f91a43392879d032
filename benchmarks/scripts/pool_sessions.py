"""Two runs of a model of several treebanks compared on dev, treebank by treebank: what decides whether a new pool
session replaces the shipped multilingual weights (issue 46).

    python -m benchmarks.scripts.pool_sessions benchmarks/results/multilingual/pool-e5-biaffine-lite3.train.log \
        benchmarks/results/multilingual/pool-e5-biaffine-pass5.train.log --folder multilingual \
        --out benchmarks/results/multilingual/pass5_against_lite3.json

Reads each ``train.log``'s best epoch (its last line marked ``*best*``): the per-treebank ``T:UAS``, ``T:LAS`` and
``T:LAS_nopunct`` the trainer wrote (each treebank's held-out dev sentences). Prints and writes the macro average
over all treebanks both logs score, and over those that ``--folder``'s catalogue lines serve (the treebanks another
folder ships are not parsed with these weights), with how many rose and fell, and every treebank's difference.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from benchmarks.suite.record import checkout, machine, portable_path, write_json
from spandep.storage.catalogue import read_catalogue

METRICS = ("UAS", "LAS", "LAS_nopunct")


def best_epoch(log: Path) -> dict[str, float]:
    """The figures of a train.log's best epoch (its last ``*best*`` line; its last epoch where none is marked)."""
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("epoch=")]
    if not lines:
        raise SystemExit(f"{log}: no epoch line (is it a spandep train.log?)")
    line = ([x for x in lines if x.rstrip().endswith("*best*")] or lines)[-1]
    return {key: float(value) for key, value in re.findall(r"(\S+)=([0-9.]+)", line)}


def compare(old: dict[str, float], new: dict[str, float], treebanks: list[str]) -> dict[str, dict[str, float | int]]:
    """Per metric: the macro averages of ``old`` and ``new`` over ``treebanks``, and how many rose and fell."""
    out: dict[str, dict[str, float | int]] = {}
    for metric in METRICS:
        pairs = [(old[f"{t}:{metric}"], new[f"{t}:{metric}"]) for t in treebanks]
        out[metric] = {
            "old": round(sum(a for a, _ in pairs) / len(pairs), 2), "new": round(sum(b for _, b in pairs) / len(pairs), 2),
            "rose": sum(b > a for a, b in pairs), "fell": sum(b < a for a, b in pairs),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="the shipped weights' train.log")
    ap.add_argument("new", type=Path, help="the candidate's train.log")
    ap.add_argument("--folder", default="multilingual", help="the model folder whose catalogue lines name the treebanks it serves")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    old, new = best_epoch(args.old), best_epoch(args.new)
    both = sorted({k.split(":")[0] for k in old if k.endswith(":LAS")} & {k.split(":")[0] for k in new if k.endswith(":LAS")})
    served = sorted({m.code for m in read_catalogue()[1].values() if m.folder.name == args.folder} & set(both))
    if not served:
        raise SystemExit(f"no treebank that both logs score and {args.folder} serves")
    groups = {"all": both, "served": served}
    report = {name: {"treebanks": len(tbs), **compare(old, new, tbs)} for name, tbs in groups.items()}
    for name, row in report.items():
        las = row["LAS"]
        print(f"{name} ({row['treebanks']} treebanks): macro LAS {las['old']:.2f} -> {las['new']:.2f}, {las['rose']} rose, {las['fell']} fell")
    if args.out:
        write_json(args.out, {
            "schema": "spandep-pool-sessions/1", "command": "python -m benchmarks.scripts.pool_sessions " + " ".join(sys.argv[1:]),
            "machine": machine(), **checkout(), "old": portable_path(args.old), "new": portable_path(args.new), "folder": args.folder,
            **report, "LAS_by_treebank": {t: round(new[f"{t}:LAS"] - old[f"{t}:LAS"], 2) for t in both},
        })


if __name__ == "__main__":
    main()
