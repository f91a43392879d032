"""Model names (spandep.data.languages, spandep.storage.catalogue): a model loads by its name, its treebank, its
language's ISO 639-1 or 639-3 code or English name; a language or treebank without an installed model is one line
naming the package to install; the table covers every treebank of the data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DEV
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.languages import LANGUAGES, language, normalized, treebank_language, treebanks
from spandep.errors import ModelError
from spandep.storage import catalogue
from spandep.storage.catalogue import default_model, find, missing_model, model_choice, read_catalogue

runner = CliRunner()
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_the_table_has_one_entry_per_name():
    names = [n for lang in LANGUAGES for n in lang.names()]
    assert len(names) == len(set(names))
    assert all(len(lang.code) == 2 and len(lang.iso3) == 3 for lang in LANGUAGES)
    assert len({lang.code for lang in LANGUAGES}) >= 55
    assert all(treebank_language(lang.treebank) in (lang, None) or lang.code == "no" for lang in LANGUAGES)


@pytest.mark.parametrize(("name", "code"), [
    ("de", "de"), ("deu", "de"), ("ger", "de"), ("german", "de"), ("GERMAN", "de"), ("Norwegian Bokmål", "nb"),
    ("norwegian-bokmal", "nb"), ("nynorsk", "nn"), ("Scottish Gaelic", "gd"), ("farsi", "fa"), ("zho", "zh"),
])
def test_languages_by_code_and_name(name, code):
    assert language(name).code == code


def test_treebanks_know_their_language():
    assert treebank_language("de_gsd").name == "German" and treebank_language("DE_GSD").code == "de"
    assert treebank_language("no_bokmaal").code == "nb" and treebank_language("no_nynorsklia").code == "nn"
    assert treebank_language("xx_nothing") is None and language("Klingon") is None
    assert normalized("Norwegian Bokmål") == "norwegianbokmal"


def test_shipped_models_load_by_code_language_and_treebank(monkeypatch):
    monkeypatch.delenv("SPANDEP_MODEL", raising=False)
    _, models = read_catalogue()
    for name in ("fr", "fra", "french", "French", "fr_sequoia", "FR_SEQUOIA"):
        assert find(name, models).name == "fr"
    assert find("en_ewt", models).name == "en" and find("eng", models).name == "en"  # the first line of a treebank
    assert find("nno", models).name == find("nynorsk", models).name == "no"
    assert model_choice("english").folder == default_model().folder


def test_a_missing_language_names_its_package(tmp_path, monkeypatch):
    """The distribution to install: the one of the line that serves the language (the multilingual model's for
    German, here a folder not installed), else, for a treebank without a line, the treebank's own."""
    data = json.loads(catalogue.CATALOGUE_FILE.read_text(encoding="utf-8"))
    models = {n: line for n, line in data["models"].items() if line.get("code") not in ("de_gsd", "es_gsd")}
    models["de"] = {"code": "de_gsd", "folder": "xx_absent", "language": "German", "treebank": "UD_German-GSD", "model_treebank": "de_gsd"}
    (tmp_path / "catalogue.json").write_text(json.dumps({**data, "models": models}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", tmp_path / "catalogue.json")
    assert missing_model("deu") == (
        "'deu' names German, whose default treebank is de_gsd, and no model of it is installed: install "
        "spandep-model-xx-absent (make models builds and installs the language models); `spandep models` lists the installed ones"
    )
    assert "the treebank es_gsd" in missing_model("es_gsd") and "spandep-model-es-gsd" in missing_model("es_gsd")
    assert missing_model("en_nothing") is None and missing_model("blah") is None
    with pytest.raises(ModelError, match="install spandep-model-xx-absent"):
        model_choice("german")
    result = runner.invoke(app, ["parse", str(DEV), "--model", "de"])
    assert result.exit_code == 3 and result.output.count("\n") == 1 and "spandep-model-xx-absent" in result.output


def test_a_language_loads_its_default_treebank_else_its_first(tmp_path, monkeypatch):
    folder = default_model().folder
    lines = {
        "pt-social": {"folder": str(folder), "code": "pt_dantestocks", "language": "Portuguese", "treebank": "UD_Portuguese-DANTEStocks"},
        "pt": {"folder": str(folder), "code": "pt_bosque", "language": "Portuguese", "treebank": "UD_Portuguese-Bosque"},
        "ko-essays": {"folder": str(folder), "code": "ko_ksl", "language": "Korean", "treebank": "UD_Korean-KSL"},
    }
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"default": "pt", "models": lines}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", path)
    _, models = read_catalogue()
    assert find("portuguese", models).name == "pt" and find("pt_dantestocks", models).name == "pt-social"
    assert find("ko", models).name == "ko-essays"  # no ko_gsd model: the language's first one


@pytest.mark.skipif(not DATA.is_dir(), reason="the treebanks of ../shared/data are not on this machine")
def test_every_treebank_of_the_data_is_in_the_table():
    folders = {p.name for p in DATA.iterdir() if p.is_dir() and (p.name.count("_") and p.name != "ptb_nltk_sample")}
    folders |= {p.name for p in (DATA / "devtest_only").iterdir() if p.is_dir()}
    folders -= {"devtest_only", "ud22_devtest_only"}
    assert folders == set(treebanks())
