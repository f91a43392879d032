"""Decoder tests: eisner and mst against brute force on small random score matrices."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from brute import all_trees, best_tree, tree_score
from spandep.data.trees import is_projective, tree_problems
from spandep.decoding import eisner, mst, mst_single

NEG_INF = float("-inf")
Decoder = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

values = st.one_of(
    st.floats(-20, 20, allow_nan=False),
    st.integers(-3, 3).map(float),  # many ties
    st.floats(-1e4, 1e4, allow_nan=False),
    st.just(NEG_INF),
)


@st.composite
def score_matrices(draw: st.DrawFn, max_n: int = 6) -> np.ndarray:
    """(n+1, n+1) float64 scores with some -inf arcs, but always one finite projective tree
    (so a finite tree exists for both decoders)."""
    n = draw(st.integers(1, max_n))
    cells = draw(st.lists(values, min_size=(n + 1) ** 2, max_size=(n + 1) ** 2))
    scores = np.array(cells, dtype=np.float64).reshape(n + 1, n + 1)
    safe = all_trees(n, True)
    heads = safe[draw(st.integers(0, len(safe) - 1))]
    words = np.arange(1, n + 1)
    forced = np.array(draw(st.lists(st.floats(-20, 20), min_size=n, max_size=n)))
    scores[words, heads] = np.where(np.isinf(scores[words, heads]), forced, scores[words, heads])
    return scores


def decode_one(decoder: Decoder, scores: np.ndarray) -> np.ndarray:
    n = scores.shape[0] - 1
    heads = decoder(torch.from_numpy(scores)[None], torch.tensor([n]))
    assert heads.dtype == torch.long and heads.shape == (1, n + 1)
    assert heads[0, 0].item() == 0
    return heads[0].numpy()


def assert_close(a: float, b: float) -> None:
    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (a, b)


@settings(max_examples=300, deadline=None)
@given(score_matrices())
def test_eisner_matches_brute_force(scores: np.ndarray) -> None:
    heads = decode_one(eisner, scores)[1:].tolist()
    assert tree_problems(heads) == []
    assert is_projective(heads)
    best, _ = best_tree(scores, projective=True)
    assert math.isfinite(best)
    assert_close(tree_score(scores, heads), best)


@settings(max_examples=300, deadline=None)
@given(score_matrices())
def test_mst_matches_brute_force(scores: np.ndarray) -> None:
    heads = decode_one(mst, scores)[1:].tolist()
    assert tree_problems(heads) == []
    best, _ = best_tree(scores, projective=False)
    assert math.isfinite(best)
    assert_close(tree_score(scores, heads), best)
    assert mst_single(scores).tolist() == [0] + heads


@settings(max_examples=100, deadline=None)
@given(
    st.lists(score_matrices(), min_size=1, max_size=5),
    st.sampled_from([NEG_INF, float("nan"), 1e9, 0.0]),  # padding must not matter
)
def test_batches_of_mixed_lengths_match_one_by_one(cases: list[np.ndarray], pad: float) -> None:
    size = max(case.shape[0] for case in cases) + 1  # at least one padding position everywhere
    batch = torch.full((len(cases), size, size), pad, dtype=torch.float64)
    for b, case in enumerate(cases):
        batch[b, : case.shape[0], : case.shape[0]] = torch.from_numpy(case)
    lengths = torch.tensor([case.shape[0] - 1 for case in cases])
    for decoder in (eisner, mst):
        together = decoder(batch, lengths)
        assert together.shape == (len(cases), size)
        for b, case in enumerate(cases):
            alone = decode_one(decoder, case)
            assert together[b, : case.shape[0]].tolist() == alone.tolist()
            assert together[b, case.shape[0] :].eq(0).all()


@pytest.mark.parametrize("decoder", [eisner, mst])
def test_single_word(decoder: Decoder) -> None:
    scores = torch.tensor([[[0.0, 0.0], [NEG_INF, 0.0]]])
    assert decoder(scores, torch.tensor([1])).tolist() == [[0, 0]]


@pytest.mark.parametrize("decoder", [eisner, mst])
@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_all_arcs_forbidden_still_gives_a_tree(decoder: Decoder, n: int) -> None:
    scores = torch.full((1, n + 1, n + 1), NEG_INF)
    heads = decoder(scores, torch.tensor([n]))[0, 1:].tolist()
    assert tree_problems(heads) == []
    assert is_projective(heads) or decoder is mst


@pytest.mark.parametrize("decoder", [eisner, mst])
def test_one_root_even_when_every_word_prefers_root(decoder: Decoder) -> None:
    n = 6
    scores = torch.zeros((1, n + 1, n + 1))
    scores[0, :, 0] = 5.0
    scores[0, 3, 0] = 6.0  # word 3 is the best single ROOT child
    heads = decoder(scores, torch.tensor([n]))[0].tolist()
    assert heads[3] == 0 and heads.count(0) == 2  # position 0 plus word 3


def test_mst_long_chain_of_contractions() -> None:
    """Every word prefers ROOT, then word 1: after the one-root reweighting each contraction makes the next cycle,
    n of them in a row (an untrained model, or a long text given as one sentence). The decoder must stay fast
    (O(n²)) and exact here; the optimum is word 1 under ROOT and every other word under word 1."""
    n = 3000
    scores = torch.zeros((1, n + 1, n + 1))
    scores[0, :, 0] = 5.0
    scores[0, :, 1] = 3.0
    heads = mst(scores, torch.tensor([n]))[0].tolist()
    assert heads == [0, 0] + [1] * (n - 1)


def _gold_scores(gold: list[int], rng: np.random.Generator) -> torch.Tensor:
    n = len(gold)
    scores = rng.normal(size=(n + 1, n + 1))  # (n+1, n+1)
    scores[np.arange(1, n + 1), gold] += 10.0
    return torch.from_numpy(scores).float()[None]  # (1, n+1, n+1)


def test_peaked_scores_recover_long_trees() -> None:
    rng = np.random.default_rng(0)
    n = 120
    # a non-projective tree: words join in random order under earlier-joined words
    order = rng.permutation(n) + 1
    gold = [0] * n
    for index in range(1, n):
        gold[order[index] - 1] = int(order[rng.integers(0, index)])
    assert mst(_gold_scores(gold, rng), torch.tensor([n]))[0, 1:].tolist() == gold
    # a projective one (a right-branching chain with a few left dependents)
    chain = [0] + list(range(1, n))
    for word in range(3, n, 7):
        chain[word - 1] = word + 1
        chain[word] = word - 1
    assert is_projective(chain) and tree_problems(chain) == []
    scores = _gold_scores(chain, rng)
    assert eisner(scores, torch.tensor([n]))[0, 1:].tolist() == chain
    assert mst(scores, torch.tensor([n]))[0, 1:].tolist() == chain


def test_mst_never_worse_than_eisner_on_longer_sentences() -> None:
    rng = np.random.default_rng(1)
    for n in (7, 15, 30, 60):
        scores = rng.normal(size=(n + 1, n + 1))
        scores[rng.random((n + 1, n + 1)) < 0.2] = NEG_INF
        scores[np.arange(1, n + 1), np.arange(0, n)] = 0.0  # a finite chain always exists
        projective = decode_one(eisner, scores)[1:]
        best = decode_one(mst, scores)[1:]
        assert tree_problems(projective.tolist()) == [] == tree_problems(best.tolist())
        assert is_projective(projective.tolist())
        assert math.isfinite(tree_score(scores, projective))
        assert tree_score(scores, best) >= tree_score(scores, projective) - 1e-9


@pytest.mark.parametrize("decoder", [eisner, mst])
def test_rejects_bad_lengths(decoder: Decoder) -> None:
    scores = torch.zeros((2, 4, 4))
    with pytest.raises(ValueError):
        decoder(scores, torch.tensor([3, 4]))
    with pytest.raises(ValueError):
        decoder(scores, torch.tensor([3]))


def test_float32_and_float64_agree_without_ties() -> None:
    rng = np.random.default_rng(2)
    scores = torch.from_numpy(rng.normal(size=(3, 11, 11)))  # (3, 11, 11)
    lengths = torch.tensor([10, 4, 7])
    for decoder in (eisner, mst):
        assert decoder(scores, lengths).tolist() == decoder(scores.float(), lengths).tolist()
