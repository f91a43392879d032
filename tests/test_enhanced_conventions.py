"""Enhanced labels by each language's conventions (spandep.enhancement.CONVENTIONS): Czech writes the case marker's
lemma and the dependent's case, keeps basic subtypes and leaves conj unsubtyped; the pipeline picks them by the
model's language. Sentences written for the rules, in the style of Czech CLTT."""

from __future__ import annotations

from spandep.enhancement import CONVENTIONS, ENGLISH, RULES, enhance
from spandep.storage.catalogue import model_language
from tests.test_enhanced import sentence

CZECH = CONVENTIONS["cs"]


def czech_deps(*rows: str) -> list[str]:
    return [w.deps for w in enhance(sentence(*rows), RULES, CZECH).words]


def test_czech_labels_take_the_markers_lemma_and_the_case() -> None:
    got = czech_deps(
        "Zákon zákon NOUN Case=Nom 2 nsubj", "platí platit VERB _ 0 root", "ve v ADP Case=Loc 4 case",
        "státě stát NOUN Case=Loc 2 obl", "republiky republika NOUN Case=Gen 4 nmod",
        "podle podle ADP Case=Gen 7 case", "práva právo NOUN Case=Gen 2 obl:arg",
    )
    assert got[3] == "2:obl:v:loc"  # the lemma v, not the form ve, then the case
    assert got[4] == "4:nmod:gen"  # no marker: the case alone
    assert got[6] == "2:obl:arg:podle:gen"  # the basic subtype kept
    assert got[0] == "2:nsubj"


def test_czech_conjuncts_are_not_subtyped_and_english_ones_are() -> None:
    rows = ("Psi pes NOUN Case=Nom 0 root", "a a CCONJ _ 3 cc", "kočky kočka NOUN Case=Nom 1 conj")
    assert czech_deps(*rows)[2] == "1:conj"
    assert [w.deps for w in enhance(sentence(*rows), RULES, ENGLISH).words][2] == "1:conj:a"


def test_the_english_conventions_are_the_default_and_write_no_case() -> None:
    got = [w.deps for w in enhance(sentence("with with ADP _ 2 case", "him he PRON Case=Acc 3 obl", "came come VERB _ 0 root")).words]
    assert got[1] == "3:obl:with"  # EWT: no ":acc" though the pronoun has a case


def test_a_models_language_comes_from_the_catalogue_or_its_treebank() -> None:
    from spandep.storage.catalogue import shipped_models

    folders = {m.name: m.folder for m in shipped_models()}
    assert model_language(folders["cs"]) == "cs"
    assert model_language(folders["en-accurate"]) == "en"
    assert model_language(None, "cs_cltt") == "cs"
    assert model_language(None) is None


def test_every_language_leaves_out_only_rules_that_exist() -> None:
    names = {rule.__name__ for rule in RULES}
    assert all(set(c.without) <= names for c in CONVENTIONS.values())
    assert set(CONVENTIONS["et"].without) == names  # Estonian: the basic tree (the copy) scores best on dev


def test_a_rule_left_out_is_not_applied() -> None:
    rows = ("Psi pes NOUN Case=Nom 0 root", "a a CCONJ _ 3 cc", "kočky kočka NOUN Case=Nom 1 conj")
    assert [w.deps for w in enhance(sentence(*rows), RULES, CONVENTIONS["et"]).words] == ["0:root", "3:cc", "1:conj"]


def test_each_languages_conventions_are_the_ones_its_dev_chose() -> None:
    import json
    from pathlib import Path

    from benchmarks.scripts.enhanced_conventions import CANDIDATES

    result = json.loads((Path(__file__).parents[1] / "benchmarks/results/enhanced/conventions.json").read_text())
    assert result["languages"], "no language chosen"
    for code, name in result["languages"].items():
        assert CONVENTIONS[code] == CANDIDATES[name], code
