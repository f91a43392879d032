"""Constrained decoding (issue 49): every decoder keeps given heads and subtrees, and its tree is the best one that
does, checked against brute force on small sentences; constraints no tree keeps are a ConstraintError."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from brute import all_trees, naive_descendants, tree_score
from spandep.data.trees import hull_spans, is_projective, tree_problems
from spandep.decoding import FREE, ConstraintError, Fixed, eisner, mst, mst_single, span_dp, span_mst
from spandep.decoding.spans import SpanCandidates, span_edge_scores, span_tree_score

NEG_INF = float("-inf")


def keeps(trees: np.ndarray, fixed: Fixed) -> np.ndarray:
    """Which of ``trees (T, n)`` keep ``fixed``, written naively: every given head, and each span the exact set of
    one word's descendants."""
    ok = np.ones(len(trees), dtype=bool)  # (T,)
    for d, h in enumerate(fixed.heads, start=1):
        if h != FREE:
            ok &= trees[:, d - 1] == h
    for t, heads in enumerate(trees):
        for s, e in fixed.spans:
            if ok[t] and not any(naive_descendants(heads.tolist(), w) == set(range(s, e + 1)) for w in range(s, e + 1)):
                ok[t] = False
    return ok


def best_kept(scores: np.ndarray, fixed: Fixed, projective: bool) -> float:
    """The best score over all trees (projective ones with ``projective``) that keep ``fixed``."""
    n = scores.shape[0] - 1
    trees = all_trees(n, projective)  # (T, n)
    trees = trees[keeps(trees, fixed)]
    totals = scores[np.arange(1, n + 1), trees].sum(axis=1)  # (T,)
    return float(totals.max())


@st.composite
def constraints(draw: st.DrawFn, n: int, projective: bool) -> Fixed:
    """Constraints some tree keeps: a random tree's arcs, each given with a random chance, and the spans of some of
    its words whose subtrees are contiguous."""
    trees = all_trees(n, projective)
    tree = trees[draw(st.integers(0, len(trees) - 1))].tolist()
    share = draw(st.sampled_from([0.0, 0.3, 0.6, 1.0]))
    heads = [h if draw(st.floats(0, 1)) < share else FREE for h in tree]
    spans = []
    for word in draw(st.lists(st.integers(1, n), max_size=2)):
        below = naive_descendants(tree, word)
        if max(below) - min(below) + 1 == len(below):
            spans.append((min(below), max(below)))
    return Fixed.of(heads, spans)


@st.composite
def arc_problems(draw: st.DrawFn, projective: bool) -> tuple[np.ndarray, Fixed]:
    n = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ties = draw(st.booleans())
    scores = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(np.float64) if ties else rng.uniform(-10, 2, size=(n + 1, n + 1))
    return scores, draw(constraints(n, projective))


def decoded(decoder, scores: np.ndarray, fixed: Fixed) -> list[int]:
    n = scores.shape[0] - 1
    heads = decoder(torch.from_numpy(scores)[None], torch.tensor([n]), [fixed])  # (1, n+1)
    return heads[0, 1:].tolist()


@settings(max_examples=250, deadline=None)
@given(arc_problems(projective=True))
def test_eisner_keeps_constraints_and_is_the_best_tree_that_does(problem: tuple[np.ndarray, Fixed]) -> None:
    scores, fixed = problem
    heads = decoded(eisner, scores, fixed)
    assert tree_problems(heads) == [] and is_projective(heads)
    assert fixed.broken(heads) is None
    assert math.isclose(tree_score(scores, heads), best_kept(scores, fixed, projective=True), rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=250, deadline=None)
@given(arc_problems(projective=False))
def test_mst_keeps_constraints_and_is_the_best_tree_that_does(problem: tuple[np.ndarray, Fixed]) -> None:
    scores, fixed = problem
    heads = decoded(mst, scores, fixed)
    assert tree_problems(heads) == []
    assert fixed.broken(heads) is None
    assert math.isclose(tree_score(scores, heads), best_kept(scores, fixed, projective=False), rel_tol=1e-9, abs_tol=1e-9)
    assert mst_single(scores, fixed)[1:].tolist() == heads


