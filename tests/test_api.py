"""The Python API (``spandep.load``) on tiny models: text, tokens, files, streams, options and input errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import DEV

import spandep
from spandep.api import Doc, Pipeline
from spandep.options import InferenceOptions
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_projective, is_valid_tree
from spandep.errors import InputFormatError, ModelError


@pytest.fixture(scope="module")
def nlp(tiny_models) -> Pipeline:
    return spandep.load(tiny_models["biaffine"])


@pytest.fixture(scope="module")
def span_nlp(tiny_models) -> Pipeline:
    return spandep.load(tiny_models["span"])


def test_import_is_cheap_and_load_is_lazy():
    code = "import spandep, sys; print('torch' in sys.modules, spandep.load.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "spandep.api"]
    with pytest.raises(AttributeError):
        spandep.nothing  # noqa: B018


def test_raw_text(nlp):
    doc = nlp("The dog barked. It ran away, fast!\n\nA new paragraph.")
    assert isinstance(doc, Doc) and len(doc) == 3
    assert [w.text for w in doc[1]] == ["It", "ran", "away", ",", "fast", "!"]
    assert all(is_valid_tree(s.data.heads) for s in doc)
    assert len(doc[1:]) == 2 and isinstance(doc[1:], Doc) and doc[1:][0].text == "It ran away, fast!"
    records = doc.to_json()
    assert json.loads(json.dumps(records)) == records
    assert records[1]["text"] == "It ran away, fast!"
    assert records[1]["tokens"] == doc[1].data.forms and records[1]["heads"] == [w.head_id for w in doc[1]]
    assert records[1]["deprels"] == [w.deprel for w in doc[1]] and records[1]["upos"] == [None] * 6
    assert "id" not in records[1]
    assert nlp("").sentences == [] and nlp("  \n ").sentences == []


def test_to_conllu_reads_back(nlp, tmp_path):
    doc = nlp("I saw her. She saw me.")
    path = tmp_path / "out.conllu"
    path.write_text(doc.to_conllu())
    assert [(s.forms, s.heads, s.deprels) for s in read_conllu(path)] == [(s.forms, s.heads, s.deprels) for s in doc.data]


def test_parse_tokens_matches_raw_text(nlp):
    doc = nlp.parse_tokens([["I", "saw", "her", "."], ("She", "ran")])
    assert [s.data.forms for s in doc] == [["I", "saw", "her", "."], ["She", "ran"]]
    assert doc[0].data.heads == nlp("I saw her.")[0].data.heads
    assert all(is_valid_tree(s.data.heads) for s in doc)
    assert doc.text == "I saw her .\nShe ran" and doc[0][0].start_char is None
    assert len(nlp.parse_tokens([])) == 0


@pytest.mark.parametrize(
    ("sentences", "error", "message"),
    [
        (["I", "saw", "her"], ValueError, "wrap one sentence in a list"),
        ("I saw her", TypeError, "list of sentences"),
        ([["I", "saw"], []], ValueError, "sentence 1: a sentence needs at least one token"),
        ([["I", ""]], ValueError, "sentence 0, token 1: empty FORM"),
        ([["I", " "]], ValueError, "sentence 0, token 1: FORM is whitespace only"),
        ([["I", "a\x00b"]], ValueError, "sentence 0, token 1: control character U+0000"),
        ([["I", 3]], TypeError, "sentence 0, token 1: expected a str, got int"),
        ([["ok"], "I saw her"], TypeError, "sentence 1: expected a list of token strings, got str"),
    ],
)
def test_bad_tokens_name_the_problem(nlp, sentences, error, message):
    with pytest.raises(error, match=re.escape(message)):
        nlp.parse_tokens(sentences)


def test_bad_text(nlp):
    with pytest.raises(TypeError, match="use parse_tokens"):
        nlp(["I", "saw", "her"])
    with pytest.raises(ValueError, match="control character"):
        nlp("A bell \x07 rang.")


def test_parse_file_every_format(nlp, tmp_path):
    doc = nlp.parse_file(DEV)
    gold = list(read_conllu(DEV))
    assert len(doc) == len(gold)
    for g, p in zip(gold, doc.data):
        assert g.comments == p.comments and g.extra_lines == p.extra_lines
        assert [(w.form, w.lemma, w.upos, w.misc) for w in g.words] == [(w.form, w.lemma, w.upos, w.misc) for w in p.words]
        assert is_valid_tree(p.heads)
    assert doc.to_json()[0]["id"] == gold[0].comment("sent_id")
    tokens = tmp_path / "t.txt"
    tokens.write_text("I saw her .\n\nShe ran\n")
    assert [s.data.forms for s in nlp.parse_file(tokens, "tokens")] == [["I", "saw", "her", "."], ["She", "ran"]]
    text = tmp_path / "raw.txt"
    text.write_text("I saw her.\nShe ran.\n")
    raw = nlp.parse_file(text, input_format="text")
    assert len(raw) == 2 and raw.text == "I saw her.\nShe ran.\n" and (raw[1][0].start_char, raw[1].text) == (11, "She ran.")
    with pytest.raises(ValueError, match="unknown input format 'xml'"):
        nlp.parse_file(text, "xml")
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tword\t_\n\n")
    with pytest.raises(InputFormatError, match="bad.conllu:1: expected 10"):
        nlp.parse_file(bad)
    assert issubclass(InputFormatError, ValueError)


def test_stream_keeps_order_one_doc_per_item(nlp):
    items = ["Dogs bark. Cats purr.", "", ["I", "saw", "her"], *read_conllu(DEV), "   ", "Last one."]
    docs = list(nlp.stream(iter(items)))
    assert [len(d) for d in docs] == [2, 0, 1, *[1] * (len(items) - 5), 0, 1]
    assert docs[2][0].data.heads == nlp.parse_tokens([["I", "saw", "her"]])[0].data.heads
    assert [d[0].data.forms for d in docs[3:-2]] == [s.forms for s in read_conllu(DEV)]
    assert list(nlp.stream([])) == []
    assert [len(d) for d in nlp.stream(["", " "])] == [0, 0]
    with pytest.raises(TypeError, match="item 1: expected a list of token strings, got int"):
        list(nlp.stream(["fine", 7]))
    with pytest.raises(TypeError, match="for one text call nlp"):
        nlp.stream("One text.")


def test_options(tiny_models, nlp, span_nlp):
    projective = spandep.load(tiny_models["biaffine"], decoder="projective", batch_tokens=50)
    doc = projective.parse_file(DEV)
    assert all(is_projective(s.data.heads) for s in doc)  # type: ignore[arg-type]
    assert repr(projective) == "Pipeline(biaffine model, decoder='projective', precision='float32', batch_tokens=50)"
    assert len(spandep.load(tiny_models["span"], k=3, lam=0.5, retrieval=False).parse_file(DEV)) == len(doc)
    assert all(is_valid_tree(s.heads) for s in span_nlp.parse_file(DEV).data)
    with pytest.raises(ValueError, match="unknown decoder 'greedy'"):
        Pipeline(nlp.model, InferenceOptions(decoder="greedy"))
    with pytest.raises(ValueError, match=r"batch_tokens must be an int in \[1, 50000\]"):
        Pipeline(nlp.model, InferenceOptions(batch_tokens=0))
    with pytest.raises(ValueError, match="k, lam do not apply to a biaffine parser; it takes decoder"):
        Pipeline(nlp.model, InferenceOptions(lam=1.0, k=2))
    with pytest.raises(ValueError, match="unknown inference option.* beam; known: arc_weight, batch_tokens"):
        spandep.load(tiny_models["span"], beam=4)
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 64\]"):
        Pipeline(span_nlp.model, InferenceOptions(k=0))
    with pytest.raises(ValueError, match="need a model trained with a word scorer"):
        Pipeline(span_nlp.model, InferenceOptions(label_source="word"))


def test_missing_model(tmp_path):
    with pytest.raises(ModelError, match="not a spandep model folder"):
        spandep.load(tmp_path)


@pytest.mark.slow
def test_load_without_a_path_gives_the_shipped_model(monkeypatch):
    monkeypatch.delenv("SPANDEP_MODEL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    doc = spandep.load()("The dog chased the cat. It ran.")
    assert [[w.text for w in s] for s in doc] == [["The", "dog", "chased", "the", "cat", "."], ["It", "ran", "."]]
    assert all(is_valid_tree(s.heads) for s in doc.data) and doc[0][2].deprel == "root" and doc[0].root is doc[0][2]
