"""``spandep tune``: a dev sweep of a model's inference settings (any parser type), saved through the model-saving
code."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from conftest import DEV
from spandep.cli.main import app
from spandep.storage.model_io import CHOICE_FILE, load_model
from spandep.training.tune import fastest_within

runner = CliRunner()
METRICS = {"UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "dp_fallbacks"}


def test_tune_sweeps_on_dev_and_saves_the_best_setting(tiny_models, tmp_path) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_models["span"], model)
    out = tmp_path / "sweep.json"
    result = runner.invoke(app, ["tune", str(model), str(DEV), "--ks", "1,2", "--lams", "0.5,1", "--write", "--out", str(out)])
    assert result.exit_code == 0, result.output
    sweep = json.loads(out.read_text())
    assert sweep["schema"] == "spandep-tune/1" and sweep["machine"]["cores"] >= 1 and "git_commit" in sweep  # stamped
    assert len(sweep["sweep"]) == 2 * 2 * 2 * 2  # k × retrieval × decoder × λ
    assert [r["k"] for r in sweep["recall"]] == [1, 2]
    assert all(r["recall"] <= r["recall_retrieval"] for r in sweep["recall"])
    best = max(sweep["sweep"], key=lambda r: r["UAS_nopunct"] + r["LAS_nopunct"])
    assert sweep["best"] == best
    saved = load_model(model).inference
    assert (saved.k, saved.lam, saved.decoder, saved.retrieval) == (best["k"], best["lam"], best["decoder"], best["retrieval"])
    assert json.loads((model / CHOICE_FILE).read_text())["best"] == best


def test_tune_sweeps_a_biaffine_models_decoder_through_the_parser_interface(tiny_models, tmp_path) -> None:
    """A Biaffine model has one setting, the decoder: each row is a parse with it; the best is saved."""
    model = tmp_path / "model"
    shutil.copytree(tiny_models["biaffine"], model)
    out = tmp_path / "sweep.json"
    result = runner.invoke(app, ["tune", str(model), str(DEV), "--write", "--out", str(out)])
    assert result.exit_code == 0, result.output
    sweep = json.loads(out.read_text())
    assert [set(r) - METRICS for r in sweep["sweep"]] == [{"decoder"}, {"decoder"}]
    assert [r["decoder"] for r in sweep["sweep"]] == ["projective", "mst"] and sweep["recall"] == []
    assert sweep["best"] == max(sweep["sweep"], key=lambda r: r["UAS_nopunct"] + r["LAS_nopunct"])
    assert load_model(model).inference.decoder == sweep["best"]["decoder"]
    for option in (["--ablate-mutual"], ["--within", "1"]):  # span settings: one line naming the option
        result = runner.invoke(app, ["tune", str(model), str(DEV), *option])
        assert result.exit_code == 2 and result.output.startswith(f"spandep: error: {option[0]}: ") and result.output.count("\n") == 1


def test_within_saves_the_smallest_k_near_the_best(tiny_models, tmp_path) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_models["span"], model)
    result = runner.invoke(app, ["tune", str(model), str(DEV), "--ks", "1,2", "--lams", "1", "--within", "100", "--write"])
    assert result.exit_code == 0, result.output
    assert "fastest within 100.0 LAS of the best" in result.output and load_model(model).inference.k == 1
    assert runner.invoke(app, ["tune", str(model), str(DEV), "--within", "-1"]).exit_code == 2


def test_fastest_within_takes_the_smallest_k_whose_best_is_close_enough() -> None:
    def row(k: int, las: float, labels: str = "linker") -> dict:
        return {"k": k, "UAS_nopunct": 90.0, "LAS_nopunct": las, "label_source": labels}

    rows = [row(1, 80.0), row(2, 87.7), row(2, 87.9), row(5, 88.0)]
    best = row(5, 88.1, "word")  # the sweep's best after its later choices (labels from the word scorer)
    assert fastest_within(rows, best, 0.2) == row(2, 87.9)
    assert fastest_within(rows, best, 0.05) == best  # at the best's own k: the best itself, not its sweep row
    assert fastest_within(rows, best, 10.0) == row(1, 80.0)
    refined = fastest_within(rows, best, 0.15, refine=lambda r: {**r, "LAS_nopunct": r["LAS_nopunct"] + 0.1, "label_source": "word"})
    assert refined == row(2, 88.0, "word")  # refined before the margin is checked


def test_an_out_file_that_cannot_be_written_is_refused_before_the_sweep(tiny_models, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("spandep.training.tune.tune", lambda *a, **k: pytest.fail("swept before the check"))
    for out in (tmp_path / "no" / "such" / "folder" / "sweep.json", tmp_path):
        result = runner.invoke(app, ["tune", str(tiny_models["span"]), str(DEV), "--out", str(out)])
        assert result.exit_code == 4 and "cannot write" in result.output and "Traceback" not in result.output
        assert result.output.count("\n") == 1
