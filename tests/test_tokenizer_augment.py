"""Typographic variants of training paragraphs (issue 47): targets follow the characters, a seed gives the same
variants, and the CLI's --augment is bounded."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.tokenization.corpus import GoldParagraph
from spandep.tokenization.text import TokenSpan
from spandep.tokenization.variants import Layout, augment, joined, training_paragraphs, typeset
from spandep.training.tokenizer import _targets

FORMS = ["don't", "'", '"', "-", "--", "...", "x...y", "Straße", "l'", "1 000", "«", "»", ":", "?", "!", "(", ")",
         "word", "Ünï", "ǆ", "ŉ", "15", ",", ".", "''", "'s", "du", "ﬁn"]
_SPACE = re.compile(r"\s+")


@st.composite
def paragraphs(draw: st.DrawFn) -> GoldParagraph:
    """A paragraph of 1 to 4 sentences of 1 to 12 tokens, tight or spaced, some of them multiword tokens."""
    text, sentences = "", []
    for _ in range(draw(st.integers(1, 4))):
        spans = []
        for k in range(draw(st.integers(1, 12))):
            if sentences or spans:
                text += " " if not spans else draw(st.sampled_from(["", " ", "  ", "\u00a0"]))
            form = draw(st.sampled_from(FORMS))
            words = ("de", "le") if form == "du" else ("l'", "a") if form == "l'" and draw(st.booleans()) else ()
            spans.append(TokenSpan(len(text), len(text) + len(form), words))
            text += form
        sentences.append(spans)
    return GoldParagraph(text, sentences)


def check_aligned(before: GoldParagraph, after: GoldParagraph) -> None:
    """``after`` is a consistent gold paragraph of the same tokens and sentences as ``before``."""
    spans = [t for s in after.sentences for t in s]
    assert [len(s) for s in after.sentences] == [len(s) for s in before.sentences]
    assert [len(t.words) for t in spans] == [len(t.words) for s in before.sentences for t in s]
    tokens = [after.text[t.start : t.end] for t in spans]
    assert all(t and not t[0].isspace() and not t[-1].isspace() for t in tokens)
    assert _SPACE.sub("", "".join(tokens)) == _SPACE.sub("", after.text)  # the gold tokens, joined, are the text
    bounds = [0, *(x for t in spans for x in (t.start, t.end)), len(after.text)]
    assert all(not after.text[a:b].strip() for a, b in zip(bounds[::2], bounds[1::2]))  # only whitespace between
    target, mask = _targets(after)
    assert [i for i in range(len(after.text)) if target[i, 0]] == [t.end - 1 for t in spans]
    assert [i for i in range(len(after.text)) if target[i, 1]] == [s[-1].end - 1 for s in after.sentences]
    assert [i for i in range(len(after.text)) if target[i, 2]] == [t.end - 1 for t in spans if t.words]
    assert all(mask[t.end - 1, 1] for t in spans)


@settings(max_examples=300, deadline=None)
@given(paragraphs(), st.integers(0, 2**32 - 1))
def test_augmented_paragraphs_keep_their_targets_aligned(paragraph, seed):
    assert Layout.of(paragraph).paragraph() == paragraph
    check_aligned(paragraph, augment(paragraph, random.Random(seed)))
    for language in ("en", "fr", "cs"):
        check_aligned(paragraph, typeset(paragraph, language, seed))


@settings(max_examples=100, deadline=None)
@given(st.lists(paragraphs(), min_size=1, max_size=4), st.integers(0, 1000), st.integers(1, 50))
def test_training_paragraphs_are_the_same_sentences_and_seeded(paras, seed, epoch):
    out = training_paragraphs(paras, 0.7, seed, epoch)
    assert out == training_paragraphs(paras, 0.7, seed, epoch)
    assert [len(s) for p in out for s in p.sentences] == [len(s) for p in paras for s in p.sentences]
    for p in out:
        check_aligned(p, p)
    assert training_paragraphs(paras, 0.0, seed, epoch) == paras


def test_a_seed_gives_the_same_variants_and_another_seed_others():
    paragraph = GoldParagraph('He said "don\'t" ... - ok', [])
    words = ["He", "said", '"', "don't", '"', "...", "-", "ok"]
    spans, pos = [], 0
    for w in words:
        pos = paragraph.text.index(w, pos)
        spans.append(TokenSpan(pos, pos + len(w)))
        pos += len(w)
    paragraph.sentences = [spans]
    draws = [training_paragraphs([paragraph] * 20, 1.0, seed, 1) for seed in (1, 1, 2)]
    assert draws[0] == draws[1] and draws[0] != draws[2]
    assert training_paragraphs([paragraph] * 20, 1.0, 1, 2) != draws[0]  # another epoch, other variants


def test_a_shorter_form_moves_every_boundary_after_it():
    text = 'Wait... "no" - she said.'
    forms = ["Wait", "...", '"', "no", '"', "-", "she", "said", "."]
    spans, pos = [], 0
    for form in forms:
        pos = text.index(form, pos)
        spans.append(TokenSpan(pos, pos + len(form)))
        pos += len(form)
    typed = typeset(GoldParagraph(text, [spans[:5], spans[5:]]), "en", 1, nbsp=0.0)
    assert typed.text == "Wait… “no” – she said."
    assert [typed.text[t.start : t.end] for s in typed.sentences for t in s] == ["Wait", "…", "“", "no", "”", "–", "she", "said", "."]
    assert [(s[0].start, s[-1].end) for s in typed.sentences] == [(0, 10), (11, 22)]
    french = typeset(GoldParagraph(text, [spans[:5], spans[5:]]), "fr", 1, nbsp=0.0)
    assert french.text == "Wait… «no» – she said."


def test_joined_paragraphs_are_one_without_a_break():
    a = GoldParagraph("Hi .", [[TokenSpan(0, 2), TokenSpan(3, 4)]])
    b = GoldParagraph("Yes", [[TokenSpan(0, 3)]])
    both = joined(a, b)
    assert both.text == "Hi . Yes" and both.sentences[1] == [TokenSpan(5, 8)]


def test_cli_augment_is_bounded(tmp_path):
    result = CliRunner().invoke(app, ["train-tokenizer", "x.conllu", "--dev", "y.conllu", "-o", str(tmp_path), "--augment", "1.5"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["spandep: error: --augment must be a finite number in [0, 1], not 1.5"]
