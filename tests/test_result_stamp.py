"""The result files spandep commands write for keeping (``spandep evaluate --json``; ``spandep tune --out`` in
test_tune.py) carry the stamp of every result file (``spandep.evaluation.provenance``), and ``spandep evaluate
--gold-ud-version 1`` scores a UD v1 gold file converted to v2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.evaluation import provenance

# "I saw it and left": a UD v1 gold tree (dobj, CONJ) and the same tree as a v2 parser writes it (obj, CCONJ)
GOLD_V1 = (
    "1\tI\tI\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\tsaw\tsee\tVERB\t_\t_\t0\troot\t_\t_\n3\tit\tit\tPRON\t_\t_\t2\tdobj\t_\t_\n"
    "4\tand\tand\tCONJ\t_\t_\t5\tcc\t_\t_\n5\tleft\tleave\tVERB\t_\t_\t2\tconj\t_\t_\n\n"
)
PRED_V2 = GOLD_V1.replace("dobj", "obj").replace("CONJ", "CCONJ")


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()


@pytest.fixture
def files(tmp_path):
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(GOLD_V1, encoding="utf-8")
    pred.write_text(PRED_V2, encoding="utf-8")
    return str(gold), str(pred)


def test_evaluate_json_is_stamped_as_a_result_file(files) -> None:
    result = _runner().invoke(app, ["evaluate", *files, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["schema"] == provenance.EVALUATE_SCHEMA and report["command"].startswith("spandep evaluate ")
    assert report["machine"] == provenance.machine() and report["spandep_version"]
    assert {"git_commit", "git_dirty"} <= set(report) and report["gold_ud_version"] == 2
    assert report["words"] == 5 and "conll18" in report


def test_a_ud_v1_gold_file_is_converted_to_v2_before_scoring(files) -> None:
    """Read as v2, the gold's dobj and CONJ differ from the prediction's obj and CCONJ (LAS 4/5, UPOS 4/5); converted,
    they are the same relation and tag."""
    as_v2 = json.loads(_runner().invoke(app, ["evaluate", *files, "--json"]).stdout)
    assert as_v2["las"] == pytest.approx(80.0) and as_v2["conll18"]["UPOS"]["f1"] == pytest.approx(80.0)
    result = _runner().invoke(app, ["evaluate", *files, "--json", "--gold-ud-version", "1"])
    assert result.exit_code == 0, result.output
    as_v1 = json.loads(result.stdout)
    assert as_v1["las"] == 100.0 and as_v1["conll18"]["UPOS"]["f1"] == 100.0 and as_v1["gold_ud_version"] == 1
    text = _runner().invoke(app, ["evaluate", *files, "--gold-ud-version", "1"]).stdout
    assert text.startswith("gold converted from UD v1 to v2")


def test_an_unknown_ud_version_is_one_line(files) -> None:
    result = _runner().invoke(app, ["evaluate", *files, "--gold-ud-version", "3"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == "spandep: error: --gold-ud-version must be 1 or 2, not 3"


def test_stamping_a_stamped_report_again_keeps_its_own_fields() -> None:
    """A script that keeps a spandep command's report (benchmarks.suite.record) stamps it again: the report's schema
    and command stay."""
    first = provenance.stamp({"las": 1.0}, provenance.EVALUATE_SCHEMA, "spandep evaluate G P --json")
    again = provenance.stamp(first, "spandep-other/1", "benchmarks/scripts/eval_ewt.sh run")
    assert again == first


def test_no_checkout_means_the_commit_the_environment_names(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SPANDEP_COMMIT", "abc123")
    assert provenance.checkout(tmp_path) == {"git_commit": "abc123", "git_dirty": None}


def test_a_results_weights_digest_follows_the_folders_weights_and_lexicons(tmp_path) -> None:
    """``ship_pool.sh`` scores a treebank again when its result was made with other weights in the same folder."""
    from benchmarks.suite.record import weights_digest

    assert weights_digest(tmp_path) is None and weights_digest("en") is None  # no weights: nothing to compare
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    first = weights_digest(tmp_path)
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")  # a calibration written: the parses stay
    assert weights_digest(tmp_path) == first and len(first) == 16
    (tmp_path / "heads.json.xz").write_bytes(b"lexicons")
    with_lexicons = weights_digest(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    assert len({first, with_lexicons, weights_digest(tmp_path)}) == 3