@settings(max_examples=150, deadline=None)
@given(arc_problems(projective=False), st.data())
def test_model_minus_inf_arcs_never_outweigh_a_constraint(problem: tuple[np.ndarray, Fixed], data: st.DataObject) -> None:
    """Arcs the scores forbid (-inf) are used only when every tree keeping the constraints needs one."""
    scores, fixed = problem
    cells = data.draw(st.lists(st.tuples(st.integers(1, fixed.n), st.integers(0, fixed.n)), max_size=4))
    for d, h in cells:
        scores[d, h] = NEG_INF
    for decoder, projective in ((mst, False), (eisner, True)):
        if not keeps(all_trees(fixed.n, projective), fixed).any():  # given arcs that only a non-projective tree keeps
            with pytest.raises(ConstraintError):
                decoded(decoder, scores, fixed)
            continue
        heads = decoded(decoder, scores, fixed)
        assert fixed.broken(heads) is None
        best = best_kept(scores, fixed, projective)
        assert tree_score(scores, heads) == (pytest.approx(best, rel=1e-9, abs=1e-9) if math.isfinite(best) else best)


@st.composite
def span_problems(draw: st.DrawFn, projective: bool) -> tuple[SpanCandidates, np.ndarray, float, Fixed]:
    """Candidates of every word (a random tree's hulls among them, so some tree fits) and constraints of that tree."""
    n = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    trees = all_trees(n, projective)
    tree = trees[rng.integers(len(trees))].tolist()
    items = [(w, s, e, float(rng.uniform(-5, 0))) for w, (s, e) in enumerate(hull_spans(tree), start=1)]
    for _ in range(draw(st.integers(0, 2 * n))):
        w = int(rng.integers(1, n + 1))
        items.append((w, int(rng.integers(1, w + 1)), int(rng.integers(w, n + 1)), float(rng.uniform(-5, 0))))
    cands = SpanCandidates.from_lists(n, items)
    link = rng.uniform(-4, 4, size=(cands.size, cands.size))  # (S, S)
    link[rng.random((cands.size, cands.size)) < 0.1] = NEG_INF
    share = draw(st.sampled_from([0.0, 0.4, 1.0]))
    heads = [h if rng.random() < share else FREE for h in tree]
    words = draw(st.lists(st.integers(1, n), max_size=2))
    spans = [(min(b), max(b)) for b in (naive_descendants(tree, w) for w in words) if max(b) - min(b) + 1 == len(b)]
    fixed = Fixed.of(heads, spans)
    return cands, link, draw(st.sampled_from([0.0, 0.5, 1.0])), fixed


def assert_kept(heads: list[int], fixed: Fixed) -> list[int]:
    """``heads``, checked to be a tree that keeps ``fixed``."""
    assert tree_problems(heads) == [] and fixed.broken(heads) is None
    return heads


def brute_span_dp(cands: SpanCandidates, link: np.ndarray, lam: float, fixed: Fixed) -> float:
    """Max over projective trees keeping ``fixed`` whose every hull span is a candidate of its word (-inf if none)."""
    n = cands.n
    index = {(int(r), int(s), int(e)): c for c, (r, s, e) in enumerate(zip(cands.root, cands.start, cands.end))}
    best = NEG_INF
    trees = all_trees(n, True)
    for tree in trees[keeps(trees, fixed)].tolist():
        chosen = [index.get((w, s, e)) for w, (s, e) in enumerate(hull_spans(tree), start=1)]
        if None not in chosen:
            best = max(best, span_tree_score(cands, link, lam, np.array([0, *tree]), np.array([0, *chosen])))
    return best


@settings(max_examples=200, deadline=None)
@given(span_problems(projective=True))
def test_span_dp_keeps_constraints_and_is_the_best_tree_that_does(problem) -> None:
    cands, link, lam, fixed = problem
    res = span_dp(cands, link, lam, fixed)
    assert_kept(res.heads[1:].tolist(), fixed)
    best = brute_span_dp(cands, link, lam, fixed)
    if math.isfinite(best):
        assert not res.fallback and math.isclose(res.score, best, rel_tol=1e-9, abs_tol=1e-9)
    else:
        assert res.fallback


