"""The object model (``spandep.document``): Doc, Sentence and Word views, head words and character offsets."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spandep
from spandep.api import Pipeline
from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.sentence import Sentence as DataSentence
from spandep.document import Doc, Sentence, Word
from spandep.storage.catalogue import default_model
from spandep.tokenization import load_tokenizer

MWT_BLOCK = """# sent_id = mwt-1
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\tTokenRange=3:8
1\tdo\tdo\tAUX\tVBP\tMood=Ind\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tSpaceAfter=No|TokenRange=9:11
4\t!\t!\tPUNCT\t.\t_\t3\tpunct\t_\tTokenRange=11:12

"""


@pytest.fixture(scope="module")
def mwt_sentence(tmp_path_factory) -> DataSentence:
    path = tmp_path_factory.mktemp("mwt") / "mwt.conllu"
    path.write_text(MWT_BLOCK)
    return next(read_conllu(path))


def test_words_heads_and_columns(mwt_sentence):
    doc = Doc([mwt_sentence], "Oh don't go! Now.")
    sentence = doc[0]
    assert isinstance(sentence, Sentence) and len(doc) == 1 and len(sentence) == 4
    do, nt, go, bang = sentence
    assert isinstance(do, Word) and sentence[0] is do and sentence[-1] is bang and sentence[1:3] == (nt, go)
    assert (do.id, do.index, do.text, do.form, do.lemma, do.upos, do.xpos, do.feats) == (1, 0, "do", "do", "do", "AUX", "VBP", "Mood=Ind")
    assert (do.head, do.head_id, do.deprel) == (go, 3, "aux")
    assert (go.head, go.head_id, go.deprel, go.misc) == (None, 0, "root", "SpaceAfter=No|TokenRange=9:11")
    assert sentence.root is go and go.children == [do, nt, bang] and do.children == [] and do.sentence is sentence
    assert (sentence.id, sentence.text) == ("mwt-1", "don't go!")
    assert repr(do) == "Word(1, 'do', head=3, deprel='aux')" and repr(doc) == "Doc(1 sentences, 4 words)"
    assert doc.words == [do, nt, go, bang] and doc.data == [mwt_sentence] and sentence.data is mwt_sentence
    assert sentence.to_conllu() == format_sentence(mwt_sentence) == doc.to_conllu()


def test_offsets_come_from_token_ranges_of_the_docs_text(mwt_sentence):
    text = "Oh don't go! Now."
    words = Doc([mwt_sentence], text).words
    assert [(w.start_char, w.end_char) for w in words] == [(3, 8), (3, 8), (9, 11), (11, 12)]  # "do", "n't": "don't"
    assert [text[w.start_char : w.end_char] for w in words] == ["don't", "don't", "go", "!"]
    assert all(w.start_char is None and w.end_char is None for w in Doc([mwt_sentence]).words)  # no text: unknown


def test_text_without_raw_text():
    plain = DataSentence.from_tokens(["Hi", ",", "you", "!"])
    for w, head in zip(plain.words, [0, 1, 1, 1]):
        w.head = head
    plain.words[0].misc = "SpaceAfter=No"
    plain.words[2].misc = "SpaceAfter=No"
    doc = Doc([plain, plain])
    assert doc[0].text == "Hi, you!" and doc.text == "Hi, you!\nHi, you!" and doc[0].id is None
    assert isinstance(doc[1:], Doc) and len(doc[1:]) == 1


def test_a_doc_holds_parsed_sentences():
    with pytest.raises(ValueError, match=re.escape("sentence 0, word 1: no HEAD; a Doc holds parsed sentences: parse them")):
        Doc([DataSentence.from_tokens(["unparsed"])])


def test_package_exports():
    assert (spandep.Doc, spandep.Sentence, spandep.Word) == (Doc, Sentence, Word)


# ------------------------------------------------------------------------------------------ offsets of raw text

SAMPLES = ["don't", "I'm", "cannot", "it's", "Don't", "won't", "e-mail", "U.S.", "(x)", "3.14", "Ph.D.", "café", "看似簡單。"]
SEPARATORS = ["", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "\u2028", ". ", "! "]
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f\ud800-\udfff]")  # raw text refuses these; surrogates are not text
TEXTS = st.lists(
    st.tuples(st.one_of(st.sampled_from(SAMPLES), st.text(max_size=8)), st.sampled_from(SEPARATORS)), max_size=20
).map(lambda parts: _CONTROL.sub("", "".join(a + b for a, b in parts)))


@pytest.fixture(scope="module")
def mwt_nlp(tiny_models) -> Pipeline:
    """A tiny parser with the shipped model's trained tokenizer, which splits multiword tokens ("don't")."""
    tiny = spandep.load(tiny_models["biaffine"])
    return Pipeline(tiny.model, tiny.options, load_tokenizer(default_model().folder / "tokenizer"))


def check_offsets(text: str, doc: Doc) -> None:
    assert doc.text == text
    for sentence in doc:
        for word in sentence:
            assert word.start_char is not None and word.end_char is not None
            surface = text[word.start_char : word.end_char]
            tokens = [raw.split("\t") for _, raw in sentence.data.extra_lines]
            mwt = [t[1] for t in tokens if "-" in t[0] and int(t[0].split("-")[0]) <= word.id <= int(t[0].split("-")[1])]
            assert surface == (mwt[0] if mwt else word.text)
        assert sentence.text == text[sentence[0].start_char : sentence[-1].end_char]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXTS)
def test_raw_text_offsets_slice_back_to_the_forms(mwt_nlp, text):
    check_offsets(text, mwt_nlp(text))


def test_multiword_tokens_get_their_tokens_span(mwt_nlp):
    text = "I don't know.\n\nIt's fine, isn't it?"
    doc = mwt_nlp(text)
    check_offsets(text, doc)
    do, nt = doc[0][1:3]
    assert (do.text, nt.text) == ("do", "n't") and (do.start_char, do.end_char) == (nt.start_char, nt.end_char) == (2, 7)
    assert [list(mwt_nlp.pipe([text]))[0].words[i].start_char for i in range(3)] == [w.start_char for w in doc.words[:3]]
