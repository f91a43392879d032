"""The recipe steps of the non-English treebanks on dev, one row per step, each against the step it builds on.

    .venv/bin/python -m benchmarks.scripts.recipe_table                  # print the table
    .venv/bin/python -m benchmarks.scripts.recipe_table --doc BENCHMARKS.md

Rows come from ``benchmarks/results/multilingual/<treebank>__<step>.json`` (written by
``benchmarks/scripts/recipe_step.sh``: the step's model on the treebank's dev split, gold tokens, every CoNLL 2018
metric). A step is a config, ``configs/**/<step>.toml``; the step it builds on is its config's (first) ``base``, and
the row's Δ LAS is against that step's row of the same treebank ("–" when the base was not measured). A model of
several treebanks is compared with each treebank's own model of the same recipe instead (:data:`AGAINST`). ``--doc``
replaces the part of that file between ``<!-- recipe:begin -->`` and ``<!-- recipe:end -->``.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from benchmarks.scripts.peers_table import lemma_cell
from benchmarks.suite.report import table_main
from benchmarks.suite.systems import DATASETS, REPO

RESULTS = REPO / "benchmarks" / "results" / "multilingual"
CONFIGS = REPO / "configs"
BEGIN, END = "<!-- recipe:begin -->", "<!-- recipe:end -->"
COLUMNS = ("UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS", "BLEX")
AGAINST = {"multi-e5-span": "{treebank}-span", "multi-e5-biaffine": "{treebank}-biaffine"}  # one model per treebank
HEADER = (
    "| treebank | step (config) | builds on | " + " | ".join(COLUMNS) + " | Δ LAS | epochs (best) | source |\n"
    "|---|---|---|" + "---|" * len(COLUMNS) + "---|---|---|\n"
)


def step_config(step: str, configs: Path = CONFIGS) -> Path | None:
    """The config file of a step (its name is the file's stem), or ``None``."""
    found = sorted(configs.rglob(f"{step}.toml"))
    return found[0] if found else None


def parent_step(step: str, configs: Path = CONFIGS) -> str | None:
    """The step a step's config builds on: the stem of its first ``base`` (``None``: no config or no base)."""
    path = step_config(step, configs)
    if path is None:
        return None
    base = tomllib.loads(path.read_text(encoding="utf-8")).get("base")
    first = base[0] if isinstance(base, list) and base else base
    return Path(first).stem if isinstance(first, str) else None


def read_rows(folder: Path = RESULTS, configs: Path = CONFIGS) -> list[dict[str, Any]]:
    """The dev results of the steps (``<treebank>__<step>.json`` where ``<step>.toml`` is a config; the ``__tune``
    sweeps and the scores of shipped copies, ``<treebank>__shipped.json``, are left out)."""
    rows = []
    for path in sorted(folder.glob("*__*.json")) if folder.is_dir() else []:
        treebank, _, step = path.stem.partition("__")
        if "__" in step or step_config(step, configs) is None:
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        rows.append({"treebank": treebank, "step": step, "scores": result["conll18"], "source": str(path.relative_to(REPO)),
                     "trained": result.get("trained", {})})
    return rows


def _las(row: dict[str, Any]) -> float | None:
    return row["scores"].get("LAS", {}).get("f1")


def render(rows: list[dict[str, Any]], configs: Path = CONFIGS) -> str:
    """The table: treebanks in the suite's order, each treebank's steps after the steps they build on."""
    order = {tb: i for i, tb in enumerate(DATASETS)}
    by_key = {(r["treebank"], r["step"]): r for r in rows}
    ranked = sorted(rows, key=lambda r: (order.get(r["treebank"], len(order)), r["treebank"], depth(r["step"], configs), r["step"]))
    lines = []
    for row in ranked:
        against = AGAINST.get(row["step"])
        parent = against.format(treebank=row["treebank"]) if against else parent_step(row["step"], configs)
        base = by_key.get((row["treebank"], parent)) if parent else None
        delta = "–" if base is None or _las(base) is None or _las(row) is None else f"{_las(row) - _las(base):+.2f}"
        cells = [row["treebank"], f"`{row['step']}`", f"`{parent}`" if parent else "–", *(lemma_cell(row["scores"], c, row["treebank"]) for c in COLUMNS),
                 delta, epochs(row["trained"]), f"`{row['source']}`"]
        lines.append("| " + " | ".join(cells) + " |")
    return HEADER + "\n".join(lines) + "\n"


def depth(step: str, configs: Path = CONFIGS) -> int:
    """How many measured-or-not steps a step builds on (its chain of config bases)."""
    seen, parent = 0, parent_step(step, configs)
    while parent is not None and seen < 20:
        seen, parent = seen + 1, parent_step(parent, configs)
    return seen


def epochs(trained: dict[str, Any]) -> str:
    """``epochs (best)`` from a result's ``trained`` record, ``–`` when it has none."""
    return f"{trained['epochs']} ({trained['best_epoch']})" if trained else "–"


def main() -> None:
    table_main(__doc__, lambda: render(read_rows()), BEGIN, END, "the recipe table")


if __name__ == "__main__":
    main()
