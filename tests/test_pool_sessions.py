"""benchmarks/scripts/pool_sessions.py: two pool runs compared treebank by treebank on their best epochs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
