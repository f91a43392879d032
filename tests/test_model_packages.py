"""Language models as distributions of their own (spandep.storage.packaging, ``spandep package-models``): the core
wheel carries the English models only and stays under PyPI's 100 MB; a model's wheel holds its folder and, installed,
is what ``spandep.load``, ``spandep models`` and the service find; a model whose distribution is not installed is one
line naming it. Wheels are built offline by setuptools through ``pip wheel --no-build-isolation``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import DEV
from typer.testing import CliRunner

import spandep
from spandep.cli.main import app
from spandep.errors import ModelError
from spandep.serve.service import Service, ServiceSettings
from spandep.storage import catalogue
from spandep.storage.catalogue import default_model, read_catalogue, shipped_models
from spandep.storage.packaging import up_to_date
from spandep.version import __version__

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
PYPI_LIMIT = 100 * 1024 * 1024  # PyPI's default largest file


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args, "-q", "--no-deps", "--no-index"], check=True)


def test_the_core_wheel_holds_the_english_models_only(tmp_path):
    """Built from a copy of the tree as `pip wheel .` builds it: every core line's folder and the catalogue, no folder
    of a line that ships as its own distribution, and under PyPI's file limit."""
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, tree / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp_path / "out"), str(tree)], check=True)
    [wheel] = (tmp_path / "out").glob("spandep-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    folders = {n.split("/")[2] for n in names if n.startswith("spandep/resources/") and n.count("/") > 2}
    lines = read_catalogue()[1].values()
    assert folders == {m.folder.name for m in lines if m.in_core()} == {"default_model", "en_accurate"}
    assert {m.name for m in lines if not m.in_core()} >= {"fr", "it", "ru", "no", "cs", "zh"}
    assert "spandep/resources/catalogue.json" in names and "spandep/resources/default_model/tokenizer/config.json" in names
    assert wheel.stat().st_size < PYPI_LIMIT


@pytest.fixture
def tiny_resources(tmp_path, monkeypatch, tiny_models):
    """spandep's resources as a source checkout has them, with one model of its own distribution: the catalogue's
    ``xx`` (folder ``xx_tiny``, a tiny BiLSTM Biaffine model) beside the real default model."""
    resources = tmp_path / "resources"
    shutil.copytree(tiny_models["biaffine"], resources / "xx_tiny")
    lines = {
        "en": {"folder": str(default_model().folder), "code": "en_ewt", "language": "English", "treebank": "UD_English-EWT"},
        "xx": {"folder": "xx_tiny", "language": "Xish", "treebank": "UD_Xish-Tiny"},
    }
    (resources / "catalogue.json").write_text(json.dumps({"default": "en", "models": lines}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", resources / "catalogue.json")
    monkeypatch.delenv("SPANDEP_MODEL", raising=False)
    return resources


def test_a_model_wheel_is_what_load_finds_once_installed(tiny_resources, tmp_path, monkeypatch):
    source = tiny_resources / "xx_tiny"
    result = runner.invoke(app, ["package-models", "-o", str(tmp_path / "wheels")])  # every line outside the core
    assert result.exit_code == 0, result.output
    [wheel] = (tmp_path / "wheels").iterdir()
    assert result.output == f"{wheel}\n" and wheel.name == f"spandep_model_xx_tiny-{__version__}-py3-none-any.whl"
    archive = zipfile.ZipFile(wheel)
    model_files = {n for n in archive.namelist() if n.startswith("spandep_model_xx_tiny/xx_tiny/")}
    assert model_files == {f"spandep_model_xx_tiny/xx_tiny/{p.relative_to(source).as_posix()}" for p in source.rglob("*") if p.is_file()}
    assert archive.read("spandep_model_xx_tiny/xx_tiny/model.safetensors") == (source / "model.safetensors").read_bytes()
    metadata = archive.read(f"spandep_model_xx_tiny-{__version__}.dist-info/METADATA").decode()
    assert "Name: spandep-model-xx-tiny\n" in metadata and f"Requires-Dist: spandep=={__version__}\n" in metadata

    [xx] = [m for m in shipped_models() if m.name == "xx"]
    assert not xx.packaged and xx.folder == source.resolve() and xx.origin() == "source checkout"
    site = tmp_path / "site"
    _pip("install", "--target", str(site), str(wheel))
    monkeypatch.syspath_prepend(str(site))
    assert read_catalogue()[1]["xx"].folder == source.resolve()  # a checkout's own folder wins over an installed copy
    (source / "config.json").rename(source / "config.moved")  # as in the core wheel, which lacks the folder
    xx = read_catalogue()[1]["xx"]
    assert xx.packaged and xx.folder == (site / "spandep_model_xx_tiny" / "xx_tiny").resolve()
    rows = {r["name"]: r for r in json.loads(runner.invoke(app, ["models", "--json"]).output)}
    assert rows["xx"]["from"] == rows["xx"]["package"] == "spandep-model-xx-tiny" and rows["en"]["from"] == "spandep"
    (source / "config.moved").rename(source / "config.json")

    assert up_to_date(xx)  # make models installs nothing again
    assert runner.invoke(app, ["package-models", "--changed", "-o", str(tmp_path / "again")]).output == ""
    (source / "card.json").write_text("{}", encoding="utf-8")
    assert not up_to_date(xx) and runner.invoke(app, ["package-models", "xx", "--changed", "-o", str(tmp_path / "again")]).output

    shutil.rmtree(source)  # only the installed distribution has it now
    nlp = spandep.load("xx")
    assert nlp.spec.folder == xx.folder and len(nlp("A tiny model parses this.").sentences[0].words) == 6
    service = Service.load(["xx"], ServiceSettings())
    assert service.names.resolve("xx") == "xx" and service.models["xx"].spec.folder == xx.folder
    result = runner.invoke(app, ["package-models", "xx", "-o", str(tmp_path / "again")])
    assert result.exit_code == 3 and "source checkout" in result.output and result.output.count("\n") == 1

    sys.path.remove(str(site))  # uninstalled: not offered, and loading it names its distribution
    assert "xx" not in {m.name for m in shipped_models()}
    with pytest.raises(ModelError, match=r"'xx' names the shipped model xx \(UD_Xish-Tiny\).*install spandep-model-xx-tiny \(make models"):
        spandep.load("xx")


def test_a_language_whose_distribution_is_missing_names_it(tmp_path, monkeypatch):
    """The real catalogue without its folders, as in a core-only install: French names spandep-model-fr-sequoia."""
    shutil.copy(catalogue.CATALOGUE_FILE, tmp_path / "catalogue.json")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", tmp_path / "catalogue.json")
    monkeypatch.setattr(catalogue, "MODULE", "spandep_test_no_such_model_{code}")  # none installed here either
    assert shipped_models() == []
    with pytest.raises(ModelError, match="'fr' names French, whose default treebank is fr_sequoia.*install spandep-model-fr-sequoia"):
        spandep.load("fr")
    result = runner.invoke(app, ["parse", str(DEV), "--model", "cs_cltt"])
    assert result.exit_code == 3 and result.output.count("\n") == 1 and "install spandep-model-cs-cltt (make models" in result.output


def test_package_models_refuses_what_it_cannot_build(tmp_path):
    result = runner.invoke(app, ["package-models", "en", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "inside the core spandep wheel" in result.output and result.output.count("\n") == 1
    result = runner.invoke(app, ["package-models", "klingon", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "names no line of the catalogue" in result.output and not list(tmp_path.iterdir())
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    result = runner.invoke(app, ["package-models", "ru", "-o", str(tmp_path / "a-file" / "wheels")])
    assert result.exit_code == 4 and "cannot make the wheels' folder" in result.output and result.output.count("\n") == 1


def test_an_old_build_backend_is_one_line(tmp_path, monkeypatch):
    """A venv's own setuptools before 70.1 cannot write wheels without the `wheel` package: said before building."""
    from spandep.storage import packaging

    monkeypatch.setattr(packaging.metadata, "version", lambda name: "65.5.0")
    result = runner.invoke(app, ["package-models", "ru", "-o", str(tmp_path)])
    assert result.exit_code == 4 and result.output.count("\n") == 1
    assert "setuptools>=70.1 (found: 65.5.0): pip install 'setuptools>=70.1'" in result.output and not list(tmp_path.iterdir())
