"""Span-span inference: tiny random parts, valid trees always, deduplicated queries, retrieval, counted fallbacks."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.data.trees import is_projective, tree_problems
from spandep.encoders.transformer import TransformerEncoder
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.span import inference as span_inference
from hypothesis import given
from hypothesis import strategies as st

from spandep.models.span.candidates import candidate_queries, groups, prune_spans, retrieve_parents, structural_link
from spandep.models.layers import evaluating
from spandep.models.span.labels import LabelStates, LabelTable, read_labels
from spandep.models.span.parser import SpanParser

FIXTURES = Path(__file__).parent / "fixtures"
TRAIN = FIXTURES / "en_ewt_train_40.conllu"
DEV = FIXTURES / "en_ewt_excerpt.conllu"


@pytest.fixture(scope="module")
def parts(tiny_transformer_dir) -> SpanParser:
    """A random span parser over the tiny transformer with the faithful (paired) linker."""
    torch.manual_seed(3)
    train = list(read_conllu(TRAIN)) + list(read_conllu(DEV))
    labels = sorted({w.deprel for s in train for w in s.words})
    encoder = TransformerEncoder(str(tiny_transformer_dir), pretrained=False, mix_layers=2)
    linker = {"format": "paired", "model": str(tiny_transformer_dir), "pretrained": False, "max_len": 64, "dropout": 0.0}
    return SpanParser(encoder, labels, linker=linker, span_mlp=16)


def parse_spans(parser: SpanParser, sentences: list[Sentence], **settings):
    """The parses (the staged inference's) with ``settings`` over the parser's own, and the run's counters."""
    stats = InferenceStats()
    return parser.parse(sentences, InferenceOptions(**settings), stats), stats


def short_sentences() -> list[Sentence]:
    """The fixture's sentences plus two hand-made short ones (queries of ≤ 12 words fit in 64 pieces)."""
    return list(read_conllu(DEV)) + [
        Sentence.from_tokens(["I", "love", "Tim", "'s", "cat", "."]),
        Sentence.from_tokens(["Hi"]),
    ]


def check_output(parts: SpanParser, sentences, results) -> None:
    assert len(results) == len(sentences)
    label_set = set(parts.labels)
    for s, heads, labels in ((s, p.heads, p.labels) for s, p in zip(sentences, results)):
        assert len(heads) == len(labels) == len(s)
        assert tree_problems(heads) == [], (heads, tree_problems(heads))
        assert set(labels) <= label_set


# ----------------------------------------------------------------------------------------- helpers
def test_candidate_queries_are_deduplicated_root_first() -> None:
    spans = [[(1, 1, -0.1), (1, 3, -0.5)], [(1, 3, -0.2), (2, 2, -0.3)], [(3, 3, -0.1)]]
    extra = [(2, 1, 2, -0.9), (2, 2, 2, -2.0), (1, 1, 2, -4.0)]  # (2, 2, 2) is already there, two are new
    cands = candidate_queries(spans, 3, extra)
    keys = list(zip(cands.root.tolist(), cands.start.tolist(), cands.end.tolist()))
    assert keys[0] == (0, 1, 3) and cands.score[0] == 0.0
    assert len(keys) == len(set(keys)) == 1 + 5 + 2
    assert keys[1:] == [(1, 1, 1), (1, 1, 3), (2, 1, 3), (2, 2, 2), (3, 3, 3), (2, 1, 2), (1, 1, 2)]  # first seen
    assert cands.score[keys.index((2, 2, 2))] == pytest.approx(-0.3)  # highest score kept
    with pytest.raises(ValueError):
        candidate_queries(spans, 4)


def test_structural_link_matches_the_linker_masks() -> None:
    cands = candidate_queries([[(1, 1, 0.0)], [(1, 3, 0.0), (2, 2, 0.0)], [(3, 3, 0.0)]], 3)
    link = structural_link(cands)
    keys = list(zip(cands.root.tolist(), cands.start.tolist(), cands.end.tolist()))
    ok = {(keys[p], keys[c]) for p in range(len(keys)) for c in range(len(keys)) if np.isfinite(link[p, c])}
    assert ((2, 1, 3), (1, 1, 1)) in ok and ((2, 1, 3), (3, 3, 3)) in ok
    assert ((2, 2, 2), (1, 1, 1)) not in ok  # child outside the parent's span
    assert ((1, 1, 1), (2, 1, 3)) not in ok  # parent's root inside the child's span
    assert all(np.isfinite(link[0, 1:])) and not np.isfinite(link[:, 0]).any()


def test_retrieval_is_the_exact_argmax_parent(parts: SpanParser) -> None:
    linker = parts.linker.eval()
    forms = ["I", "love", "Tim", "'s", "cat", "."]
    n = len(forms)
    spans = [(0, 1, n), (1, 1, 1), (3, 3, 4), (5, 3, 5), (2, 1, 6), (6, 6, 6), (4, 4, 4)]
    everything = [(0, 1, n)] + [(r, s, e) for r in range(1, n + 1) for s in range(1, r + 1) for e in range(r, n + 1)]
    cached = linker.queries.sentence_pieces(forms)
    with torch.inference_mode():
        batch = linker.queries.collate([linker.queries.build(cached, *s) for s in spans])
        out = linker(batch)
        found = retrieve_parents(linker.link_tables(out)[0], batch["n_words"])
        cand = torch.tensor(everything)  # (C, 3)
        table = linker.link_tables(out, mutual=False)[0]  # (batch, 3, 1 + n)
        scores = table[:, 0, cand[:, 0]] + table[:, 1, cand[:, 1]] + table[:, 2, cand[:, 2]]  # (batch, C)
    assert found[0] is None  # the ROOT query has no parent
    for q in range(1, len(spans)):
        best = int(scores[q].argmax())
        expected = everything[best] if everything[best][0] > 0 else None
        assert found[q] == expected, (spans[q], found[q], expected)


scores = st.floats(min_value=-30, max_value=0, allow_nan=False)
word_span_lists = st.lists(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9), scores), min_size=1, max_size=6).map(
    lambda spans: sorted(spans, key=lambda span: -span[2])), max_size=8)  # each word's spans best first, as topk_spans


