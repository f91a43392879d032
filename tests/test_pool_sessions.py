"""benchmarks/scripts/pool_sessions.py: two pool runs compared treebank by treebank on their best epochs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.scripts.pool_sessions import best_epoch

REPO = Path(__file__).resolve().parents[1]


def _log(path: Path, epochs: list[tuple[dict[str, float], bool]]) -> Path:
    lines = ["dev: 2 treebanks (de_gsd, en_ewt)"]
    for n, (figures, best) in enumerate(epochs, 1):
        lines.append(f"epoch={n} step={n * 10} " + " ".join(f"{k}={v}" for k, v in figures.items()) + (" *best*" if best else ""))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _figures(de: float, en: float) -> dict[str, float]:
    return {f"{t}:{m}": v for t, v in (("de_gsd", de), ("en_ewt", en)) for m in ("UAS", "LAS", "LAS_nopunct")}


def test_the_best_epoch_decides_and_only_the_folders_treebanks_count_as_served(tmp_path):
    old = _log(tmp_path / "old.log", [(_figures(70.0, 80.0), True), (_figures(60.0, 60.0), False)])  # best: the first
    new = _log(tmp_path / "new.log", [(_figures(72.0, 70.0), True)])
    assert best_epoch(old)["de_gsd:LAS"] == 70.0
    out = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "benchmarks.scripts.pool_sessions", str(old), str(new), "--out", str(out)], cwd=REPO, check=True,
                   capture_output=True)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["all"]["LAS"] == {"old": 75.0, "new": 71.0, "rose": 1, "fell": 1}  # en_ewt fell, de_gsd rose
    assert report["served"]["treebanks"] == 1 and report["served"]["LAS"] == {"old": 70.0, "new": 72.0, "rose": 1, "fell": 0}  # en_ewt ships apart
    assert report["LAS_by_treebank"] == {"de_gsd": 2.0, "en_ewt": -10.0}


def _scores(folder: Path, treebank: str, suffix: str = "__gold__dev.json", **f1: float) -> None:
    folder.mkdir(exist_ok=True)
    official = {m: {"f1": v} for m, v in f1.items()}
    (folder / f"{treebank}{suffix}").write_text(json.dumps({"conll18": official}), encoding="utf-8")


def test_folders_of_dev_scores_compare_every_head(tmp_path):
    """score_pool dev results (official F1 of every head) compare as the logs do, UFeats and MLAS per treebank too."""
    old, new = tmp_path / "old", tmp_path / "new"
    _scores(old, "de_gsd", UAS=80.0, LAS=70.0, UFeats=90.0, MLAS=60.0)
    _scores(old, "en_ewt", UAS=90.0, LAS=85.0, UFeats=95.0, MLAS=75.0)
    _scores(new, "de_gsd", UAS=82.0, LAS=73.0, UFeats=88.0, MLAS=59.0)
    _scores(new, "en_ewt", UAS=90.0, LAS=85.0, UFeats=96.0, MLAS=75.0)
    out = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "benchmarks.scripts.pool_sessions", str(old), str(new), "--out", str(out)], cwd=REPO,
                   check=True, capture_output=True)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["all"]["UFeats"] == {"old": 92.5, "new": 92.0, "rose": 1, "fell": 1}
    assert report["all"]["LAS"] == {"old": 77.5, "new": 79.0, "rose": 1, "fell": 0} and "LAS_nopunct" not in report["all"]
    assert report["UFeats_by_treebank"] == {"de_gsd": -2.0, "en_ewt": 1.0} and report["MLAS_by_treebank"] == {"de_gsd": -1.0, "en_ewt": 0.0}
    assert report["served"]["treebanks"] == 1  # en_ewt ships apart


@pytest.mark.parametrize(("split", "suffix"), [("test", "__gold.json"), ("test-raw", "__raw.json")])
def test_test_splits_read_their_own_result_files_and_not_the_others(tmp_path, split, suffix):
    """--split test reads T__gold.json (score_pool's test results from gold tokens), --split test-raw T__raw.json (from
    raw text): never the dev results or the other mode's beside them."""
    old, new = tmp_path / "old", tmp_path / "new"
    for other, (o, n) in {"__gold__dev.json": (90.0, 10.0), "__gold.json": (50.0, 55.0), "__raw.json": (30.0, 20.0)}.items():
        if other != suffix:  # the files that must not be read
            _scores(old, "de_gsd", other, LAS=o)
            _scores(new, "de_gsd", other, LAS=n)
    _scores(old, "de_gsd", suffix, LAS=70.0)
    _scores(new, "de_gsd", suffix, LAS=74.0)
    out = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "benchmarks.scripts.pool_sessions", str(old), str(new), "--split", split, "--out", str(out)],
                   cwd=REPO, check=True, capture_output=True)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["split"] == split and report["LAS_by_treebank"] == {"de_gsd": 4.0}
