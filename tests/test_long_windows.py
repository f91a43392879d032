"""Sentences longer than ``LONG_SENTENCE_WORDS`` are parsed in overlapping windows and merged into one tree
(docs/design.md, "Long sentences"): every word comes back in one well-formed tree for any length, window and
threshold, the model never sees more than a window, and shorter sentences parse exactly as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY_BIAFFINE, TINY_SPAN, write_config
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.sentence import Sentence
from spandep.data.trees import is_valid_tree
from spandep.decoding.windows import ProposedArcs, core_windows, merge_windows, windows
from spandep.options import InferenceStats
from spandep.pipeline.long import LONG_SENTENCE_WORDS, WINDOW_WORDS, parse_sentences

WORDS = ["Unbelievably", ",", "the", "cat", "sat", "on", "a", "mat", "in", "Reykjavík", "and", "ran", "far", "."]
HEADS = "\n[heads.upos]\ncasing = 4\n"  # an output head, so that columns are merged too


def sentence(n: int, offset: int = 0) -> Sentence:
    return Sentence.from_tokens([WORDS[(i + offset) % len(WORDS)] for i in range(n)])


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory):
    """Untrained tiny BiLSTM models with a UPOS head, loaded: ``{"biaffine": Parser, "span": Parser}``."""
    from spandep.storage.model_io import load_model, save_model
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    loaded = {}
    for name, table in (("biaffine", TINY_BIAFFINE), ("span", TINY_SPAN)):
        root = tmp_path_factory.mktemp(name)
        cfg = load_config(write_config(root / "c.toml", root / "run", "bilstm", model=table + HEADS))
        cfg["data"]["max_train_sentences"] = 8
        save_model(Trainer(cfg).model, root / "model")
        loaded[name] = load_model(root / "model")
    return loaded


# ------------------------------------------------------------------------------------------ the merge, model-free
@st.composite
def window_trees(draw):
    """A length, a window width, and for each window a random tree over its words with random probabilities."""
    n = draw(st.integers(1, 80))
    width = draw(st.integers(1, 30))
    spans = windows(n, width)
    trees = []
    for a, b in spans:
        order = draw(st.permutations(range(b - a)))
        heads = [0] * (b - a)
        for rank, v in enumerate(order[1:], start=1):
            heads[v] = order[draw(st.integers(0, rank - 1))] + 1
        trees.append((heads, draw(st.lists(st.floats(0, 1), min_size=b - a, max_size=b - a))))
    return n, width, spans, trees


def proposed(n: int, spans, trees) -> ProposedArcs:
    core = core_windows(n, spans)
    dep, head, prob, is_core = [], [], [], []
    for w, ((a, b), (heads, probs)) in enumerate(zip(spans, trees)):
        dep += range(a + 1, b + 1)
        head += [h + a if h else 0 for h in heads]
        prob += probs
        is_core += (core[a:b] == w).tolist()
    return ProposedArcs(n, np.array(dep), np.array(head), np.array(prob), np.array(is_core))


@settings(max_examples=300, deadline=None)
@given(window_trees())
def test_the_merge_is_one_tree_over_every_word(case):
    n, width, spans, trees = case
    assert spans[0][0] == 0 and spans[-1][1] == n and all(b - a <= width for a, b in spans)
    assert all(a2 <= b1 for (_, b1), (a2, _) in zip(spans, spans[1:]))  # consecutive windows overlap or touch
    arcs = proposed(n, spans, trees)
    heads, chosen = merge_windows(arcs)
    assert heads[0] == 0 and len(heads) == n + 1 and is_valid_tree(heads[1:].tolist())
    for d in range(1, n + 1):  # a kept arc is a proposed one; the others are fallback arcs
        assert chosen[d] == -1 or (arcs.dep[chosen[d]] == d and arcs.head[chosen[d]] == heads[d])
    if len(spans) == 1:  # one window: its tree, untouched
        assert heads[1:].tolist() == trees[0][0]


def test_core_arcs_that_already_form_a_tree_are_kept():
    spans = windows(6, 4)
    assert spans == [(0, 4), (2, 6)] and core_windows(6, spans).tolist() == [0, 0, 0, 1, 1, 1]
    # window 1 (words 1-4) and window 2 (words 3-6, local ids 1-4) disagree outside their cores
    trees = [([0, 1, 2, 1], [0.5] * 4), ([0, 1, 2, 3], [0.9] * 4)]
    heads, chosen = merge_windows(proposed(6, spans, trees))
    assert heads[1:].tolist() == [0, 1, 2, 3, 4, 5]  # the core arcs: words 1-3 from window 1, 4-6 from window 2
    assert (chosen[1:] >= 0).all()


def test_a_cycle_across_windows_is_repaired_with_a_proposed_arc():
    spans = windows(6, 4)
    # core arcs: 1 -> ROOT, 2 -> 1, 3 -> 4 (window 1); 4 -> 3, 5 -> 4, 6 -> 5 (window 2): the cycle 3 <-> 4
    trees = [([0, 1, 4, 1], [0.5] * 4), ([0, 1, 2, 3], [0.5] * 4)]
    heads, chosen = merge_windows(proposed(6, spans, trees))
    # word 4 takes window 1's arc 4 -> 1 (the best way in: window 2's root arc 3 -> ROOT would need a second root)
    assert heads[1:].tolist() == [0, 1, 4, 1, 4, 5] and (chosen[1:] >= 0).all()


# ------------------------------------------------------------------------------------------ with models
@pytest.mark.parametrize("kind", ["biaffine", "span"])
@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 120), long_words=st.integers(1, 60), window=st.integers(1, 60), offset=st.integers(0, 13))
def test_any_length_and_threshold_gives_one_tree_over_every_word(models, kind, n, long_words, window, offset):
    model = models[kind]
    seen: list[int] = []
    real_parse = model.parse

    def spy(sentences, options=None, stats=None):
        seen.extend(len(s) for s in sentences)
        return real_parse(sentences, options, stats)

    model.parse = spy  # an instance attribute: the module-scoped model is restored below
    try:
        stats = InferenceStats()
        (parse,) = parse_sentences(model, [sentence(n, offset)], None, stats, long_words, window)
    finally:
        del model.parse
    assert len(parse.heads) == n and is_valid_tree(parse.heads)
    assert len(parse.labels) == n and set(parse.labels) <= set(model.labels)
    assert len(parse.columns["upos"]) == n and "_" not in parse.columns["upos"]
    assert stats.sentences == 1 and stats.windowed == (n > long_words)
    assert max(seen) <= (window if n > long_words else n)  # the model never sees more than a window
    if parse.scores is not None:
        assert len(parse.scores.head_probs(np.asarray(parse.heads))) == n and len(parse.scores.label_probs) == n


@pytest.mark.parametrize("kind", ["biaffine", "span"])
def test_sentences_up_to_the_threshold_parse_exactly_as_before(models, kind):
    model = models[kind]
    short = [sentence(n, n) for n in (1, 3, 17, 40, 2)]
    assert parse_sentences(model, short, long_words=40, window_words=10) == model.parse(short)
    mixed = [*short[:2], sentence(90), *short[2:]]  # the short ones go to the model together, as before
    parses = parse_sentences(model, mixed, long_words=40, window_words=10)
    assert [p for i, p in enumerate(parses) if i != 2] == model.parse(short)
    assert len(parses[2].heads) == 90 and is_valid_tree(parses[2].heads)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["biaffine", "span"])
def test_a_sentence_over_the_shipped_threshold_through_the_command_line(models, kind, tmp_path):
    """The shipped constants, end to end: a sentence of LONG_SENTENCE_WORDS + 300 words between two short ones,
    as JSON Lines (confidences included) and CoNLL-U."""
    from spandep.storage.model_io import save_model

    save_model(models[kind], tmp_path / "model")
    n = LONG_SENTENCE_WORDS + 300
    assert n > 2 * WINDOW_WORDS and WINDOW_WORDS <= 200
    lines = ["A short one .", " ".join(sentence(n).forms), "And another ."]
    (tmp_path / "in.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    for fmt in ("jsonl", "conllu"):
        out = tmp_path / f"out.{fmt}"
        result = CliRunner().invoke(
            app, ["parse", str(tmp_path / "in.txt"), "-f", "tokens", "--output-format", fmt, "-o", str(out), "--model", str(tmp_path / "model")]
        )
        assert result.exit_code == 0, result.output
        if fmt == "jsonl":
            docs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            assert [len(d["heads"]) for d in docs] == [4, n, 3]
            assert all(is_valid_tree(d["heads"]) for d in docs)
            assert len(docs[1]["head_probs"]) == n and all(0 <= p <= 1 for p in docs[1]["head_probs"])
            assert "too long" not in result.stderr  # a window fits the span linker's max_words (200), the whole would not
            assert [d["tokens"] for d in docs] == [line.split() for line in lines]
