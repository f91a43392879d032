"""The span parser against the Biaffine parser per treebank, each pair with one encoder, recipe and training budget.

    .venv/bin/python -m benchmarks.scripts.parsers_table                  # print the table
    .venv/bin/python -m benchmarks.scripts.parsers_table --doc BENCHMARKS.md

One row per treebank and split (dev, test) with gold tokens (every column but FORM blanked), then test from raw text
(each model's own tokenizer, aligned by the official scorer): UAS and LAS by the official CoNLL 2018 definitions
(all words, universal labels) and our own LAS without punctuation (full labels; gold tokens only), for each parser,
and Δ LAS (span − Biaffine, official). Rows come from ``benchmarks.suite.raw_text`` results (a missing file leaves
its cells "–"; a pair with neither file is left out):

- each treebank of the suite but EWT: the systems ``<treebank>-span`` and ``<treebank>-biaffine``
  (``configs/multilingual/<treebank>-<parser>.toml``); dev in ``results/multilingual/<treebank>__<system>.json``
  (``benchmarks/scripts/recipe_step.sh``), test in ``results/raw/<treebank>__<system>__gold.json`` and, from raw
  text, ``results/raw/<treebank>__<system>.json``; a span model shipped from a later recipe step has that step's dev
  file (:data:`DEV_STEP`);
- EWT: :data:`ENGLISH` (all-mpnet-base-v2 with LoRA), dev in ``results/raw/en_ewt_dev__<system>__gold.json``.

The count under the table is over the gold-token test rows of the treebanks but English (issue 25's bar). Δ LAS's 95 %
interval on those rows is the paired bootstrap over the test sentences (``benchmarks/scripts/paired_bootstrap.py``,
``results/significance/<treebank>__test.json``; "–": not run): an interval that holds 0 is a difference the choice of
test sentences could give.

``--doc`` replaces the part of that file between ``<!-- parsers:begin -->`` and ``<!-- parsers:end -->``.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import DATASETS, REPO

BEGIN, END = "<!-- parsers:begin -->", "<!-- parsers:end -->"
PARSERS = ("span", "biaffine")
SPLITS = ("dev", "test", "test, raw text")
ENGLISH = {"span": "accurate", "biaffine": "accurate-biaffine"}  # the en-accurate model and its Biaffine twin
DEV_STEP = {"zh_gsd_v1-span": "zh_gsd_v1-12ep"}  # the shipped zh model is the 12-epoch step's (its twin: 12 epochs too)
HEADER = (
    "| treebank | split | UAS span | UAS Biaffine | LAS span | LAS Biaffine | Δ LAS | Δ LAS, 95 % interval | LAS no-punct span | "
    "LAS no-punct Biaffine | sources |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def interval(treebank: str, split: str, results: Path) -> str:
    """The paired bootstrap's 95 % interval of Δ LAS on a gold-token test row
    (``results/significance/<treebank>__test.json``), else "–"."""
    path = results / "significance" / f"{treebank}__test.json"
    if split != "test" or not path.is_file():
        return "–"
    low, high = json.loads(path.read_text(encoding="utf-8"))["ci95"]
    return f"{low:+.2f} to {high:+.2f}"


def result_path(treebank: str, parser: str, split: str, results: Path) -> Path:
    """Where the gold-token result of ``parser`` on ``treebank``'s ``split`` is written (the module docstring)."""
    mode = "" if split == "test, raw text" else "__gold"
    if treebank == "en_ewt":
        prefix = "en_ewt_dev" if split == "dev" else "en_ewt"
        return results / "raw" / f"{prefix}__{ENGLISH[parser]}{mode}.json"
    system = f"{treebank}-{parser}"
    return results / "multilingual" / f"{treebank}__{DEV_STEP.get(system, system)}.json" if split == "dev" else results / "raw" / f"{treebank}__{system}{mode}.json"


def scores(path: Path) -> dict[str, float | None] | None:
    """UAS, LAS (official F1) and our LAS without punctuation from a result file (``None``: no file)."""
    if not path.is_file():
        return None
    result = json.loads(path.read_text(encoding="utf-8"))
    official = result["conll18"]
    return {"UAS": official["UAS"]["f1"], "LAS": official["LAS"]["f1"], "LAS_nopunct": result.get("ours", {}).get("LAS_nopunct")}


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def render(results: Path | None = None) -> str:
    """The table, treebanks in the suite's order, then a line counting the test rows where the span parser leads."""
    results = results or REPO / "benchmarks" / "results"
    lines, ahead, measured = [], 0, 0
    for treebank in DATASETS:
        for split in SPLITS:
            paths = {p: result_path(treebank, p, split, results) for p in PARSERS}
            found = {p: scores(path) for p, path in paths.items()}
            if all(s is None for s in found.values()):
                continue
            span, biaffine = found["span"] or {}, found["biaffine"] or {}
            delta = None if span.get("LAS") is None or biaffine.get("LAS") is None else span["LAS"] - biaffine["LAS"]
            if split == "test" and delta is not None and treebank != "en_ewt":
                measured, ahead = measured + 1, ahead + (delta >= 0)
            sources = ", ".join(f"`{path.relative_to(REPO)}`" for p, path in paths.items() if found[p] is not None)
            cells = [treebank, split, *(_cell(s.get(m)) for m in ("UAS", "LAS", "LAS_nopunct") for s in (span, biaffine))]
            cells[6:6] = ["–" if delta is None else f"{delta:+.2f}", interval(treebank, split, results)]
            lines.append("| " + " | ".join(cells + [sources]) + " |")
    return HEADER + "\n".join(lines) + (
        f"\n\nThe span parser ≥ Biaffine (test LAS, official) on {ahead} of the {measured} treebanks of issue 25 "
        "with both parsers scored (en_ewt apart).\n"
    )


def main() -> None:
    table_main(__doc__, render, BEGIN, END, "the parsers table")


if __name__ == "__main__":
    main()
