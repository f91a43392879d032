"""The fine-tune table (``benchmarks/scripts/finetune_table.py``): one row per treebank with both dev results, the
multilingual model's and its own folder's, from the official scores in the files; BENCHMARKS.md holds what it writes."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.scripts import finetune_table
from benchmarks.suite.systems import REPO


def _result(folder: Path, treebank: str, system: str, las: float, lemmas: bool = True, split: str = "train") -> None:
    conll18 = {m: {"f1": las + i, "gold": 1234} for i, m in enumerate(("Words", *finetune_table.METRICS))}
    result = {"conll18": conll18, "gold_lemmas": lemmas, "train_split": split, "trained": {"epochs": 5, "best_epoch": 4}}
    (folder / f"{treebank}__dev__{system}.json").write_text(json.dumps(result), encoding="utf-8")


def test_a_row_per_treebank_with_both_results_and_the_mean_gain(tmp_path: Path) -> None:
    _result(tmp_path, "aa_one", "multilingual", 60.0)
    _result(tmp_path, "aa_one", "aa_one", 70.5)
    _result(tmp_path, "bb_two", "multilingual", 50.0, lemmas=False, split="dev (less the held-out part)")
    _result(tmp_path, "bb_two", "bb_two", 52.0, lemmas=False, split="dev (less the held-out part)")
    _result(tmp_path, "cc_alone", "multilingual", 40.0)  # no fine-tune measured: no row
    table = finetune_table.render(tmp_path)
    lines = [line for line in table.splitlines() if line.startswith("| aa_one") or line.startswith("| bb_two")]
    assert len(lines) == 2 and "cc_alone" not in table
    las = finetune_table.METRICS.index("LAS") + 1
    assert f"{60.0 + las:.2f} → **{70.5 + las:.2f}**" in lines[0] and "| +10.50 |" in lines[0] and "| dev (1,234) |" in lines[0]
    assert "| held-out part of dev (1,234) |" in lines[1] and "| – |" in lines[1] and "| 5 (4) |" in lines[1]  # no lemmas
    assert "Mean dev LAS gain over the 2 treebanks: +6.25." in table


def test_benchmarks_holds_what_the_script_writes() -> None:
    text = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    begin, end = finetune_table.BEGIN, finetune_table.END
    written = text[text.index(begin) + len(begin) + 1: text.index(end)]
    assert written == finetune_table.render(), "BENCHMARKS.md is out of date: run python -m benchmarks.scripts.finetune_table --doc BENCHMARKS.md"
