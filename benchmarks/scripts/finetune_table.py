"""The table of treebanks fine-tuned apart from the pool (issue 46, deliverable 2): per treebank, the shipped
multilingual model parsing as that treebank against the pool model fine-tuned for it and cut to it (``spandep export
--treebank``), on the treebank's dev split from gold tokens (a dev-only treebank: the held-out part of its dev), as
markdown (``--doc FILE``: between ``<!-- finetune:begin -->`` and ``<!-- finetune:end -->`` of that file).

    python -m benchmarks.scripts.finetune_table --doc BENCHMARKS.md

Reads ``benchmarks/results/multilingual/finetune/<treebank>__dev__multilingual.json`` and
``<treebank>__dev__<treebank>.json`` (``benchmarks.suite.raw_text --split dev --mode gold``, the commands in the files):
official CoNLL 2018 F1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import REPO

RESULTS = Path(__file__).resolve().parents[1] / "results" / "multilingual" / "finetune"
BEGIN, END = "<!-- finetune:begin -->", "<!-- finetune:end -->"
METRICS = ("UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS")


def pairs(results: Path = RESULTS) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Each treebank with both dev results: (treebank, the multilingual model's, its own folder's), by name."""
    out = []
    for base in sorted(results.glob("*__dev__multilingual.json")):
        treebank = base.name.split("__")[0]
        own = results / f"{treebank}__dev__{treebank}.json"
        if own.is_file():
            out.append((treebank, json.loads(base.read_text(encoding="utf-8")), json.loads(own.read_text(encoding="utf-8"))))
    return out


def _f1(result: dict[str, Any], metric: str) -> float:
    return result["conll18"][metric]["f1"]


def _cell(before: dict[str, Any], after: dict[str, Any], metric: str) -> str:
    if not before["gold_lemmas"] and metric == "Lemmas":
        return "–"
    return f"{_f1(before, metric):.2f} → **{_f1(after, metric):.2f}**"


def render(results: Path = RESULTS) -> str:
    rows = [
        "| treebank | dev split (words) | trained on | epochs (best) | " + " | ".join(METRICS) + " | LAS gain | results |",
        "|---|---|---|---|" + "---|" * len(METRICS) + "---|---|",
    ]
    gains = []
    for treebank, base, own in pairs(results):
        split = "dev" if own["train_split"] == "train" else "held-out part of dev"
        words = own["conll18"]["Words"]["gold"]
        trained = own.get("trained") or {}
        gain = _f1(own, "LAS") - _f1(base, "LAS")
        gains.append(gain)
        folder = results.relative_to(REPO) if results.is_relative_to(REPO) else results
        source = f"`{folder}/{treebank}__dev__{{multilingual,{treebank}}}.json`"
        rows.append(
            f"| {treebank} | {split} ({words:,}) | {own['train_split']} | {trained.get('epochs', '–')} ({trained.get('best_epoch', '–')}) | "
            + " | ".join(_cell(base, own, m) for m in METRICS) + f" | {gain:+.2f} | {source} |"
        )
    mean = f"{sum(gains) / len(gains):+.2f}" if gains else "–"
    return "\n".join(rows) + f"\n\nMean dev LAS gain over the {len(gains)} treebanks: {mean}.\n"


if __name__ == "__main__":
    table_main(__doc__, render, BEGIN, END, "the fine-tune table")
