"""The list of experiments (benchmarks/experiments.toml) against the tree: every config named once, every file it
names present; every result file with its schema, command and machine; every script listed in benchmarks/README.md
and none writing into results/legacy/; no absolute machine path anywhere in the repository."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from benchmarks.suite.experiments import read_experiments, suite_results
from benchmarks.suite.systems import REPO, RESULTS, SYSTEMS

EXPERIMENTS = read_experiments()
SCRIPTS = REPO / "benchmarks" / "scripts"
# A path of one machine: a home, the root's home, a /work checkout, or a named file or folder under /tmp (written in
# two parts so that this file does not match itself).
ABSOLUTE = re.compile("(?<![\\w.~-])/(?:" + "work|home|root" + ")/|(?<![\\w.~-])/" + "tmp/[\\w.-]")
SKIPPED = {".git", ".venv", "runs", "__pycache__", ".pytest_cache", ".hypothesis", "demo_out", "build", "dist"}


def _text_files() -> list[Path]:
    files = []
    for path in REPO.rglob("*"):
        rel = path.relative_to(REPO)
        if path.is_file() and not SKIPPED & set(rel.parts) and not rel.parts[0].endswith(".egg-info") \
                and path.suffix not in (".safetensors", ".png", ".pt", ".bin", ".xz", ".gz", ".zip"):
            files.append(path)
    return files


def test_every_config_is_named_once():
    named = [e.config for e in EXPERIMENTS]
    configs = sorted(str(p.relative_to(REPO)) for p in (REPO / "configs").rglob("*.toml"))
    assert sorted(named) == configs, "benchmarks/experiments.toml and configs/ differ"


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.config)
def test_an_experiment_names_what_exists(experiment):
    assert experiment.purpose.strip()
    assert [r for r in experiment.results if not (REPO / r).is_file()] == []
    recipe = Path(experiment.config).parts[1] == "recipes"
    assert bool(experiment.commands) != recipe, "a recipe is never run alone; every other config has its command"
    for command in experiment.commands:
        names = set(re.findall(r"configs/[\w/.-]+\.toml", command))
        assert names <= {experiment.config}, f"{command}: runs another config"


def test_every_suite_system_is_run_by_its_configs_experiment():
    commands = {e.config: " ".join(e.commands) for e in EXPERIMENTS}
    for name, system in SYSTEMS.items():
        for dataset, config in system.configs.items():
            assert re.search(rf"--suite {dataset} --systems [^&|;]*\b{re.escape(name)}\b", commands[config]), (name, config)


def test_the_report_reads_the_suite_files_the_list_names(tmp_path):
    assert suite_results(RESULTS, EXPERIMENTS) and suite_results(RESULTS / "gpu", EXPERIMENTS)
    (tmp_path / "en_ewt__unlisted.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="en_ewt__unlisted.json named by no experiment"):
        suite_results(tmp_path, EXPERIMENTS)


@pytest.mark.parametrize("path", sorted(RESULTS.rglob("*.json")), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_result_file_has_its_schema_command_and_machine(path):
    result = json.loads(path.read_text(encoding="utf-8"))
    assert re.fullmatch(r"spandep-[a-z0-9-]+/\d+", result.get("schema", "")), "no schema"
    assert result.get("command") and result.get("machine"), "no command or machine"


def test_every_script_is_listed_in_the_readme_and_none_writes_into_legacy():
    readme = (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8")
    scripts = sorted(p for p in SCRIPTS.rglob("*") if p.suffix in (".py", ".sh") and p.name != "__init__.py")
    assert [p for p in scripts if f"`scripts/{p.relative_to(SCRIPTS)}`" not in readme] == []
    writes = re.compile(r"(--out\s+|>\s*|OUT=|mkdir -p )\S*results/legacy")
    assert [p.name for p in scripts if writes.search(p.read_text(encoding="utf-8"))] == []


def test_no_absolute_machine_path_in_the_repository():
    found = [f"{path.relative_to(REPO)}:{n}" for path in _text_files()
             for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if ABSOLUTE.search(line)]
    assert found == []


def test_the_path_pattern_finds_machine_paths_only():
    hits = ["/" + "work/main/runs/x", "--out /" + "tmp/bench", "/" + "root/res/a.json", "cd /" + "home/u"]
    misses = ["../shared/data/x", "runs/work/main", "$TMPDIR/prof", "http://example.org/home/default.asp", "~/work/x"]
    assert all(ABSOLUTE.search(s) for s in hits) and not any(ABSOLUTE.search(s) for s in misses)


def test_a_spandep_report_is_stamped_with_schema_machine_and_checkout(tmp_path):
    from benchmarks.suite.record import stamp_file

    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"command": "spandep tune M DEV --ks 2,5", "best": {"k": 2}}), encoding="utf-8")
    stamp_file(path, "spandep-tune/1", "python -m benchmarks.suite.run --suite ewt")
    stamped = json.loads(path.read_text(encoding="utf-8"))
    assert stamped["schema"] == "spandep-tune/1" and stamped["command"] == "spandep tune M DEV --ks 2,5"
    assert stamped["machine"]["cores"] >= 1 and "git_commit" in stamped and stamped["best"] == {"k": 2}


def test_a_saved_model_records_its_training_paths_relative_to_where_it_ran(tmp_path, monkeypatch):
    from spandep.data.output import relative_paths

    monkeypatch.chdir(tmp_path)
    record = {"data": {"train": str(tmp_path.parent / "data" / "train.conllu"), "epochs": 3}, "bases": ["/srv/x", "y"]}
    assert relative_paths(record) == {
        "data": {"train": "../data/train.conllu", "epochs": 3}, "bases": [os.path.relpath("/srv/x"), "y"],
    }