@given(word_span_lists, st.floats(min_value=0, max_value=1))
def test_prune_spans_keeps_each_best_and_the_spans_above_the_share(word_spans, share) -> None:
    pruned = prune_spans(word_spans, share)
    assert len(pruned) == len(word_spans)
    for spans, kept in zip(word_spans, pruned):
        floor = spans[0][2] + np.log(share) if share > 0 else -np.inf
        assert kept == [span for j, span in enumerate(spans) if j == 0 or span[2] >= floor]  # in order, best kept
    assert prune_spans(word_spans, 0.0) == [list(spans) for spans in word_spans]
    more = prune_spans(word_spans, min(1.0, share * 2))
    assert all(set(a) <= set(b) for a, b in zip(more, pruned))  # a larger share keeps fewer


# ----------------------------------------------------------------------------------------- SpanInference.parse
@pytest.mark.parametrize("decoder", ["projective", "mst"])
@pytest.mark.parametrize("retrieval", [False, True])
def test_parse_gives_one_valid_tree_per_sentence(parts: SpanParser, decoder: str, retrieval: bool) -> None:
    sentences = short_sentences()
    results, stats = parse_spans(parts, sentences, k=2, lam=1.0, decoder=decoder, retrieval=retrieval, batch_tokens=600)
    check_output(parts, sentences, results)
    assert isinstance(stats, InferenceStats)
    assert stats.sentences == len(sentences)
    assert stats.queries > 0 and stats.seconds > 0
    if not retrieval:
        assert stats.retrieved_spans == 0
    else:  # a random linker's argmax parents are mostly spans the proposal did not offer
        assert stats.retrieved_spans > 0
    if decoder == "mst":
        assert stats.dp_fallbacks == 0
    # k spans per word at most (fewer when a word has fewer valid spans), ROOT's query, the retrieved ones
    fitting = [s for s in sentences if parts.linker.queries.fits(parts.linker.queries.sentence_pieces(s.forms))]
    assert stats.too_long == len(sentences) - len(fitting)
    base = sum(1 + sum(min(2, i * (len(s) - i + 1)) for i in range(1, len(s) + 1)) for s in fitting)
    assert stats.queries == base + stats.retrieved_spans  # topk spans of distinct words never coincide


