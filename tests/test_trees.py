"""Tests for spandep.data.trees: hand-built examples plus property tests against naive checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brute import naive_descendants, naive_is_projective, naive_is_tree
from spandep.data.trees import children, hull_spans, is_projective, is_valid_tree, tree_problems

# "The dog barked loudly": The <- dog <- barked (root) -> loudly
PROJECTIVE = [2, 3, 0, 3]
# word 1 is the root child; 3 and 4 hang from 1, 2 hangs from 4: arcs (1, 3) and (2, 4) cross
NON_PROJECTIVE = [0, 4, 1, 1]
# word 2 is the root child; 1 hangs from 3: arc (1, 3) crosses the ROOT arc (0, 2)
CROSSES_ROOT_ARC = [3, 0, 2]


def test_children() -> None:
    assert children(PROJECTIVE) == [[3], [], [1], [2, 4], []]
    assert children(NON_PROJECTIVE) == [[1], [3, 4], [], [], [2]]
    assert children([]) == [[]]


def test_hull_spans_projective() -> None:
    assert hull_spans(PROJECTIVE) == [(1, 1), (1, 2), (1, 4), (4, 4)]
    assert hull_spans([0]) == [(1, 1)]


def test_hull_spans_non_projective() -> None:
    # word 4 governs only {2, 4} but its hull (2, 4) also covers word 3
    assert hull_spans(NON_PROJECTIVE) == [(1, 4), (2, 2), (3, 3), (2, 4)]
    assert hull_spans(CROSSES_ROOT_ARC) == [(1, 1), (1, 3), (1, 3)]


def test_hull_spans_long_chains() -> None:
    n = 10_000
    rightward = [0] + list(range(1, n))  # word i + 1 depends on word i
    assert hull_spans(rightward) == [(i, n) for i in range(1, n + 1)]
    leftward = list(range(2, n + 1)) + [0]  # word i depends on word i + 1
    assert hull_spans(leftward) == [(1, i) for i in range(1, n + 1)]
    assert is_projective(rightward) and is_projective(leftward)
    assert tree_problems(rightward) == [] and tree_problems(leftward) == []


def test_hull_spans_rejects_non_trees() -> None:
    with pytest.raises(ValueError, match="cycle"):
        hull_spans([0, 3, 2])
    with pytest.raises(ValueError):
        hull_spans([0, 7])


def test_is_projective_examples() -> None:
    assert is_projective(PROJECTIVE)
    assert not is_projective(NON_PROJECTIVE)
    assert not is_projective(CROSSES_ROOT_ARC)
    assert is_projective([0])
    assert is_projective([])
    assert is_projective([2, 0, 2, 3, 3])  # arcs sharing end points do not cross
    with pytest.raises(ValueError):
        is_projective([0, 3])


def test_tree_problems_valid() -> None:
    for heads in (PROJECTIVE, NON_PROJECTIVE, CROSSES_ROOT_ARC, [0]):
        assert tree_problems(heads) == []
        assert is_valid_tree(heads)


def test_tree_problems_out_of_range() -> None:
    problems = tree_problems([0, 5, -1])
    assert any("word 2" in p and "outside [0, 3]" in p for p in problems)
    assert any("word 3" in p and "outside" in p for p in problems)
    assert not is_valid_tree([0, 5, -1])


def test_tree_problems_self_loop() -> None:
    problems = tree_problems([0, 2])
    assert problems == ["word 2 is its own head (self-loop)"]


def test_tree_problems_root_count() -> None:
    (problem,) = tree_problems([0, 0, 2])
    assert "2 words attached to ROOT" in problem and "1, 2" in problem
    problems = tree_problems([2, 3, 1])
    assert any("0 words attached to ROOT" in p for p in problems)


def test_tree_problems_cycle_names_words() -> None:
    problems = tree_problems([0, 3, 4, 2, 1])
    assert len(problems) == 1
    assert "cycle" in problems[0] and "[2, 3, 4]" in problems[0]
    assert "2 -> 3 -> 4 -> 2" in problems[0]
    # two separate cycles, no root: three problems
    problems = tree_problems([2, 1, 4, 3])
    assert sum("cycle" in p for p in problems) == 2
    assert any("[1, 2]" in p for p in problems) and any("[3, 4]" in p for p in problems)


def test_tree_problems_missing_heads_and_empty() -> None:
    assert any("word 2 has no head" in p for p in tree_problems([0, None]))
    assert tree_problems([]) != []


# --------------------------------------------------------------------------- property tests


@st.composite
def any_trees(draw: st.DrawFn, max_n: int = 40) -> list[int]:
    """Uniform-ish random tree: words join in random order, each under an earlier word."""
    n = draw(st.integers(1, max_n))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for index, word in enumerate(order[1:], start=1):
        heads[word - 1] = order[draw(st.integers(0, index - 1))]
    return heads


@st.composite
def projective_trees(draw: st.DrawFn, max_n: int = 40) -> list[int]:
    """Random projective tree: each span picks its head word and splits around it."""
    n = draw(st.integers(1, max_n))
    heads = [0] * n
    todo = [(1, n, 0)]  # (first word, last word, head of the span's head)
    while todo:
        lo, hi, parent = todo.pop()
        if lo > hi:
            continue
        top = draw(st.integers(lo, hi))
        heads[top - 1] = parent
        todo += [(lo, top - 1, top), (top + 1, hi, top)]
    return heads


trees = st.one_of(any_trees(), projective_trees())


@settings(max_examples=200, deadline=None)
@given(trees)
def test_hull_spans_properties(heads: list[int]) -> None:
    n = len(heads)
    assert is_valid_tree(heads) and naive_is_tree(tuple(heads))
    hulls = hull_spans(heads)
    assert len(hulls) == n
    contiguous = True
    for word, (start, end) in enumerate(hulls, start=1):
        below = naive_descendants(heads, word)
        assert (start, end) == (min(below), max(below))
        assert start <= word <= end
        head = heads[word - 1]
        if head:
            assert hulls[head - 1][0] <= start and end <= hulls[head - 1][1]
        contiguous &= end - start + 1 == len(below)
    # projective exactly when every hull holds nothing but its own subtree
    assert is_projective(heads) == contiguous == naive_is_projective(tuple(heads))


@settings(max_examples=200, deadline=None)
@given(projective_trees())
def test_generated_projective_trees_are_projective(heads: list[int]) -> None:
    assert is_projective(heads)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.lists(st.integers(0, n), min_size=n, max_size=n)))
def test_validity_and_projectivity_match_naive(heads: list[int]) -> None:
    assert is_valid_tree(heads) == naive_is_tree(tuple(heads))
    assert is_projective(heads) == naive_is_projective(tuple(heads))
    if not is_valid_tree(heads):
        assert tree_problems(heads)
