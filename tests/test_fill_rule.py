"""The fill rule through every front end, with the shipped model (it has UPOS, XPOS, FEATS and lemma heads): a
column the input gives for a sentence (not ``_`` for at least one word; FEATS also where UPOS is) comes back as
given, ``_`` included; a column that is ``_`` for every word is the model's. The rule itself is tested in
tests/test_heads.py; here, that the CLI, the API and spaCy all apply it (the service: tests/test_serve.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import spandep
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence

# sentence 1 gives UPOS for one word only (so its UPOS column, and with it FEATS, is the user's); sentence 2 gives
# nothing but forms (every column the model's); LEMMA and XPOS are _ everywhere
INPUT = (
    "# sent_id = 1\n"
    "1\tDogs\t_\tNOUN\t_\t_\t_\t_\t_\t_\n"
    "2\tbark\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\tloudly\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
    "# sent_id = 2\n"
    "1\tCats\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tsleep\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
)


def check(sentences: list[Sentence]) -> None:
    given, blank = sentences
    assert [w.upos for w in given.words] == ["NOUN", "_", "_"]  # the user's column, _ included
    assert [w.feats for w in given.words] == ["_", "_", "_"]  # read with the user's UPOS: no features
    assert all(w.lemma != "_" and w.xpos != "_" for w in given.words)  # blank for every word: filled
    assert all(w.upos != "_" and w.lemma != "_" and w.xpos != "_" for w in blank.words)
    assert any(w.feats != "_" for w in blank.words)  # "Cats": Number=Plur


@pytest.fixture(scope="module")
def conllu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fill") / "in.conllu"
    path.write_text(INPUT, encoding="utf-8")
    return path


@pytest.mark.slow
def test_cli(conllu: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    result = CliRunner().invoke(app, ["parse", str(conllu), "-o", str(out), "--model", "en"])
    assert result.exit_code == 0, result.output
    check(list(read_conllu(out)))


@pytest.mark.slow
def test_api(conllu: Path) -> None:
    check([s.data for s in spandep.load("en").parse_file(conllu)])


@pytest.mark.slow
def test_spacy(conllu: Path) -> None:
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc

    nlp = spacy.blank("en")
    nlp.add_pipe("spandep", config={"model": "en"})
    doc = Doc(nlp.vocab, words=["Dogs", "bark", "loudly", "Cats", "sleep"], sent_starts=[True, False, False, True, False])
    doc[0].pos_ = "NOUN"
    doc = nlp(doc)
    assert [t.pos_ for t in doc[:3]] == ["NOUN", "", ""] and str(doc[0].morph) == ""
    assert all(t.pos_ and t.lemma_ for t in doc[3:]) and str(doc[3].morph) == "Number=Plur"