@settings(max_examples=200, deadline=None)
@given(span_problems(projective=False))
def test_span_mst_keeps_constraints_and_is_the_best_tree_that_does(problem) -> None:
    cands, link, lam, fixed = problem
    res = span_mst(cands, link, lam, fixed)
    heads = assert_kept(res.heads[1:].tolist(), fixed)
    edges = span_edge_scores(cands, link, lam)  # (n+1, n+1) [d, h]
    assert tree_score(edges, heads) == pytest.approx(best_kept(edges, fixed, projective=False), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(
    ("heads", "spans", "projective", "words"),
    [
        ([0, 0, FREE], [], False, "words 1 and 2 are both given head 0"),
        ([2, 3, 1], [], False, "form a cycle"),
        ([FREE, FREE, FREE, FREE], [(1, 2), (2, 3)], False, "subtrees 1-2 and 2-3 overlap"),
        ([3, FREE, 0, 2], [], True, "the given arcs 3->1 and 2->4 cross"),
        ([FREE, FREE, 0], [(2, 3)], False, "word 3 of subtree 2-3 is given head 0"),
        ([2, FREE, FREE], [(2, 3)], False, "word 1 is given head 2 inside subtree 2-3"),
        ([FREE, 1, 1], [(2, 3)], False, "words 2 and 3 of subtree 2-3 are both given heads outside it"),
    ],
)
def test_constraints_no_tree_keeps_are_one_error_naming_the_words(heads, spans, projective, words) -> None:
    scores = np.zeros((len(heads) + 1, len(heads) + 1))
    decoder = eisner if projective else mst
    with pytest.raises(ConstraintError, match=words):
        decoded(decoder, scores, Fixed.of(heads, spans))


def test_crossing_arcs_are_kept_by_mst_refused_by_eisner_and_the_span_dp_falls_back() -> None:
    """Eisner has no tree to give; the span DP gives span MST's, as it does for candidates without a projective tree."""
    fixed = Fixed.of([3, FREE, 0, 2])
    scores = np.zeros((5, 5))
    heads = decoded(mst, scores, fixed)
    assert heads[0] == 3 and heads[2] == 0 and heads[3] == 2 and tree_problems(heads) == []
    with pytest.raises(ConstraintError, match="cross"):
        decoded(eisner, scores, fixed)
    cands = SpanCandidates.from_lists(4, [(w, s, e, 0.0) for w in range(1, 5) for s in range(1, w + 1) for e in range(w, 5)])
    res = span_dp(cands, np.zeros((cands.size, cands.size)), 1.0, fixed)
    assert res.fallback and fixed.broken(res.heads[1:].tolist()) is None and tree_problems(res.heads[1:].tolist()) == []


def test_a_root_arc_crossing_a_given_arc_is_found_by_decoding() -> None:
    """Word 2 must be the root (the only free word) and its root arc crosses the given 3->1: no projective tree."""
    fixed = Fixed.of([3, FREE, 2])
    assert fixed.problem(True) is None
    with pytest.raises(ConstraintError, match="no projective tree keeps"):
        decoded(eisner, np.zeros((4, 4)), fixed)
    assert decoded(mst, np.zeros((4, 4)), fixed) == [3, 0, 2]


def test_bad_values_are_value_errors() -> None:
    with pytest.raises(ValueError, match="word 2: given head 2"):
        Fixed.of([0, 2])
    with pytest.raises(ValueError, match="subtree 2-4"):
        Fixed.of([FREE, FREE, FREE], [(2, 4)])


def test_given_arcs_bring_the_spans_they_need() -> None:
    """Word 3's span holds its given head 2 and word 2's spans miss word 3: each gets its best span that fits."""
    from spandep.models.span.candidates import spans_for_given

    n = 4
    start_lp = np.log(np.full((n + 1, n + 1), 0.25))  # (1 + n, 1 + n) [word, boundary]
    end_lp = start_lp.copy()  # (1 + n, 1 + n)
    start_lp[2, 1], end_lp[3, 4] = 0.0, 0.0  # word 2 likes starting at 1, word 3 ending at 4
    spans = spans_for_given([[(1, 1, 0.0)], [(2, 2, 0.0)], [(1, 4, 0.0)], [(4, 4, 0.0)]], start_lp, end_lp, Fixed.of([2, 0, 2, 3]))
    assert (3, 4) in [(s, e) for s, e, _ in spans[2]]  # word 3 without its head 2
    assert (1, 4) in [(s, e) for s, e, _ in spans[1]]  # word 2 over word 1 and over word 3's new span
    assert spans[0] == [(1, 1, 0.0)] and spans[3] == [(4, 4, 0.0)]
