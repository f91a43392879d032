"""The tables of heads trained anew over a shipped model's frozen encoder (issue 45), one per step of
``benchmarks.scripts.heads_finetune ... --step STEP``: ``chars`` (BENCHMARKS.md "Heads with characters and sentence
context"), ``extra`` ("Heads trained on more of the language's data"), ``lemma``, ``layer`` ("Heads that read a
lower transformer layer"), ``lexicon``, ``finetune`` ("Shipped models fine-tuned whole") and ``dictionary-repair``, ``dictionary-prefer`` ("A
language's dictionary for unseen words"); one row per
``benchmarks/results/heads/<dataset>__<split>__<step>.json``, the model before and after side by side.

    python -m benchmarks.scripts.heads_table --doc BENCHMARKS.md   # every step's table between its markers
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.suite.report import print_or_replace
from benchmarks.suite.systems import REPO

RESULTS = REPO / "benchmarks" / "results" / "heads"
STEPS = {
    "chars": "the table of heads with characters and context",
    "extra": "the table of heads trained on more data",
    "lemma": "the table of the lemma head conditioned on UPOS with the feature-keyed lexicon",
    "layer": "the table of heads that read a lower transformer layer",
    "lexicon": "the table of shipped models given the feature-keyed lemma table",
    "finetune": "the table of shipped models fine-tuned whole with their heads",
    "dictionary-repair": "the table of shipped models given a language's dictionary, repairing",
    "dictionary-prefer": "the table of shipped models given a language's dictionary, preferred",
}
COLUMNS = ("UPOS", "UFeats", "Lemmas", "LAS", "MLAS", "BLEX")


def markers(step: str) -> tuple[str, str]:
    """The markers of ``step``'s table in a document."""
    return f"<!-- heads-{step}:begin -->", f"<!-- heads-{step}:end -->"


def model_note(result: dict) -> str:
    """`` (folder)`` where the model scored is not the dataset's own folder (en_ewt's default_model and en_accurate)."""
    folder = Path(result["before"]["model"]).name
    return "" if folder == result["dataset"] else f" (`{folder}`)"


def render(step: str = "chars") -> str:
    """The markdown table of every ``__<step>`` result file, by dataset then split (dev first)."""
    rows = [
        f"| treebank | split | {' | '.join(COLUMNS)} | unseen-form lemmas | same trees | source |",
        "|---|---|" + "---|" * len(COLUMNS) + "---|---|---|",
    ]
    files = sorted(RESULTS.glob(f"*__{step}.json"), key=lambda p: (p.name.split("__")[0], p.name.split("__")[1] != "dev"))
    for path in files:
        r = json.loads(path.read_text(encoding="utf-8"))
        cells = [f"{r['before'][c]:.2f} → {r['after'][c]:.2f}" for c in COLUMNS]
        unseen = f"{r['before']['unseen_lemmas']['accuracy']:.2f} → {r['after']['unseen_lemmas']['accuracy']:.2f}"
        rows.append(
            f"| {r['dataset']}{model_note(r)} | {r['split']} | {' | '.join(cells)} | {unseen} | {'yes' if r['same_trees'] else '**no**'} "
            f"| `{path.relative_to(REPO)}` |"
        )
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", type=Path, help="write each step's table between its markers of this file")
    doc = ap.parse_args().doc
    for step, what in STEPS.items():
        print_or_replace(render(step), doc, *markers(step), what)


if __name__ == "__main__":
    main()