def test_prune_asks_fewer_queries_and_one_at_share_one(parts: SpanParser) -> None:
    sentences = short_sentences()
    parts = copy.deepcopy(parts)
    torch.manual_seed(5)
    for weight in parts.proposal.parameters():  # a random parser's proposal is uniform: every span ties
        torch.nn.init.normal_(weight, std=0.5)
    runs = {share: parse_spans(parts, sentences, k=3, retrieval=False, prune=share) for share in (0.0, 0.2, 1.0)}
    for results, _ in runs.values():
        check_output(parts, sentences, results)
    queries = [stats.queries for _, stats in runs.values()]
    assert queries[0] >= queries[1] >= queries[2] and queries[0] > queries[2]
    fitting = [s for s in sentences if parts.linker.queries.fits(parts.linker.queries.sentence_pieces(s.forms))]
    assert queries[2] == sum(1 + len(s) for s in fitting)  # ROOT's query and each word's best span (no ties here)
    assert parts.settings(InferenceOptions()).prune == 0.0  # the default keeps all k


def test_dp_trees_are_projective_unless_counted(parts: SpanParser) -> None:
    sentences = short_sentences()
    results, stats = parse_spans(parts, sentences, k=3, decoder="projective", retrieval=True)
    check_output(parts, sentences, results)
    projective = sum(is_projective(p.heads) for p in results)
    assert projective >= len(sentences) - stats.dp_fallbacks - stats.too_long


def test_queries_are_distinct_per_sentence(parts: SpanParser, monkeypatch: pytest.MonkeyPatch) -> None:
    builder = parts.linker.queries
    built: dict[int, list[tuple[int, int, int]]] = {}
    original = builder.build

    def recording_build(cached, root, start, end):
        built.setdefault(id(cached), []).append((root, start, end))
        return original(cached, root, start, end)

    monkeypatch.setattr(builder, "build", recording_build)
    sentences = short_sentences()
    results, stats = parse_spans(parts, sentences, k=2, retrieval=True, batch_tokens=300)
    check_output(parts, sentences, results)
    assert sum(len(v) for v in built.values()) == stats.queries
    for spans in built.values():
        assert len(spans) == len(set(spans))  # no (root, start, end) queried twice in a sentence
        n = max(e for _, _, e in spans)
        assert (0, 1, n) in spans  # ROOT's query is always run (child side)


def test_too_long_sentence_takes_the_counted_fallback(parts: SpanParser) -> None:
    long = next(s for s in read_conllu(TRAIN) if len(s) == 40)
    assert not parts.linker.queries.fits(parts.linker.queries.sentence_pieces(long.forms))
    sentences = [Sentence.from_tokens(["Hello", "world", "!"]), long, Sentence(words=[])]
    for decoder in ("projective", "mst"):
        results, stats = parse_spans(parts, sentences, k=2, decoder=decoder)
        assert stats.too_long == 1 and stats.sentences == 3
        assert stats.queries >= 4  # the short sentence still went through the linker
        check_output(parts, sentences[:2], results[:2])
        assert (results[2].heads, results[2].labels) == ([], [])


