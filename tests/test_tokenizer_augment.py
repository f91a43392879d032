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
from spandep.tokenization.model import CharVocab
from spandep.training.tokenizer import _Data, _targets

FORMS = ["don't", "'", '"', "-", "--", "...", "x...y", "Straße", "l'", "1 000", "«", "»", ":", "?", "!", "(", ")",
         "word", "Ünï", "ǆ", "ŉ", "15", ",", ".", "''", "'s", "du", "ﬁn", "中文", "。", "的", "（"]
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


def _paragraph(*sentences: list[str]) -> GoldParagraph:
    """A paragraph of ``sentences`` (lists of tokens), tokens and sentences separated by one space."""
    text, spans = "", []
    for tokens in sentences:
        spans.append([])
        for form in tokens:
            text += " " if text else ""
            spans[-1].append(TokenSpan(len(text), len(text) + len(form), ()))
            text += form
    return GoldParagraph(text, spans)


def test_cjk_sentences_are_augmented_as_cjk_text_is_written():
    """A Chinese sentence is sometimes typeset with full-width marks (a lone ``.`` as ``。``) and sometimes follows
    the one before it without a space; a space between two non-CJK characters stays."""
    paragraph = _paragraph(["我们", "来", "了", "."], ["他", "走", "了", ",", "好", "."], ["ABC"], ["DEF", "说", "."])
    seen = set()
    for epoch in range(40):
        (out,) = training_paragraphs([paragraph], 1.0, 7, epoch)
        check_aligned(paragraph, out)
        ends = [s[-1].end for s in out.sentences]
        starts = [s[0].start for s in out.sentences]
        assert starts[3] > ends[2]  # "ABC" and "DEF" never glued
        seen |= {"stop" if "。" in out.text else "", "comma" if "，" in out.text else "",
                 "unspaced" if starts[1] == ends[0] or starts[2] == ends[1] else ""}
    assert seen >= {"stop", "comma", "unspaced"}
    plain = _paragraph(["Dr", "."], ["He", "came", "."])
    for epoch in range(20):
        (out,) = training_paragraphs([plain], 1.0, 7, epoch)
        assert out.sentences[1][0].start > out.sentences[0][-1].end and "。" not in out.text


@settings(max_examples=100, deadline=None)
@given(st.lists(paragraphs(), min_size=1, max_size=4), st.integers(1, 8), st.integers(0, 40), st.integers(1, 30))
def test_an_epoch_makes_its_least_batches_of_whole_passes(paras, batch_size, min_batches, window):
    """``min_batches`` 0 is one pass: each paragraph cut once into adjacent pieces; with more, whole passes (new
    offsets) are added only until the epoch has ``min_batches`` batches, the first pass the same as without."""
    data = _Data(paras, CharVocab.build((p.text for p in paras), 1), window)
    once = [piece for batch in data.batches(3, 1, batch_size) for piece in batch]
    for k, p in enumerate(paras):
        spans = sorted((a, b) for j, a, b in once if j == k)
        assert [a for a, _ in spans] == [0, *(b for _, b in spans[:-1])] and spans[-1][1] == len(p.text)
    batches = data.batches(3, 1, batch_size, min_batches)
    pieces = [piece for batch in batches for piece in batch]
    assert all(0 < len(batch) <= batch_size for batch in batches) and len(batches) >= min_batches
    passes, rest = divmod(sum(b - a for _, a, b in pieces), sum(len(p.text) for p in paras))
    assert rest == 0 and passes >= 1  # whole passes only
    if min_batches * batch_size <= len(once):
        assert sorted(pieces) == sorted(once)
