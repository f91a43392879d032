"""The span parser's optional word-level head: link term indexing, oracle decoding through it, training and reload."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest
import torch

from conftest import DEV, TINY_SPAN, write_config
from spandep.data.conllu import read_conllu
from spandep.data.trees import hull_spans, is_projective
from spandep.decoding import DECODERS
from spandep.decoding.spans import SpanCandidates
from spandep.options import InferenceOptions
from spandep.models.biaffine import BiaffineScorer
from spandep.models.span.candidates import structural_link
from spandep.models.span.inference import ScoredSentence, SpanInference, SpanParts, WordScores
from spandep.models.span.labels import LabelTable
from spandep.storage.model_io import load_model, save_model
from spandep.pipeline.predict import parse_stream
from spandep.training.config import load_config
from spandep.training.trainer import Trainer
from test_span_decoding import fixture_trees


def word_scores(arc: np.ndarray, labels: int = 3) -> WordScores:
    scorer = BiaffineScorer(8, labels, arc_mlp=8, rel_mlp=4)
    m = arc.shape[0]
    return WordScores(arc, torch.randn(m, 4), torch.randn(m, 4), scorer.eval())


def decode(scored: list[ScoredSentence], labels: list[str], decoder: str, **settings):
    """``SpanInference.decode`` with the span decoder ``decoder`` (by its algorithm's name), λ = 1 and ``settings``."""
    parts = SpanParts(None, None, None, None, labels, {"mst": DECODERS.get(decoder)}, nullcontext)  # type: ignore[arg-type]  # decoding reads labels and decoders only
    options = InferenceOptions(decoder="mst", lam=1.0, retrieval=True, **settings)
    return SpanInference(parts, options).decode(scored)


def test_link_term_is_the_child_roots_head_log_prob_of_the_parent_root() -> None:
    rng = np.random.default_rng(0)
    n = 5
    cands = SpanCandidates.from_lists(n, [(2, 1, 3, 0.0), (4, 4, 5, 0.0), (1, 1, 1, 0.0), (3, 3, 3, 0.0), (5, 5, 5, 0.0)])
    arc = rng.normal(size=(n + 1, n + 1))  # (1 + n, 1 + n) [dependent, head]
    term = word_scores(arc).link_term(cands)  # (S, S) [parent, child]
    for p in range(cands.size):
        assert term[p, 0] == 0.0
        for c in range(1, cands.size):
            assert term[p, c] == arc[cands.root[c], cands.root[p]]


@pytest.mark.parametrize("decoder", ["span_dp", "span_mst"])
def test_oracle_word_arcs_decide_the_tree_when_spans_and_links_are_uninformative(decoder: str) -> None:
    rng = np.random.default_rng(1)
    for heads in fixture_trees():
        if decoder == "span_dp" and not is_projective(heads):
            continue
        n = len(heads)
        items = [(w, s, e, 0.0) for w, (s, e) in enumerate(hull_spans(heads), start=1)]
        items += [(w, int(rng.integers(1, w + 1)), int(rng.integers(w, n + 1)), 0.0) for w in range(1, n + 1)]
        cands = SpanCandidates.from_lists(n, items)
        arc = np.full((n + 1, n + 1), -10.0)  # (1 + n, 1 + n)
        arc[np.arange(1, n + 1), heads] = 0.0
        sc = ScoredSentence(n, cands, cands.size, structural_link(cands), LabelTable(np.zeros((cands.size, n + 1), dtype=int), np.ones((cands.size, n + 1))), word_scores(arc))
        (parse,) = decode([sc], ["a", "b", "c"], decoder, arc_weight=1.0)[0]
        assert parse.heads == heads


def test_word_options_need_a_word_scorer() -> None:
    n = 3
    cands = SpanCandidates.from_lists(n, [(1, 1, 1, 0.0), (2, 1, 3, 0.0), (3, 3, 3, 0.0)])
    sc = ScoredSentence(n, cands, cands.size, structural_link(cands), LabelTable(np.zeros((cands.size, n + 1), dtype=int), np.ones((cands.size, n + 1))))
    with pytest.raises(ValueError, match="word scorer"):
        decode([sc], ["a"], "span_dp", arc_weight=0.5)
    with pytest.raises(ValueError, match="word scorer"):
        decode([sc], ["a"], "span_dp", label_source="word")


@pytest.mark.slow
def test_span_parser_with_a_word_scorer_trains_reloads_and_parses_with_its_terms(tmp_path) -> None:
    model = TINY_SPAN + "word_scorer = { arc_mlp = 16, rel_mlp = 8 }\n"
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=model, epochs=2))
    trainer = Trainer(cfg)
    assert trainer.model.word_scorer is not None
    batch = trainer._batch(list(range(8)))
    torch.manual_seed(0)
    first = trainer.model.loss(batch).item()
    trainer.run()
    save_model(trainer.model, tmp_path / "saved")
    again = load_model(tmp_path / "saved")
    assert again.word_scorer is not None and again.word_scorer.hparams["rel_mlp"] == 8
    sentences = list(read_conllu(DEV))
    options = InferenceOptions(arc_weight=1.0, label_source="word")
    a = [(s.heads, s.deprels) for s in parse_stream(trainer.model, sentences, options)]
    b = [(s.heads, s.deprels) for s in parse_stream(again, sentences, options)]
    assert a == b and [len(h) for h, _ in a] == [len(s) for s in sentences]
    torch.manual_seed(0)
    assert trainer.model.train().loss(batch).item() < first


def test_word_options_on_a_model_without_a_word_scorer_are_refused(tmp_path) -> None:
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=1))
    trainer = Trainer(cfg)
    assert trainer.model.word_scorer is None
    with pytest.raises(ValueError, match="word scorer"):
        list(parse_stream(trainer.model, list(read_conllu(DEV))[:2], InferenceOptions(label_source="word")))


def test_sentences_too_long_for_the_late_linker_get_the_word_heads_tree(tmp_path) -> None:
    from spandep.data.trees import is_valid_tree
    from spandep.decoding.mst import mst_single
    from spandep.options import InferenceStats
    from spandep.models.layers import evaluating

    model_table = TINY_SPAN + "word_scorer = { arc_mlp = 16, rel_mlp = 8 }\n"
    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=model_table, epochs=1))
    model = Trainer(cfg).model.eval()
    model.linker.max_words = 5
    sentences = list(read_conllu(DEV))
    long = [i for i, s in enumerate(sentences) if len(s) > 5]
    assert long and len(long) < len(sentences)
    stats = InferenceStats()
    parsed = list(parse_stream(model, sentences, stats=stats))
    assert stats.too_long == len(long)
    assert all(is_valid_tree(s.heads) for s in parsed)
    with evaluating(model):
        scored, _ = model.stages().score(sentences)
    for i in long:
        assert scored[i].link is None and scored[i].words is not None
        assert parsed[i].heads == mst_single(scored[i].words.arc)[1:].tolist()  # the word head's own tree
        assert set(parsed[i].deprels) <= set(model.labels)
