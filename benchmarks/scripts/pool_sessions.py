"""Two runs of a model of several treebanks compared on dev, treebank by treebank: what decides whether a new pool
session replaces the shipped multilingual weights (issue 46).

    python -m benchmarks.scripts.pool_sessions benchmarks/results/multilingual/pool-e5-biaffine-lite3.train.log \
        benchmarks/results/multilingual/pool-e5-biaffine-pass5.train.log --folder multilingual \
        --out benchmarks/results/multilingual/pass5_against_lite3.json

Each run is a ``train.log``, read at its best epoch (its last line marked ``*best*``): the per-treebank ``T:UAS``,
``T:LAS`` and ``T:LAS_nopunct`` the trainer wrote (each treebank's first held-out dev sentences); or a folder of
``score_pool.py --split dev`` results (``T__gold__dev.json``: the whole dev split, a dev-only language's held-out
part, official CoNLL 2018 F1 of every head, which the trainer's log lacks):

    python -m benchmarks.scripts.score_pool FOLDER --split dev --mode gold --rounds 0 --results runs/dev/NAME

With ``--split test`` a folder is read as ``score_pool.py``'s test results from gold tokens (``T__gold.json``: the
shipped folder's in ``benchmarks/results/languages``, the folder shipped before it in a copy of an older commit's),
with ``--split test-raw`` as those from raw text (``T__raw.json``), to say what a new session did to the test figures
once it shipped (never to choose it).

Prints and writes the macro average of every metric both runs have, over all treebanks both score and over those that
``--folder``'s catalogue lines serve (the treebanks another folder ships are not parsed with these weights), with how
many rose and fell, and every treebank's difference in LAS (and in UFeats and MLAS where scored).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from benchmarks.suite.record import checkout, machine, portable_path, write_json
from spandep.storage.catalogue import read_catalogue

METRICS = ("UAS", "LAS", "LAS_nopunct", "UPOS", "UFeats", "Lemmas", "MLAS", "BLEX")
BY_TREEBANK = ("LAS", "UFeats", "MLAS")  # the metrics whose every treebank's difference the report keeps


SPLITS = {  # a folder's score_pool.py result files per split: their name's end, and the flags that write them
    "dev": ("__gold__dev.json", "--split dev --mode gold"),
    "test": ("__gold.json", "--mode gold"),
    "test-raw": ("__raw.json", "--mode raw"),
}


def figures(run: Path, split: str = "dev") -> dict[str, float]:
    """``T:METRIC`` of a run: a train.log's best epoch, or a folder of score_pool results' official F1 on ``split``."""
    if not run.is_dir():
        return best_epoch(run)
    suffix, flags = SPLITS[split]
    files = sorted(run.glob("*" + suffix))
    if not files:
        raise SystemExit(f"{run}: no T{suffix} (score_pool.py {flags} --results {run})")
    out = {}
    for path in files:
        official = json.loads(path.read_text(encoding="utf-8"))["conll18"]
        treebank = path.name[: -len(suffix)]
        out.update({f"{treebank}:{m}": official[m]["f1"] for m in METRICS if m in official})
    return out


def best_epoch(log: Path) -> dict[str, float]:
    """The figures of a train.log's best epoch (its last ``*best*`` line; its last epoch where none is marked)."""
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("epoch=")]
    if not lines:
        raise SystemExit(f"{log}: no epoch line (is it a spandep train.log?)")
    line = ([x for x in lines if x.rstrip().endswith("*best*")] or lines)[-1]
    return {key: float(value) for key, value in re.findall(r"(\S+)=([0-9.]+)", line)}


def shared(old: dict[str, float], new: dict[str, float], treebanks: list[str], metrics=METRICS) -> list[str]:
    """The ``metrics`` both runs give for every one of ``treebanks`` (a train.log has trees only)."""
    return [m for m in metrics if all(f"{t}:{m}" in old and f"{t}:{m}" in new for t in treebanks)]


def compare(old: dict[str, float], new: dict[str, float], treebanks: list[str]) -> dict[str, dict[str, float | int]]:
    """Per metric: the macro averages of ``old`` and ``new`` over ``treebanks``, and how many rose and fell."""
    out: dict[str, dict[str, float | int]] = {}
    for metric in shared(old, new, treebanks):
        pairs = [(old[f"{t}:{metric}"], new[f"{t}:{metric}"]) for t in treebanks]
        out[metric] = {
            "old": round(sum(a for a, _ in pairs) / len(pairs), 2), "new": round(sum(b for _, b in pairs) / len(pairs), 2),
            "rose": sum(b > a for a, b in pairs), "fell": sum(b < a for a, b in pairs),
        }
    return out


def with_las(figs: dict[str, float]) -> set[str]:
    """The treebanks whose LAS ``figs`` has."""
    return {k.split(":")[0] for k in figs if k.endswith(":LAS")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="the shipped weights' train.log, or a folder of their score_pool results (--split)")
    ap.add_argument("new", type=Path, help="the candidate's, alike")
    ap.add_argument("--folder", default="multilingual", help="the model folder whose catalogue lines name the treebanks it serves")
    ap.add_argument("--split", default="dev", choices=sorted(SPLITS), help="the split of a folder's score_pool results (test-raw: test from raw text)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    old, new = figures(args.old, args.split), figures(args.new, args.split)
    both = sorted(with_las(old) & with_las(new))
    served = sorted({m.code for m in read_catalogue()[1].values() if m.folder.name == args.folder} & set(both))
    if not served:
        raise SystemExit(f"no treebank that both logs score and {args.folder} serves")
    groups = {"all": both, "served": served}
    report = {name: {"treebanks": len(tbs), **compare(old, new, tbs)} for name, tbs in groups.items()}
    for name, row in report.items():
        print(f"{name} ({row['treebanks']} treebanks), macro: " + "; ".join(
            f"{m} {row[m]['old']:.2f} -> {row[m]['new']:.2f} ({row[m]['rose']} rose, {row[m]['fell']} fell)" for m in METRICS if m in row))
    if args.out:
        write_json(args.out, {
            "schema": "spandep-pool-sessions/1", "command": "python -m benchmarks.scripts.pool_sessions " + " ".join(sys.argv[1:]),
            "machine": machine(), **checkout(), "old": portable_path(args.old), "new": portable_path(args.new), "folder": args.folder,
            "split": args.split,
            **report, **{f"{m}_by_treebank": {t: round(new[f"{t}:{m}"] - old[f"{t}:{m}"], 2) for t in both}
                         for m in shared(old, new, both, BY_TREEBANK)},
        })


if __name__ == "__main__":
    main()
