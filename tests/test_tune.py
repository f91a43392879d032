"""``spandep tune``: a dev sweep of a span model's inference settings, saved through the model-saving code."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from conftest import DEV
from spandep.cli.main import app
from spandep.pipeline.model_io import CHOICE_FILE, load_model

runner = CliRunner()


def test_tune_sweeps_on_dev_and_saves_the_best_setting(tiny_models, tmp_path) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_models["span"], model)
    out = tmp_path / "sweep.json"
    result = runner.invoke(app, ["tune", str(model), str(DEV), "--ks", "1,2", "--lams", "0.5,1", "--write", "--out", str(out)])
    assert result.exit_code == 0, result.output
    sweep = json.loads(out.read_text())
    assert len(sweep["sweep"]) == 2 * 2 * 2 * 2  # k × retrieval × decoder × λ
    assert [r["k"] for r in sweep["recall"]] == [1, 2]
    assert all(r["recall"] <= r["recall_retrieval"] for r in sweep["recall"])
    best = max(sweep["sweep"], key=lambda r: r["UAS_nopunct"] + r["LAS_nopunct"])
    assert sweep["best"] == best
    saved = load_model(model).inference
    assert (saved.k, saved.lam, saved.decoder, saved.retrieval) == (best["k"], best["lam"], best["decoder"], best["retrieval"])
    assert json.loads((model / CHOICE_FILE).read_text())["best"] == best


def test_tune_refuses_a_biaffine_model(tiny_models) -> None:
    result = runner.invoke(app, ["tune", str(tiny_models["biaffine"]), str(DEV)])
    assert result.exit_code == 2 and "tune chooses a span model's settings" in result.output
