"""Every runnable training config in configs/ reads: its bases exist, its keys are known, its settings are allowed.
A config of several treebanks whose tokenizers are not trained on this machine (runs/tokenizers/) may say so, and
only that. Every config trains into runs/. Recipes (configs/recipes/) are bases, not runnable configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from spandep.errors import InputFormatError
from spandep.training.config import load_config

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p for p in (REPO / "configs").rglob("*.toml") if "recipes" not in p.relative_to(REPO / "configs").parts)


def test_there_are_configs():
    assert len(CONFIGS) > 30


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(REPO / "configs")))
def test_config_reads(path, monkeypatch):
    monkeypatch.chdir(REPO)  # data and output paths are relative to the repository root
    try:
        cfg = load_config(path)
    except InputFormatError as exc:
        assert "runs/tokenizers/" in str(exc) and "is not a tokenizer folder" in str(exc), str(exc)
        return
    assert Path(cfg["training"]["output"]).resolve().is_relative_to(REPO / "runs")  # nothing trains into the sources
