"""The list of experiments, ``benchmarks/experiments.toml``: one entry per config under ``configs/`` with its purpose,
the commands that run it and the committed result files of its runs. The report renders BENCHMARKS.md's suite tables
from the suite result files it names (:func:`suite_results`); tests/test_experiments.py keeps it equal to the tree."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from benchmarks.suite.systems import REPO

EXPERIMENTS = REPO / "benchmarks" / "experiments.toml"


@dataclass(frozen=True)
class Experiment:
    """One config (a path from the repository root) and what it is for; ``commands`` is empty for a recipe, a base
    of other configs that is never run alone; ``results`` are paths from the repository root."""

    config: str
    purpose: str
    commands: tuple[str, ...]
    results: tuple[str, ...]


def read_experiments(path: Path = EXPERIMENTS) -> list[Experiment]:
    """The experiments of the list, in its order."""
    with path.open("rb") as f:
        entries = tomllib.load(f)["experiment"]
    return [Experiment(e["config"], e["purpose"], tuple(e["commands"]), tuple(e["results"])) for e in entries]


def suite_results(folder: Path, experiments: list[Experiment]) -> list[Path]:
    """The suite result files (``<dataset>__<system>.json``, no dev sweeps) directly in ``folder`` that the list
    names, sorted; a suite file there that it does not name is an error (name it with its config's entry)."""
    named = {(REPO / r).resolve() for e in experiments for r in e.results}
    found = sorted(p for p in folder.glob("*__*.json") if "__span_sweep" not in p.name)
    unnamed = [p.name for p in found if p.resolve() not in named]
    if unnamed:
        raise SystemExit(f"{folder}: {', '.join(unnamed)} named by no experiment: add each to its config's entry "
                         f"in {EXPERIMENTS.relative_to(REPO)}")
    return found
