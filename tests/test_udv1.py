"""UD v1 → v2 (spandep.data.udv1) on sentences cut from the v1 treebanks of the data (tests/fixtures/README.md): each
v1 relation, UPOS and feature named in the table becomes its v2 one, the rest of the sentence is kept, the trees stay
trees, and a training config reads a treebank flagged ``ud_version = 1`` with v2 relations."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.scripts.annotation_agreement import agreement

from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.trees import tree_problems
from spandep.data.udv1 import RELATIONS, named_v1, to_v2
from spandep.errors import InputFormatError
from spandep.training.config import load_config
from spandep.training.trainer import read_treebank

FIXTURES = Path(__file__).parent / "fixtures" / "udv1"
V1_ONLY = {"dobj", "nsubjpass", "csubjpass", "auxpass", "neg", "name", "mwe", "foreign", "remnant"}


def converted(treebank: str) -> list[tuple[object, object]]:
    """``(v1 sentence, v2 sentence)`` of each sentence of a fixture."""
    return [(s, to_v2(s)) for s in read_conllu(FIXTURES / f"{treebank}.conllu")]


def relation(sentence, form: str) -> tuple[str, str, int | None]:
    word = next(w for w in sentence.words if w.form == form)
    return word.deprel, word.upos, word.head


@pytest.mark.parametrize("treebank", ["eu_bdt_v1", "kk_ktb_v1", "nl_lassysmall_v1", "zh_gsd_v1"])
def test_no_v1_relation_is_left_and_the_rest_is_kept(treebank):
    for v1, v2 in converted(treebank):
        assert not {d.partition(":")[0] for d in v2.deprels} & V1_ONLY and not tree_problems(v2.heads)
        assert v2.comments == v1.comments and v2.extra_lines == v1.extra_lines
        assert [(w.form, w.lemma, w.xpos, w.deps, w.misc) for w in v2.words] == [(w.form, w.lemma, w.xpos, w.deps, w.misc) for w in v1.words]
        assert "CONJ" not in v2.upos


def test_renamed_relations_and_nmod_by_its_head():
    (_, dutch), (_, name) = converted("nl_lassysmall_v1")
    assert relation(dutch, "eerste")[0] == "obj" and relation(dutch, "wezen")[0] == "fixed"
    assert relation(dutch, "niet")[:2] == ("advmod", "ADV")  # neg of an adverb
    assert relation(dutch, "er")[0] == "obl"  # nmod of the verb ging
    assert relation(name, "Frimout")[0] == "flat:name"
    (_, passive), (_, foreign) = converted("zh_gsd_v1")
    assert relation(passive, "譯名")[0] == "nsubj:pass" and relation(passive, "被")[0] == "aux:pass"
    assert relation(foreign, "armandii")[0] == "flat:foreign"
    assert relation(foreign, "種")[0] == "nmod"  # nmod of a noun stays


def test_neg_by_upos_features_renamed_and_sorted():
    [(_, basque)] = converted("eu_bdt_v1")
    assert relation(basque, "ez")[:2] == ("advmod", "PART") and relation(basque, "Eta")[1] == "CCONJ"
    assert next(w for w in basque.words if w.form == "ez").feats == "Polarity=Neg"
    assert relation(basque, "gutxiagorako")[0] == "obl"  # nmod of the verb da
    [sentence] = [s for s, _ in converted("eu_bdt_v1")]
    words = [replace(w, feats="Negative=Neg|Aspect=Pro|VerbForm=Trans", upos="DET", deprel="neg") if w.form == "ez" else w for w in sentence.words]
    word = next(w for w in to_v2(replace(sentence, words=words)).words if w.form == "ez")
    assert (word.feats, word.deprel) == ("Aspect=Prosp|Polarity=Neg|VerbForm=Conv", "det")


def test_remnants_become_a_conjunct_and_its_orphans():
    (v1, v2), (v1_root, v2_root) = converted("kk_ktb_v1")  # test #ID: 167, train #ID: 318
    # remnants of солтүстігіне (its correlate оңтүстігіне: obl of ете) and Ресей (Ұлыбритания: nsubj of ете)
    assert relation(v1, "Ресей")[0] == "remnant" and relation(v2, "Ресей") == ("conj", "PROPN", 8)
    assert relation(v2, "солтүстігіне") == ("orphan", "NOUN", 3)
    # a remnant of the root's own correlate cannot head a conjunct of it: only relabelled, its head kept
    assert relation(v1_root, "жылы")[0] == "remnant" and relation(v2_root, "жылы") == ("orphan", "ADJ", 4)


def test_every_relation_of_the_table_is_a_v1_one_and_the_input_is_unchanged():
    assert set(RELATIONS) < V1_ONLY
    v1, _ = converted("nl_lassysmall_v1")[0]
    before = [w.deprel for w in v1.words]
    to_v2(v1)
    assert [w.deprel for w in v1.words] == before


def test_v1_names():
    assert all(named_v1(n) for n in ("zh_gsd_v1", "ar_padt_v1", "hi_hdtb_v1_prerelease", "eu_bdt_v1"))
    assert not any(named_v1(n) for n in ("zh_gsd", "sv1_x", "en_ewt", "v10_tb"))


def test_a_training_config_reads_a_v1_treebank_with_v2_relations(tmp_path, monkeypatch):
    path = FIXTURES / "nl_lassysmall_v1.conllu"
    assert "dobj" in read_treebank(str(path), "conllu")[0].deprels
    assert "obj" in read_treebank(str(path), "conllu", 0, 1)[0].deprels
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "c.toml"
    for value, ok in (("1", True), ("3", False)):
        config.write_text(f'[data]\ntrain = "{path}"\ndev = "{path}"\nud_version = {value}\n[encoder]\ntype = "bilstm"\n[training]\noutput = "out"\n')
        if ok:
            assert load_config(config)["data"]["ud_version"] == 1
        else:
            with pytest.raises(InputFormatError, match=r"c.toml:4: \[data\] ud_version must be an int in \[1, 2\], not 3"):
                load_config(config)
    table = f'{{ name = "a", train = "{path}", dev = "{path}", ud_version = 1 }}, {{ name = "b", train = "{path}", dev = "{path}" }}'
    config.write_text(f'[data]\ntreebanks = [{table}]\n[encoder]\ntype = "bilstm"\n[training]\noutput = "out"\n')
    assert [t["ud_version"] for t in load_config(config)["data"]["treebanks"]] == [1, 2]


def test_annotation_agreement_scores_the_converted_file_officially(tmp_path):
    """benchmarks/scripts/annotation_agreement.py: a v1 file against its own v2 conversion agrees fully; against the
    file as released (v1 labels) LAS falls by the relations the map renames, UAS stays; forms differing in punctuation
    alone are aligned; a pair of sentences with other word counts is left out."""
    v1 = FIXTURES / "zh_gsd_v1.conllu"
    sentences = list(read_conllu(v1))
    reference = [to_v2(s) for s in sentences]
    reference[0] = replace(reference[0], words=[replace(w, form=w.form.replace(",", "，")) for w in reference[0].words])
    write_conllu(reference, tmp_path / "v2.conllu")
    shorter = sentences[:]
    shorter[-1] = replace(shorter[-1], words=[replace(shorter[-1].words[0], head=0, deprel="root")], extra_lines=[])
    write_conllu(shorter, tmp_path / "v1.conllu")

    same = agreement(tmp_path / "v2.conllu", tmp_path / "v1.conllu", 1)
    assert (same["UAS"], same["LAS"]) == (100.0, 100.0)
    assert (same["sentences_kept"], same["sentences_left_out"]) == (len(sentences) - 1, 1)
    renamed = sum(w.deprel.split(":")[0] != v.deprel.split(":")[0] for s, t in zip(sentences[:-1], reference[:-1]) for w, v in zip(s.words, t.words))
    raw = agreement(tmp_path / "v2.conllu", tmp_path / "v1.conllu", 2)
    assert renamed and raw["UAS"] == 100.0 and raw["LAS"] < 100.0