def test_options_and_modes_are_restored(parts: SpanParser) -> None:
    sentences = short_sentences()[:2]
    parts.linker.train()
    results, _ = parse_spans(parts, sentences, k=1, lam=0.5, mutual=False, decoder="mst")
    check_output(parts, sentences, results)
    assert parts.linker.training and parts.encoder.training is True
    with pytest.raises(ValueError):
        parse_spans(parts, sentences, decoder="eisner")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def late_parts(parts: SpanParser) -> SpanParser:
    """The same encoder and proposal with a random late-interaction linker."""
    torch.manual_seed(4)
    linker = {"format": "late", "dim": 16, "layers": 1, "heads": 2, "ff": 32, "mlp": 16, "label_mlp": 8, "dropout": 0.0}
    late = SpanParser(parts.encoder, parts.labels, linker=linker, span_mlp=16)
    late.proposal = parts.proposal
    return late


@pytest.mark.parametrize("linker", ["faithful", "late"])
def test_labels_read_at_the_arcs_equal_the_full_label_table(parts, late_parts, linker: str) -> None:
    """``LabelStates`` (what a parse keeps) scores labels only where asked; at every (candidate, parent root)
    it must agree with the ``LabelTable`` computed for all pairs while scoring, and the decoded parses too."""
    chosen_parts = parts if linker == "faithful" else late_parts
    sentences = short_sentences()
    inference = chosen_parts.stages(InferenceOptions(k=2))
    with evaluating(chosen_parts):
        table, _ = inference.score(sentences, label_states=False)
        states, _ = inference.score(sentences, label_states=True)
    for eager, lazy in zip(table, states):
        if eager.labels is None:
            continue
        assert isinstance(eager.labels, LabelTable) and isinstance(lazy.labels, LabelStates)
        size, width = eager.labels.ids.shape
        rows, roots = np.repeat(np.arange(size), width), np.tile(np.arange(width), size)  # every pair
        (lazy_ids, lazy_probs), (eager_ids, eager_probs) = read_labels([(lazy.labels, rows, roots), (eager.labels, rows, roots)])
        assert np.array_equal(lazy_ids, eager_ids)
        assert np.allclose(lazy_probs, eager_probs, atol=1e-5)  # batched differently: float noise only
        assert np.array_equal(lazy.link, eager.link)
    assert inference.options.decoder == "projective"  # span_dp
    assert inference.decode(states)[0] == inference.decode(table)[0]


@given(st.lists(st.integers(0, 50), max_size=30), st.integers(1, 100))
def test_groups_are_consecutive_runs_within_the_budget(costs: list[int], budget: int) -> None:
    """Every index once, in order; a group over the budget is one item alone; no two neighbours fit in one."""
    found = groups(costs, budget)
    assert [i for g in found for i in g] == list(range(len(costs)))
    assert all(sum(costs[i] for i in g) <= budget or len(g) == 1 for g in found)
    assert all(sum(costs[i] for i in a) + costs[b[0]] > budget for a, b in zip(found, found[1:]))


def test_groups_of_sentences_change_nothing(late_parts: SpanParser, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse links and decodes GROUP_POSITIONS query positions (k·n·max(1 + n, QUERY_POSITIONS) a sentence) at a
    time, shortest sentences first: same trees, same order, same counters as in one group."""
    sentences = short_sentences()
    whole, whole_stats = parse_spans(late_parts, sentences, k=2)
    monkeypatch.setattr(span_inference, "QUERY_POSITIONS", 1)
    monkeypatch.setattr(span_inference, "GROUP_POSITIONS", 2 * 3 * 4)  # a group per sentence of 3 words or more
    grouped, grouped_stats = parse_spans(late_parts, sentences, k=2)
    assert len(groups(sorted(2 * len(s) * (len(s) + 1) for s in sentences), 2 * 3 * 4)) > 3  # grouped indeed
    assert grouped == whole
    assert (grouped_stats.queries, grouped_stats.sentences) == (whole_stats.queries, whole_stats.sentences)
