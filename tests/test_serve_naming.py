"""The service's model names (``spandep.serve.naming``): a served model answers to UDPipe's names and to every name
``spandep.load`` takes for it (the catalogue code, the language table's codes and names), checked on catalogue lines
made here (no model is loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spandep.data.languages import LANGUAGES, treebank_language
from spandep.serve.naming import Names
from spandep.storage.catalogue import ShippedModel, find


def line(name: str, code: str, lang: str, treebank: str) -> ShippedModel:
    return ShippedModel(name, Path("/nonexistent") / name, lang, treebank, code=code)


DE = line("de", "de_gsd", "German", "UD_German-GSD")
FR = line("fr", "fr_sequoia", "French", "UD_French-Sequoia")
ZH = line("zh", "zh_gsd_v1", "Chinese (traditional)", "UD_Chinese-GSD r1.4")
EN, EN_ACCURATE = line("en", "en_ewt", "English", "UD_English-EWT"), line("en-accurate", "en_ewt", "English", "UD_English-EWT")


@pytest.mark.parametrize("requested", ["de", "deu", "ger", "german", "German", "Deutsch", "DE", "de_gsd", "DE_GSD", "german-gsd", "germ"])
def test_a_served_model_answers_to_every_name_load_takes_for_it(requested) -> None:
    names = Names({"de": DE, "fr": FR, "runs/x/model": None})
    assert names.resolve(requested) == "de"


def test_every_name_of_a_language_in_the_table_resolves_to_its_served_model() -> None:
    """Each language's codes and names (ISO 639-1, 639-3, 639-2/B, English and other names), as spandep.load finds
    them, among three served models: the served one of that language, none for the others."""
    served = {"de": DE, "fr": FR, "zh": ZH}
    names = Names(served)
    for lang in LANGUAGES:
        expected = next((n for n, m in served.items() if treebank_language(m.code) == lang), None)
        for requested in (lang.code, lang.iso3, lang.name, *lang.aliases, lang.name.upper()):
            assert names.resolve(requested) == expected, (requested, lang.code)


def test_a_model_served_under_a_language_name_answers_to_its_other_names() -> None:
    """``spandep serve --model german`` serves the de line under the name "german"; "deu" and "de_gsd" name it too."""
    names = Names({"german": find("german", {"de": DE, "fr": FR})})
    assert [names.resolve(n) for n in ("german", "deu", "de", "de_gsd", "french")] == ["german"] * 4 + [None]


def test_the_first_served_model_takes_a_shared_name_and_own_names_win() -> None:
    names = Names({"en-accurate": EN_ACCURATE, "en": EN})
    assert names.resolve("english") == "en-accurate" and names.resolve("eng") == "en-accurate"  # the first served
    assert names.resolve("en") == "en"  # a model's own name wins over the other's alias


def test_a_folder_answers_to_its_own_name_only() -> None:
    names = Names({"runs/x/model": None, "fr": FR})
    assert names.resolve("runs/x/model") == "runs/x/model" and names.resolve("french") == "fr"
    assert names.resolve("german") is None and names.resolve("") is None and names.resolve("xx") is None
