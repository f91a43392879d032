"""Span decoders (span_dp, span_mst) against brute force, oracle scores on EWT trees, and hand examples."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brute import all_trees, best_tree, tree_score
from spandep.data.conllu import read_conllu
from spandep.data.trees import hull_spans, is_projective, tree_problems
from spandep.decoding.spans import (
    SpanCandidates,
    SpanDecodeResult,
    span_dp,
    span_edge_scores,
    span_mst,
    span_tree_score,
)

NEG_INF = float("-inf")
FIXTURES = Path(__file__).parent / "fixtures"
MAX_N = 6



def index_of(cands: SpanCandidates, root: int, start: int, end: int) -> int:
    """Index of the candidate ``(root, start, end)``; ``KeyError`` if absent."""
    hit = np.flatnonzero((cands.root == root) & (cands.start == start) & (cands.end == end))  # (0 or 1,)
    if hit.size == 0:
        raise KeyError((root, start, end))
    return int(hit[0])

def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def weighted(link: np.ndarray, lam: float) -> np.ndarray:
    """lam * link with -inf staying -inf (the decoders' convention), written independently."""
    out = np.full(link.shape, NEG_INF)  # (S, S)
    finite = np.isfinite(link)
    out[finite] = lam * link[finite]
    return out


@lru_cache(maxsize=None)
def projective_hulls(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All projective trees of n words (T, n) and their hull spans (T, n, 2)."""
    trees = all_trees(n, True)  # (T, n)
    hulls = np.array([hull_spans(t.tolist()) for t in trees], dtype=np.int64)  # (T, n, 2)
    hulls = hulls.reshape(len(trees), n, 2)  # (T, n, 2), also when T = 0
    return trees, hulls


def brute_dp_score(cands: SpanCandidates, link: np.ndarray, lam: float) -> float:
    """Max over projective trees whose every hull span is a candidate of its word (-inf if none)."""
    n = cands.n
    lw = weighted(link, lam)  # (S, S)
    trees, hulls = projective_hulls(n)
    lookup = np.full((n + 1, n + 2, n + 2), -1, dtype=np.int64)  # (n+1, n+2, n+2)
    lookup[cands.root, cands.start, cands.end] = np.arange(cands.size)
    idx = lookup[np.arange(1, n + 1)[None, :], hulls[..., 0], hulls[..., 1]]  # (T, n)
    ok = (idx >= 0).all(axis=1)  # (T,)
    if not ok.any():
        return NEG_INF
    trees, idx = trees[ok], idx[ok]
    with_root = np.concatenate([np.zeros((len(idx), 1), dtype=np.int64), idx], axis=1)  # (T, n+1)
    parent = np.take_along_axis(with_root, trees, axis=1)  # (T, n)
    totals = cands.score[idx].sum(axis=1) + lw[parent, idx].sum(axis=1)  # (T,)
    return float(totals.max())


def naive_edges(cands: SpanCandidates, link: np.ndarray, lam: float) -> np.ndarray:
    """(n+1, n+1) [d, h] edge scores by plain loops over candidate pairs."""
    n = cands.n
    lw = weighted(link, lam)
    edges = np.full((n + 1, n + 1), NEG_INF)
    for p in range(cands.size):
        for c in range(1, cands.size):
            h, d = int(cands.root[p]), int(cands.root[c])
            value = cands.score[p] + cands.score[c] + lw[p, c]
            edges[d, h] = max(edges[d, h], value)
    return edges


def check_result(cands: SpanCandidates, res: SpanDecodeResult) -> list[int]:
    """Shape/validity checks common to both decoders; returns heads of words 1..n."""
    n = cands.n
    assert res.heads.shape == (n + 1,) and res.chosen.shape == (n + 1,)
    assert res.heads.dtype == np.int64 and res.chosen.dtype == np.int64
    assert res.heads[0] == 0 and res.chosen[0] == 0
    heads = res.heads[1:].tolist()
    assert tree_problems(heads) == []
    assert cands.root[res.chosen[1:]].tolist() == list(range(1, n + 1))
    return heads


# ------------------------------------------------------------------------------------------- generators


@st.composite
def problems(draw: st.DrawFn, max_n: int = MAX_N) -> tuple[SpanCandidates, np.ndarray, float]:
    """Random candidates (sometimes with a random tree's hulls), scores with ties and -inf, random lam."""
    n = draw(st.sampled_from(range(1, max_n + 1)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    gold = draw(st.sampled_from(["none", "projective", "projective", "any"]))
    keep = draw(st.sampled_from([1.0, 1.0, 0.85]))  # chance to keep each gold hull
    extra = draw(st.integers(0, 3))
    p_inf = draw(st.sampled_from([0.0, 0.1, 0.4]))
    ties = draw(st.booleans())
    lam = draw(st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.floats(0.0, 3.0)))

    def value() -> float:
        return float(rng.integers(-3, 1)) if ties else float(rng.uniform(-5.0, 0.0))

    items: list[tuple[int, int, int, float]] = []
    if gold != "none":
        trees = all_trees(n, gold == "projective")
        heads = trees[rng.integers(len(trees))].tolist()
        for word, (s, e) in enumerate(hull_spans(heads), start=1):
            if rng.random() < keep:
                items.append((word, s, e, value()))
    for word in range(1, n + 1):
        for _ in range(int(rng.integers(0, extra + 1))):
            items.append((word, int(rng.integers(1, word + 1)), int(rng.integers(word, n + 1)), value()))
    covered = {item[0] for item in items}
    for word in range(1, n + 1):
        if word not in covered:
            items.append((word, int(rng.integers(1, word + 1)), int(rng.integers(word, n + 1)), value()))
    if p_inf and items:
        for _ in range(int(rng.integers(0, 2))):
            r, s, e, _ = items[int(rng.integers(len(items)))]
            items.append((r, s, e, NEG_INF))  # a duplicate: merged, keeps the better score
    cands = SpanCandidates.from_lists(n, items)
    size = cands.size
    if ties:
        link = rng.integers(-3, 4, size=(size, size)).astype(np.float64)  # (S, S)
    else:
        link = rng.uniform(-4.0, 4.0, size=(size, size))  # (S, S)
    link[rng.random((size, size)) < p_inf] = NEG_INF
    return cands, link, lam


# ------------------------------------------------------------------------------------------- brute force


@settings(max_examples=250, deadline=None)
@given(problems())
def test_span_dp_matches_brute_force(problem: tuple[SpanCandidates, np.ndarray, float]) -> None:
    cands, link, lam = problem
    res = span_dp(cands, link, lam)
    heads = check_result(cands, res)
    best = brute_dp_score(cands, link, lam)
    if math.isfinite(best):
        assert not res.fallback
        assert close(res.score, best), (res.score, best)
        assert close(span_tree_score(cands, link, lam, res.heads, res.chosen), best)
        assert is_projective(heads)
        spans = [(int(cands.start[c]), int(cands.end[c])) for c in res.chosen[1:]]
        assert hull_spans(heads) == spans  # every chosen span is exactly its word's subtree
    else:
        assert res.fallback
        mst_res = span_mst(cands, link, lam)
        assert res.heads.tolist() == mst_res.heads.tolist()
        assert res.chosen.tolist() == mst_res.chosen.tolist()


@settings(max_examples=250, deadline=None)
@given(problems())
def test_span_mst_matches_brute_force(problem: tuple[SpanCandidates, np.ndarray, float]) -> None:
    cands, link, lam = problem
    res = span_mst(cands, link, lam)
    heads = check_result(cands, res)
    assert not res.fallback
    edges = naive_edges(cands, link, lam)  # (n+1, n+1) [d, h]
    np.testing.assert_allclose(span_edge_scores(cands, link, lam)[1:], edges[1:], rtol=1e-12, atol=1e-12)
    best, _ = best_tree(edges, projective=False)
    got = tree_score(edges, heads)
    assert close(got, best), (got, best)
    assert close(res.score, got)
    # chosen[d] is the dependent's span of a maximising pair for the chosen head
    lw = weighted(link, lam)
    for d in range(1, cands.n + 1):
        h = heads[d - 1]
        parents = np.flatnonzero(cands.root == h)
        c = res.chosen[d]
        assert close(float(np.max(cands.score[parents] + cands.score[c] + lw[parents, c])), edges[d, h])


# ------------------------------------------------------------------------------------------- oracle


def oracle_problem(
    heads: list[int], rng: np.random.Generator, wrong: int = 3
) -> tuple[SpanCandidates, np.ndarray]:
    """Gold hulls (scores in [-0.5, 0]) plus random wrong spans (scores in [-3, -0.6]); link 0 on gold
    parent-child pairs, -5 elsewhere."""
    n = len(heads)
    hulls = hull_spans(heads)
    items = [(w, s, e, float(rng.uniform(-0.5, 0.0))) for w, (s, e) in enumerate(hulls, start=1)]
    for w in range(1, n + 1):
        for _ in range(wrong):
            s, e = int(rng.integers(1, w + 1)), int(rng.integers(w, n + 1))
            items.append((w, s, e, float(rng.uniform(-3.0, -0.6))))
    cands = SpanCandidates.from_lists(n, items)
    gold = [0] + [index_of(cands, w, s, e) for w, (s, e) in enumerate(hulls, start=1)]
    link = np.full((cands.size, cands.size), -5.0)  # (S, S)
    for d, h in enumerate(heads, start=1):
        link[gold[h], gold[d]] = 0.0
    return cands, link


def fixture_trees() -> list[list[int]]:
    trees = []
    for name in ("en_ewt_train_40.conllu", "en_ewt_excerpt.conllu"):
        for sent in read_conllu(FIXTURES / name):
            heads = sent.heads
            if all(h is not None for h in heads) and not tree_problems(heads):
                trees.append([int(h) for h in heads if h is not None])
    return trees


def test_oracle_recovers_gold_on_ewt_and_small_nonprojective_trees() -> None:
    rng = np.random.default_rng(0)
    trees = fixture_trees()
    assert len(trees) >= 40
    small = all_trees(5, False)
    trees += [t.tolist() for t in small[rng.choice(len(small), 40, replace=False)]]
    projective = nonprojective = 0
    for heads in trees:
        cands, link = oracle_problem(heads, rng)
        mst_res = span_mst(cands, link, 1.0)
        assert mst_res.heads[1:].tolist() == heads
        dp_res = span_dp(cands, link, 1.0)
        check_result(cands, dp_res)
        if is_projective(heads):
            projective += 1
            assert not dp_res.fallback
            assert dp_res.heads[1:].tolist() == heads
            spans = [(int(cands.start[c]), int(cands.end[c])) for c in dp_res.chosen[1:]]
            assert spans == hull_spans(heads)
        else:
            nonprojective += 1
    assert projective >= 40 and nonprojective >= 2


# ------------------------------------------------------------------------------------------- hand examples


def test_hand_example_projective() -> None:
    # "a b c": gold 2 is the root with children 1 and 3.
    cands = SpanCandidates.from_lists(
        3,
        [(2, 1, 3, -0.1), (1, 1, 1, -0.2), (3, 3, 3, -0.1), (1, 1, 3, -1.0), (3, 2, 3, -2.0), (1, 1, 1, -5.0)],
    )
    assert cands.size == 6  # the duplicate (1, 1, 1) merged, keeping -0.2
    assert cands.score[index_of(cands, 1, 1, 1)] == -0.2
    link = np.zeros((6, 6))  # (S, S)
    res = span_dp(cands, link, 1.0)
    assert res.heads.tolist() == [0, 2, 0, 2] and not res.fallback
    assert res.chosen.tolist() == [0, index_of(cands, 1, 1, 1), index_of(cands, 2, 1, 3), index_of(cands, 3, 3, 3)]
    assert close(res.score, -0.4)
    # Tree 1 -> 3 -> 2 would use (1, 1, 3) and (3, 2, 3) and needs (2, 2, 2), which is not a candidate:
    # a strong link between the first two changes nothing while it stays infeasible.
    link[index_of(cands, 1, 1, 3), index_of(cands, 3, 2, 3)] = 5.0
    res = span_dp(cands, link, 1.0)
    assert res.heads.tolist() == [0, 2, 0, 2] and not res.fallback
    rows = zip(cands.root[1:], cands.start[1:], cands.end[1:], cands.score[1:])
    more = SpanCandidates.from_lists(3, [*rows, (2, 2, 2, -0.5)])
    link = np.zeros((more.size, more.size))  # (S, S)
    link[index_of(more, 1, 1, 3), index_of(more, 3, 2, 3)] = 5.0
    res = span_dp(more, link, 1.0)
    # now feasible: -1.0 - 2.0 - 0.5 + 5.0 = 1.5 beats -0.4
    assert res.heads.tolist() == [0, 0, 3, 1] and close(res.score, 1.5)
    assert res.chosen.tolist() == [0, index_of(more, 1, 1, 3), index_of(more, 2, 2, 2), index_of(more, 3, 2, 3)]
    assert close(span_dp(more, link, 0.1).score, -0.4)  # with a small lam the span scores decide


def test_hand_example_lambda_zero_and_impossible_links() -> None:
    cands = SpanCandidates.from_lists(2, [(1, 1, 2, -1.0), (2, 2, 2, -1.0), (2, 1, 2, -0.5), (1, 1, 1, -0.5)])
    link = np.zeros((cands.size, cands.size))  # (S, S)
    # forbid ROOT -> (2, 1, 2): the cheaper tree 2 -> 1 is then impossible even with lam = 0
    link[0, index_of(cands, 2, 1, 2)] = NEG_INF
    res = span_dp(cands, link, 0.0)
    assert res.heads.tolist() == [0, 0, 1] and close(res.score, -2.0)


def test_fallback_when_no_projective_tree() -> None:
    # Nobody spans [1, 2]: ROOT has no possible child.
    cands = SpanCandidates.from_lists(2, [(1, 1, 1, -0.1), (2, 2, 2, -0.2)])
    res = span_dp(cands, np.zeros((3, 3)), 1.0)
    assert res.fallback and tree_problems(res.heads[1:].tolist()) == []
    # The gold hulls of the non-projective tree 3 -> 1 -> 4 -> 2 tile no projective tree.
    heads = [3, 4, 0, 1]
    cands, link = oracle_problem(heads, np.random.default_rng(1), wrong=0)
    res = span_dp(cands, link, 1.0)
    assert res.fallback
    assert res.heads[1:].tolist() == heads  # the MST fallback finds the gold tree
    assert span_mst(cands, link, 1.0).heads[1:].tolist() == heads


def test_span_mst_hand_example() -> None:
    # ROOT -> 1 is cheap but word 2 prefers head 1 only through a specific span pair.
    cands = SpanCandidates.from_lists(2, [(1, 1, 2, -1.0), (1, 1, 1, -0.1), (2, 2, 2, -0.2), (2, 1, 2, -0.3)])
    link = np.full((cands.size, cands.size), -2.0)  # (S, S)
    link[index_of(cands, 1, 1, 2), index_of(cands, 2, 2, 2)] = 3.0
    link[0, index_of(cands, 1, 1, 2)] = 0.0
    res = span_mst(cands, link, 1.0)
    # edge 0->1: max(0 + s(C) + link): (1,1,2): -1.0 + 0 = -1.0; (1,1,1): -0.1 - 2 = -2.1 -> -1.0
    # edge 1->2: (1,1,2)+(2,2,2)+3 = 1.8 ; total 0.8
    # alternative 0->2 (best -0.3-2=-2.3 or -0.2-2) then 2->1 ((2,2,2)/(2,1,2) with (1,*) at -2): worse
    assert res.heads.tolist() == [0, 0, 1]
    assert res.chosen.tolist() == [0, index_of(cands, 1, 1, 2), index_of(cands, 2, 2, 2)]
    assert close(res.score, 0.8)


def test_validation_errors() -> None:
    with pytest.raises(ValueError, match="at least one candidate"):
        SpanCandidates.from_lists(3, [(1, 1, 1, 0.0), (3, 3, 3, 0.0)])
    with pytest.raises(ValueError, match="start <= root <= end"):
        SpanCandidates.from_lists(2, [(1, 2, 2, 0.0), (2, 2, 2, 0.0)])
    with pytest.raises(ValueError, match="ROOT span"):
        SpanCandidates.from_lists(2, [(0, 1, 2, 0.0), (1, 1, 1, 0.0), (2, 2, 2, 0.0)])
    with pytest.raises(ValueError, match="duplicate"):
        SpanCandidates(2, [0, 1, 2, 2], [1, 1, 2, 2], [2, 1, 2, 2], [0.0, 0.0, 0.0, -1.0])
    with pytest.raises(ValueError, match="candidate 0"):
        SpanCandidates(2, [1, 1, 2], [1, 1, 2], [2, 1, 2], [0.0, 0.0, 0.0])
    cands = SpanCandidates.from_lists(2, [(1, 1, 2, 0.0), (2, 2, 2, 0.0)])
    with pytest.raises(ValueError, match="link must be"):
        span_dp(cands, np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        span_mst(cands, np.full((3, 3), np.nan), 1.0)


def test_larger_sentence_is_a_valid_tree() -> None:
    """Not timed: a 60-word sentence with k = 3 random candidates per word plus gold hulls."""
    rng = np.random.default_rng(3)
    n = 60
    heads = [0] * n
    order = rng.permutation(np.arange(1, n + 1)).tolist()
    for i, w in enumerate(order[1:], start=1):  # random tree: attach to an earlier word
        heads[w - 1] = order[int(rng.integers(0, i))]
    cands, _ = oracle_problem(heads, rng, wrong=2)
    link = rng.normal(size=(cands.size, cands.size))  # (S, S)
    for res in (span_dp(cands, link, 1.0), span_mst(cands, link, 1.0)):
        check_result(cands, res)
