"""The spaCy component "spandep": found through the entry point, trees on Docs, sentences, whitespace, POS."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace

import pytest

spacy = pytest.importorskip("spacy")

from spacy.tokens import Doc

import spandep
from spandep.data.sentence import Sentence
from spandep.tokenization import RuleTokenizer
from spandep.integrations.spacy_component import (
    SPACE_LABEL,
    SpandepComponent,
    sentence_ranges,
)


@pytest.fixture(scope="module")
def model_dir(tiny_models):
    return str(tiny_models["biaffine"])


def doc_trees(doc) -> list[list[int]]:
    """Each sentence's heads as spandep writes them (1-based within the sentence, 0 = root), whitespace left out."""
    out = []
    for sent in doc.sents:
        words = [t for t in sent if not t.is_space]
        out.append([0 if t.head.i == t.i else words.index(t.head) + 1 for t in words])
    return out


@pytest.mark.slow
def test_entry_point_registers_the_factory_without_importing_spandep(model_dir):
    code = (
        "import spacy, sys\n"
        "nlp = spacy.blank('en')\n"
        f"nlp.add_pipe('spandep', config={{'model': {model_dir!r}}})\n"
        "doc = nlp('I saw her. She ran.')\n"
        "print(nlp.pipe_names, len(list(doc.sents)), sum(t.head.i == t.i for t in doc))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == "['spandep'] 2 2"


def test_trees_match_the_api_and_sentences_come_from_the_tokenizer(model_dir):
    nlp = spacy.blank("en")
    nlp.add_pipe("spandep", config={"model": model_dir})
    doc = nlp("The dog barked loudly. It ran away, fast!")
    sents = list(doc.sents)
    assert [s.text for s in sents] == ["The dog barked loudly.", "It ran away, fast!"]
    assert all(t.dep_ for t in doc) and not doc.has_annotation("POS")
    expected = spandep.load(model_dir).parse_tokens([[t.text for t in s] for s in sents])
    assert doc_trees(doc) == [s.heads for s in expected.data]
    assert [[t.dep_ for t in s] for s in sents] == [s.deprels for s in expected.data]


def test_existing_sentence_boundaries_are_kept(model_dir):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("spandep", config={"model": model_dir})
    texts = ["One two three four", "Hi there. Bye now!", "", "Word"]
    docs = list(nlp.pipe(texts, batch_size=2))
    assert [[s.text for s in d.sents] if len(d) else [] for d in docs] == [
        ["One two three four"], ["Hi there.", "Bye now!"], [], ["Word"]]
    assert [doc_trees(d) for d in docs] == [doc_trees(nlp(t)) for t in texts]


def test_whitespace_tokens_hang_from_the_word_before(model_dir):
    nlp = spacy.blank("en")
    nlp.add_pipe("spandep", config={"model": model_dir})
    doc = nlp("\n Dogs bark.  \n\nCats  purr.\n")
    spaces = [t for t in doc if t.is_space]
    assert spaces and all(t.dep_ == SPACE_LABEL for t in spaces)
    for t in spaces:
        before = [w for w in doc[: t.i] if not w.is_space]
        assert t.head == (before[-1] if before else doc[1])
    assert [[t.text for t in s if not t.is_space] for s in doc.sents] == [["Dogs", "bark", "."], ["Cats", "purr", "."]]
    assert len(nlp(" \n ")) and not nlp(" \n ").has_annotation("DEP")


def test_sentence_ranges():
    vocab = spacy.blank("en").vocab
    rules = RuleTokenizer()
    straddling = Doc(vocab, words=["I", "came", ". Then", "left", "."], spaces=[True, False, True, False, False])
    assert sentence_ranges(straddling, rules) == [(0, 3), (3, 5)]  # "Then" starts inside token 2: the next one starts
    given = Doc(vocab, words=["I", "came", ".", "Then", "left", "."], sent_starts=[True] + [False] * 5)
    assert sentence_ranges(given, rules) == [(0, 6)]  # boundaries set on the Doc win over the tokenizer's
    assert sentence_ranges(Doc(vocab, words=[]), rules) == []


class TaggingParser:
    """A stand-in parser: every word hangs from the first, with UPOS NOUN (tests POS output without a tagger)."""

    tokenizer = RuleTokenizer()

    def parse_sentences(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        for s in sentences:
            words = [replace(w, head=0 if w.id == 1 else 1, deprel="root" if w.id == 1 else "dep", upos="NOUN") for w in s.words]
            yield replace(s, words=words)


def test_upos_from_the_model_sets_pos():
    doc = spacy.blank("en")("Cats purr. Dogs bark.")
    SpandepComponent(TaggingParser())(doc)  # type: ignore[arg-type]
    assert [t.pos_ for t in doc] == ["NOUN"] * 6
    assert [t.head.i for t in doc] == [0, 0, 0, 3, 3, 3] and [s.start for s in doc.sents] == [0, 3]


def test_bad_settings_fail_when_the_pipe_is_added(model_dir):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="unknown decoder 'greedy'"):
        nlp.add_pipe("spandep", config={"model": model_dir, "decoder": "greedy"})
    with pytest.raises(ValueError, match="k do not apply to a biaffine parser"):
        nlp.add_pipe("spandep", config={"model": model_dir, "inference": {"k": 3}})
