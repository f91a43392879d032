"""The CoNLL 2018 end-to-end scorer (spandep.evaluation.conll18) against the task's official scorer (``udtools``)
on treebank excerpts with a retokenised system file and on random documents, its error on differing texts, and
``spandep evaluate`` on such pairs."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from udtools import udeval

from conll18_pairs import excerpt, from_sentences, random_pair, system_doc, to_conllu
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.errors import InputFormatError
from spandep.evaluation.conll18 import AlignedScore, Conll18Report, evaluate_conll18
from spandep.evaluation.provenance import stamp

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # ../shared/data beside the repository
if not DATA.is_dir():  # next to the repository, as the data README says (../shared/data)
    DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

EXCERPTS = {  # treebank file, first sentence, sentence count: each excerpt has multiword tokens
    "fr_sequoia": (DATA / "fr_sequoia" / "fr_sequoia-ud-dev.conllu", 0, 30),
    "en_ewt": (DATA / "en_ewt" / "en_ewt-ud-dev.conllu", 40, 30),  # sentence 58 has an empty node
}


def official(gold: str, system: str) -> dict:
    """The official scorer's results on two CoNLL-U texts."""
    return udeval.evaluate(
        udeval.load_conllu(io.StringIO(gold), "gold", {}), udeval.load_conllu(io.StringIO(system), "system", {})
    )


def ours(gold: str, system: str, tmp_path: Path) -> Conll18Report:
    (tmp_path / "gold.conllu").write_text(gold, encoding="utf-8")
    (tmp_path / "system.conllu").write_text(system, encoding="utf-8")
    return evaluate_conll18(
        list(read_conllu(tmp_path / "gold.conllu")), list(read_conllu(tmp_path / "system.conllu")),
        gold_source="gold", system_source="system",
    )


def assert_agree(report: Conll18Report, reference: dict) -> None:
    """Every metric's counts and percentages agree with the official scorer's (within 1e-9)."""
    for name, score in report.metrics():
        if name == "LAS full labels":
            continue
        ref = reference[name]
        assert (score.correct, score.gold, score.system) == (ref.correct, ref.gold_total, ref.system_total), name
        for ours_value, ref_value in ((score.precision, ref.precision), (score.recall, ref.recall), (score.f1, ref.f1)):
            assert ours_value == pytest.approx(100 * ref_value, abs=1e-9), name
        if isinstance(score, AlignedScore):
            assert score.aligned == ref.aligned_total, name
            assert score.aligned_accuracy == pytest.approx(100 * ref.aligned_accuracy, abs=1e-9), name
        else:
            assert ref.aligned_accuracy is None, name


@pytest.mark.parametrize("treebank", sorted(EXCERPTS))
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_the_official_scorer_on_retokenised_treebank_excerpts(tmp_path, treebank, seed):
    path, first, count = EXCERPTS[treebank]
    gold, sentences = excerpt(str(path), first, count)
    ids = [line.split("\t")[0] for s in sentences for _, line in s.extra_lines]
    assert len(sentences) == count and any("-" in i for i in ids)  # multiword tokens are in it
    assert treebank != "en_ewt" or any("." in i for i in ids)  # and an empty node
    system = to_conllu(system_doc(from_sentences(sentences), random.Random(seed)), random.Random(seed))
    report = ours(gold, system, tmp_path)
    assert_agree(report, official(gold, system))
    # the system file differs where the test means it to: tokens, words, sentences, trees and tags
    for score in (report.tokens, report.words, report.sentences, report.las, report.upos, report.mlas):
        assert 30 < score.f1 < 100
    assert report.las_full_labels.correct < report.las.correct


def test_same_file_scores_everything_right(tmp_path):
    gold, sentences = excerpt(str(EXCERPTS["fr_sequoia"][0]), 0, 30)
    report = ours(gold, gold, tmp_path)
    words = sum(len(s.words) for s in sentences)
    assert report.words.correct == report.las_full_labels.correct == words
    assert all(score.f1 == 100.0 for _, score in report.metrics())
    assert_agree(report, official(gold, gold))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False))
def test_agrees_with_the_official_scorer_on_random_documents(tmp_path, rng):
    gold, system = random_pair(rng)
    assert_agree(ours(gold, system, tmp_path), official(gold, system))


def word(i: int, form: str, head: int, deprel: str, upos: str = "NOUN") -> str:
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_"


GOLD = "\n".join([  # "Au bord": "Au" is "à le"; heads: bord <- root
    "1-2\tAu\t_\t_\t_\t_\t_\t_\t_\t_", word(1, "à", 4, "case", "ADP"), word(2, "le", 4, "det", "DET"),
    word(3, "grand", 4, "amod"), word(4, "bord", 0, "root"), word(5, ".", 4, "punct", "PUNCT"), "", "",
])


