"""A language's dictionary for the lemmas of unseen forms (models/heads/dictionary.py), with simplemma's English and
Russian word lists (installed with spandep, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spandep.models.heads.dictionary import Dictionary, checked
from spandep.models.heads.lemma import Lemmatizer

KEEP = '["keep", 0, "", 0, ""]'  # the script that gives the form itself


def test_a_setting_names_one_of_simplemmas_languages_and_a_mode() -> None:
    assert checked({"language": "ru", "mode": "prefer"}) == {"language": "ru", "mode": "prefer"}
    for bad, words in (({"language": "xx", "mode": "repair"}, "not one of simplemma's"), ({"language": "en", "mode": "always"}, "'repair' or 'prefer'"),
                       ("en", "a table of language and mode"), ({"language": "en"}, "a table of language and mode")):
        with pytest.raises(ValueError, match=words):
            checked(bad)
    with pytest.raises(ValueError, match="not one of simplemma's"):
        Lemmatizer(8, [KEEP], lexicon={}, dictionary={"language": "xx", "mode": "repair"})


def test_repair_replaces_only_a_lemma_that_is_no_word_of_an_unseen_form() -> None:
    repair = Dictionary({"language": "en", "mode": "repair"}, seen_forms={"went"}, seen_lemmas={"go", "ass"})
    assert repair.lemma("hott", "hottest", "ADJ") == "hot"  # the script's lemma is no word: the dictionary's
    assert repair.lemma("fle", "fled", "VERB") == "flee"
    assert repair.lemma("ass", "asses", "NOUN") == "ass"  # a training lemma: kept
    assert repair.lemma("bomb", "bombed", "VERB") == "bomb"  # a word of the dictionary: kept
    assert repair.lemma("wen", "went", "VERB") == "wen"  # a training form: its lexicon decided
    assert repair.lemma("Hott", "Hottest", "PROPN") == "Hott"  # proper nouns keep the treebank's lemma
    assert repair.lemma("xyzzies", "xyzzies", "NOUN") == "xyzzies"  # a form the dictionary lacks: kept


def test_prefer_gives_the_dictionarys_lemma_to_every_unseen_form_it_has() -> None:
    prefer = Dictionary({"language": "ru", "mode": "prefer"}, seen_forms=set(), seen_lemmas=set())
    assert prefer.lemma("столами", "столами", "NOUN") == "стол"
    assert prefer.lemma("Столам", "Столами", "NOUN") == "стол"
    assert prefer.lemma("Москвой", "Москвой", "PROPN") == "Москвой"
    assert prefer.lemma("абвгд", "абвгд", "NOUN") == "абвгд"


def test_the_head_applies_its_dictionary_after_its_lexicons_and_saves_the_setting() -> None:
    setting = {"language": "en", "mode": "repair"}
    head = Lemmatizer(8, [KEEP], lexicon={"VERB": {"saw": "see"}}, dictionary=setting)
    forms = [["saw", "fled", "Fled", "hottest"]]
    values = [["saw", "fle", "Fle", "hottest"]]  # the scripts' lemmas
    upos = {"upos": [["VERB", "VERB", "PROPN", "ADJ"]]}
    assert head.refine(values, forms, upos) == [["see", "flee", "Fle", "hottest"]]  # "hottest" is a word: kept
    assert head.export_config()["dictionary"] == setting
    assert "dictionary" not in Lemmatizer(8, [KEEP], lexicon={}).export_config()
    assert Lemmatizer(8, [KEEP], lexicon={"VERB": {"saw": "see"}}).refine(values, forms, upos) == [["see", "fle", "Fle", "hottest"]]


def test_the_script_writes_and_removes_a_folders_dictionary(tmp_path, monkeypatch, capsys) -> None:
    import shutil
    import sys

    from benchmarks.scripts import lemma_dictionary
    from spandep.storage.model_io import HEAD_TABLES, read_model_config

    for name in ("config.json", HEAD_TABLES):  # the config and the heads' tables stored apart
        shutil.copy(Path(__file__).parents[1] / "src/spandep/resources/default_model" / name, tmp_path / name)
    for argv, expected in ((["--language", "en", "--mode", "prefer"], {"language": "en", "mode": "prefer"}), (["--off"], None)):
        monkeypatch.setattr(sys, "argv", ["lemma_dictionary", str(tmp_path), *argv])
        lemma_dictionary.main()
        assert read_model_config(tmp_path)["model"]["heads"]["lemma"].get("dictionary") == expected
    monkeypatch.setattr(sys, "argv", ["lemma_dictionary", str(tmp_path), "--language", "xx"])
    with pytest.raises(SystemExit, match="not one of simplemma's"):
        lemma_dictionary.main()


def test_simplemmas_code_of_a_language() -> None:
    from spandep.models.heads.dictionary import language_of

    assert language_of("de") == "de" and language_of("nn") == "nn"
    assert language_of("hr") == language_of("sr") == "hbs"  # one list for Serbo-Croatian
    assert language_of("ja") is None and language_of(None) is None


def test_a_treebanks_own_dictionary_serves_a_parse_as_that_treebank_only() -> None:
    tables = {"lexicon": {"VERB": {"saw": "see"}}, "feats_lexicon": {}}
    head = Lemmatizer(8, [KEEP], treebank_lexicons={"en_ewt": tables, "en_gum": tables}, fallback="language",
                      treebank_dictionaries={"en_ewt": {"language": "en", "mode": "repair"}})
    forms, values, upos = [["saw", "fled"]], [["saw", "fle"]], {"upos": [["VERB", "VERB"]]}
    assert head.refine(values, forms, upos, treebank="en_ewt") == [["see", "flee"]]
    assert head.refine(values, forms, upos, treebank="en_gum") == [["see", "fle"]]  # none of its own, none of the head's
    assert head.export_config()["treebank_dictionaries"] == {"en_ewt": {"language": "en", "mode": "repair"}}
    assert head.dictionary_for("en_ewt", {"language": "en", "mode": "prefer"}).seen_forms == {"saw"}
    with pytest.raises(ValueError, match="not one of simplemma's"):
        Lemmatizer(8, [KEEP], treebank_dictionaries={"en_ewt": {"language": "xx", "mode": "repair"}})


def test_the_pool_script_writes_the_dictionaries_dev_chose(tmp_path) -> None:
    import json
    import shutil

    from benchmarks.scripts.pool_lexicons import write_dictionaries
    from spandep.storage.model_io import HEAD_TABLES, read_model_config

    for name in ("config.json", HEAD_TABLES):
        shutil.copy(Path(__file__).parents[1] / "src/spandep/resources/default_model" / name, tmp_path / name)
    rows = {"en_ewt": {"language": "en", "chosen": "repair"}, "en_gum": {"language": "en", "chosen": None}}
    (tmp_path / "choices.json").write_text(json.dumps({"treebanks": rows}), encoding="utf-8")
    write_dictionaries(tmp_path, tmp_path / "choices.json")
    assert read_model_config(tmp_path)["model"]["heads"]["lemma"]["treebank_dictionaries"] == {"en_ewt": {"language": "en", "mode": "repair"}}


def test_the_pool_dictionaries_table_marks_the_chosen_mode_and_shows_the_test_lemmas(tmp_path) -> None:
    import json

    from benchmarks.scripts.pool_lexicons import table

    row = {"language": "de", "words": 1000, "unseen_words": 200, "none": 90.0, "repair": 91.0, "prefer": 92.5,
           "unseen_none": 60.0, "unseen_repair": 65.0, "unseen_prefer": 72.5, "chosen": "prefer"}
    (tmp_path / "choices.json").write_text(json.dumps({"treebanks": {"de_gsd": row, "xx_none": {**row, "chosen": None}}}), encoding="utf-8")
    (tmp_path / "de_gsd__gold.json").write_text(json.dumps({"conll18": {"Lemmas": {"f1": 93.21}}}), encoding="utf-8")
    lines = table(tmp_path / "choices.json", tmp_path).splitlines()
    assert lines[2] == "| de_gsd | de | 1,000 (200) | 90.00 / 91.00 / **92.50** | 60.00 / 65.00 / 72.50 | prefer | 93.21 |"
    assert lines[3].startswith("| xx_none | de | 1,000 (200) | **90.00** / 91.00 / 92.50 |") and lines[3].endswith("| none | – |")
    assert lines[4] == "| macro mean (2) | | | 90.00 → **91.25** | | | |"
