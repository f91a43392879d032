"""The table of heads rebuilt with characters and sentence context (issue 45, BENCHMARKS.md "Heads with characters
and sentence context"): one row per ``benchmarks/results/heads/<dataset>__<split>__chars.json``
(``benchmarks.scripts.heads_finetune ... --step chars``), the shipped model and the rebuilt one side by side.

    python -m benchmarks.scripts.heads_table --doc BENCHMARKS.md
"""

from __future__ import annotations

import json

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import REPO

RESULTS = REPO / "benchmarks" / "results" / "heads"
BEGIN, END = "<!-- heads-chars:begin -->", "<!-- heads-chars:end -->"
COLUMNS = ("UPOS", "UFeats", "Lemmas", "LAS", "MLAS", "BLEX")


def render() -> str:
    """The markdown table of every ``__chars`` result file, by dataset then split (dev first)."""
    rows = [
        f"| treebank | split | {' | '.join(COLUMNS)} | unseen-form lemmas | same trees | source |",
        "|---|---|" + "---|" * len(COLUMNS) + "---|---|---|",
    ]
    files = sorted(RESULTS.glob("*__chars.json"), key=lambda p: (p.name.split("__")[0], p.name.split("__")[1] != "dev"))
    for path in files:
        r = json.loads(path.read_text(encoding="utf-8"))
        cells = [f"{r['before'][c]:.2f} → {r['after'][c]:.2f}" for c in COLUMNS]
        unseen = f"{r['before']['unseen_lemmas']['accuracy']:.2f} → {r['after']['unseen_lemmas']['accuracy']:.2f}"
        rows.append(
            f"| {r['dataset']} | {r['split']} | {' | '.join(cells)} | {unseen} | {'yes' if r['same_trees'] else '**no**'} "
            f"| `{path.relative_to(REPO)}` |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    table_main(__doc__, render, BEGIN, END, "the table of heads with characters and context")