def test_multiword_tokens_align_by_their_word_forms(tmp_path):
    """Words of "Au" align by their lowercased forms whatever the tokens; a merged token aligns nothing."""
    system = "\n".join([
        "1-2\tAu\t_\t_\t_\t_\t_\t_\t_\t_", word(1, "À", 4, "case", "ADP"), word(2, "la", 4, "det", "DET"),
        word(3, "grandbord", 0, "root"), word(4, ".", 3, "punct:x", "PUNCT"), "", "",
    ])
    report = ours(GOLD, system, tmp_path)
    assert (report.tokens.correct, report.tokens.gold, report.tokens.system) == (2, 4, 3)  # "Au" and "."
    assert (report.words.correct, report.words.gold, report.words.system) == (2, 5, 4)  # "à" and "."
    assert report.uas.correct == 0  # "à" and "." attach to "bord", which is not aligned
    assert report.sentences.f1 == 100.0
    assert_agree(report, official(GOLD, system))


def test_las_strips_subtypes_and_las_full_labels_does_not(tmp_path):
    system = GOLD.replace("\tcase\t", "\tcase:x\t").replace("\tamod\t", "\tnmod\t").replace("\tDET\t", "\tPRON\t")
    report = ours(GOLD, system, tmp_path)
    assert (report.uas.correct, report.las.correct, report.las_full_labels.correct) == (5, 4, 3)
    assert (report.clas.correct, report.clas.gold) == (1, 2)  # "bord"; "grand" has the wrong label
    assert report.mlas.correct == 0  # "bord"'s function-word child "le" has another UPOS
    assert_agree(report, official(GOLD, system))


def test_differing_characters_name_the_line_in_both_files(tmp_path):
    system = GOLD.replace("grand", "grands")
    with pytest.raises(InputFormatError) as err:
        ours(GOLD, system.replace("1-2\tAu", "# sent_id = 1\n1-2\tAu"), tmp_path)
    assert err.value.source == "system" and err.value.line == 5  # the comment moved "grands" one line down
    assert "character 8, at gold:5 in the gold file" in err.value.reason  # "Au" "grand" "bord": the "b" of "bord"
    assert "'bord.'" in err.value.reason and "'sbord.'" in err.value.reason
    with pytest.raises(InputFormatError, match="character 12"):  # the system text is a prefix of the gold text
        ours(GOLD, GOLD.replace(word(5, ".", 4, "punct", "PUNCT") + "\n", ""), tmp_path)


def test_gold_heads_must_form_a_tree(tmp_path):
    with pytest.raises(InputFormatError, match="gold heads do not form a tree"):
        ours(GOLD.replace("\t4\tcase", "\t0\tcase"), GOLD, tmp_path)


# ------------------------------------------------------------------------------------------ command line


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()


def _files(tmp_path: Path, gold: str, system: str) -> tuple[str, str]:
    (tmp_path / "g.conllu").write_text(gold, encoding="utf-8")
    (tmp_path / "s.conllu").write_text(system, encoding="utf-8")
    return str(tmp_path / "g.conllu"), str(tmp_path / "s.conllu")


def test_cli_prints_both_reports_only_for_the_same_words(tmp_path):
    g, s = _files(tmp_path, GOLD, GOLD.replace("\tamod\t", "\tnmod\t"))
    result = _runner().invoke(app, ["evaluate", g, s])
    assert result.exit_code == 0, result.output
    assert "CoNLL 2018" in result.stdout and "LAS (no punct)" in result.stdout
    result = _runner().invoke(app, ["evaluate", g, s, "--json"])
    data = json.loads(result.stdout)
    assert data["conll18"]["LAS"]["f1"] == pytest.approx(80.0) and data["uas"] == pytest.approx(100.0)

    gold, sentences = excerpt(str(EXCERPTS["en_ewt"][0]), 40, 30)
    system = to_conllu(system_doc(from_sentences(sentences), random.Random(0)), random.Random(0))
    g, s = _files(tmp_path, gold, system)
    result = _runner().invoke(app, ["evaluate", g, s])
    assert result.exit_code == 0, result.output
    assert "CoNLL 2018" in result.stdout and "LAS (no punct)" not in result.stdout
    result = _runner().invoke(app, ["evaluate", g, s, "--json"])
    data = json.loads(result.stdout)
    reference = official(gold, system)
    assert set(data) == {"conll18", "gold_ud_version", *stamp({}, "", "")}  # the stamp, no same-words fields
    assert data["conll18"]["MLAS"]["f1"] == pytest.approx(100 * reference["MLAS"].f1, abs=1e-9)
    upos_accuracy = 100 * reference["UPOS"].aligned_accuracy
    assert data["conll18"]["UPOS"]["aligned_accuracy"] == pytest.approx(upos_accuracy, abs=1e-9)


def test_cli_differing_characters_is_one_line_and_exit_2(tmp_path):
    g, s = _files(tmp_path, GOLD, GOLD.replace("grand", "great"))
    for options in ([], ["--json"]):
        result = _runner().invoke(app, ["evaluate", g, s, *options])
        assert result.exit_code == 2
        assert result.stdout == "" and "Traceback" not in result.stderr
        assert result.stderr.count("\n") == 1
        assert f"{s}:4:" in result.stderr and f"{g}:4" in result.stderr
