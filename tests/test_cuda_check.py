"""benchmarks/scripts/cuda_check.py, the GPU path's end-to-end check, run here with the CPU as the device: it trains,
parses and compares, and its tree check catches a bad tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.scripts import cuda_check


def test_well_formed_catches_cycles_and_roots() -> None:
    word = lambda head: ["1", "w", "_", "_", "_", "_", str(head), "dep", "_", "_"]  # noqa: E731
    assert cuda_check.well_formed([word(0), word(1), word(2)])
    assert not cuda_check.well_formed([word(0), word(3), word(2)])  # 2 → 3 → 2
    assert not cuda_check.well_formed([word(0), word(0)])  # two roots
    assert not cuda_check.well_formed([word(2), word(1)])  # no root


@pytest.mark.slow
def test_runs_on_the_cpu(tmp_path: Path) -> None:
    report = {"models": {}}
    cuda_check.check(tmp_path / "work", "cpu", None, report, tmp_path / "out.json")
    assert json.loads((tmp_path / "out.json").read_text()) == report
    assert set(report["models"]) == {"biaffine, trained on cpu", "span, trained on cpu"}
    for parses in report["models"].values():
        assert set(parses) == {"cpu float32", "cpu bfloat16"}
        reference = parses["cpu float32"]
        assert reference["well_formed"] and reference["sentences"] == 40 and set(reference["agree_with_cpu_float32"].values()) == {100.0}
        assert reference["las"] > 10  # the model learnt its sentences: agreement is not that of a degenerate parse
