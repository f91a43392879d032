"""Span proposal: masks, exact top-k against brute force, the loss, and span accuracy."""

from __future__ import annotations

import math

import pytest
import torch

from spandep.data.trees import hull_spans
from spandep.models.span.proposal import (
    SpanProposal,
    gold_span_targets,
    span_hits,
    span_masks,
    topk_spans,
)

# heads[i - 1] = head of word i
PROJECTIVE = [2, 0, 4, 2, 2]  # "I love Tim 's cat"-like: 2 is the root
NON_PROJECTIVE = [3, 4, 0, 3]  # arcs 1<-3 and 2<-4 cross


def brute_topk(start_logp: torch.Tensor, end_logp: torch.Tensor, n: int, i: int, k: int) -> list[tuple[int, int, float]]:
    """Every (s, e) with 1 <= s <= i <= e <= n, sorted by score: the oracle for topk_spans."""
    pairs = [
        (s, e, float(start_logp[i, s]) + float(end_logp[i, e])) for s in range(1, i + 1) for e in range(i, n + 1)
    ]
    return sorted(pairs, key=lambda p: -p[2])[:k]


def test_span_masks_allow_exactly_the_valid_cells() -> None:
    word_mask = torch.tensor([[True] * 4 + [False] * 2, [True] * 6])  # n = 3 and n = 5
    start_ok, end_ok = span_masks(word_mask)  # (2, 6, 6)
    for b, n in enumerate([3, 5]):
        for i in range(6):
            for j in range(6):
                real = 1 <= i <= n and 1 <= j <= n
                assert bool(start_ok[b, i, j]) == (real and j <= i)
                assert bool(end_ok[b, i, j]) == (real and j >= i)


def test_forward_masks_and_log_probs() -> None:
    torch.manual_seed(0)
    model = SpanProposal(8, mlp=6, dropout=0.0)
    for p in (model.start_attn.weight, model.end_attn.weight):  # biaffine weights start at zero
        torch.nn.init.normal_(p)
    x = torch.randn(2, 6, 8)  # (batch, 1 + n, d)
    word_mask = torch.tensor([[True] * 4 + [False] * 2, [True] * 6])
    s_start, s_end = model(x, word_mask)
    assert s_start.shape == s_end.shape == (2, 6, 6)
    assert torch.isfinite(s_start).all() and torch.isfinite(s_end).all()
    start_ok, end_ok = span_masks(word_mask)
    assert (s_start[~start_ok] == -1e9).all() and (s_end[~end_ok] == -1e9).all()
    lp_start, lp_end = model.log_probs(s_start, s_end)
    assert torch.isfinite(lp_start).all() and torch.isfinite(lp_end).all()
    for b, n in enumerate([3, 5]):
        for i in range(1, n + 1):  # each real word: a distribution over its valid boundaries only
            assert math.isclose(lp_start[b, i, 1 : i + 1].exp().sum().item(), 1.0, rel_tol=1e-5)
            assert math.isclose(lp_end[b, i, i : n + 1].exp().sum().item(), 1.0, rel_tol=1e-5)
        # the argmax respects the masks: never ROOT, never padding, never start > i or end < i
        best_start, best_end = lp_start[b].argmax(-1), lp_end[b].argmax(-1)  # (1 + n,)
        for i in range(1, n + 1):
            assert 1 <= best_start[i] <= i <= best_end[i] <= n


@pytest.mark.parametrize("k", [1, 2, 3, 5, 40])
def test_topk_is_exact_against_brute_force(k: int) -> None:
    gen = torch.Generator().manual_seed(k)
    lengths = [1, 4, 7, 2]
    width = 1 + max(lengths)
    # arbitrary scores everywhere (even in invalid cells): topk_spans must enforce validity itself
    start_logp = torch.randn(len(lengths), width, width, generator=gen) * 3  # (batch, 1 + n, 1 + n)
    end_logp = torch.randn(len(lengths), width, width, generator=gen) * 3
    result = topk_spans(start_logp, end_logp, lengths, k)
    assert len(result) == len(lengths)
    for b, n in enumerate(lengths):
        assert len(result[b]) == n
        for i in range(1, n + 1):
            got = result[b][i - 1]
            want = brute_topk(start_logp[b], end_logp[b], n, i, k)
            assert len(got) == min(k, i * (n - i + 1))
            assert [(s, e) for s, e, _ in got] == [(s, e) for s, e, _ in want]
            for (_, _, g), (_, _, w) in zip(got, want):
                assert math.isclose(g, w, rel_tol=1e-5, abs_tol=1e-5)


def test_topk_from_model_never_picks_invalid_spans() -> None:
    torch.manual_seed(1)
    model = SpanProposal(8, mlp=6, dropout=0.0)
    torch.nn.init.normal_(model.start_attn.weight)
    torch.nn.init.normal_(model.end_attn.weight)
    word_mask = torch.tensor([[True] * 3 + [False] * 3, [True] * 6])
    lp = model.log_probs(*model(torch.randn(2, 6, 8), word_mask))
    for b, sentence in enumerate(SpanProposal.topk_spans(*lp, lengths=[2, 5], k=4)):
        n = [2, 5][b]
        for i, spans in enumerate(sentence, start=1):
            assert spans and all(1 <= s <= i <= e <= n for s, e, _ in spans)
            scores = [v for _, _, v in spans]
            assert scores == sorted(scores, reverse=True) and all(v <= 0 for v in scores)
            assert len({(s, e) for s, e, _ in spans}) == len(spans)


def test_gold_span_targets_use_hulls() -> None:
    starts, ends = gold_span_targets([PROJECTIVE, NON_PROJECTIVE])
    assert starts.shape == ends.shape == (2, 6)
    assert list(zip(starts[0, 1:].tolist(), ends[0, 1:].tolist())) == [(1, 1), (1, 5), (3, 3), (3, 4), (5, 5)]
    # non-projective: word 3 covers 1..4 (with 1), word 4 covers 2..4 by its child 2 (hull includes word 3)
    assert list(zip(starts[1, 1:5].tolist(), ends[1, 1:5].tolist())) == hull_spans(NON_PROJECTIVE)
    assert hull_spans(NON_PROJECTIVE) == [(1, 1), (2, 2), (1, 4), (2, 4)]
    assert (starts[1, 0].item(), ends[1, 0].item()) == (1, 4)
    assert starts[1, 5].item() == 0  # padding


def test_loss_decreases_when_overfitting_a_tiny_batch() -> None:
    torch.manual_seed(0)
    heads = [PROJECTIVE, NON_PROJECTIVE]
    x = torch.randn(2, 6, 16)  # (batch, 1 + n, d), fixed "encoder output"
    word_mask = torch.tensor([[True] * 6, [True] * 5 + [False]])
    gold_starts, gold_ends = gold_span_targets(heads, width=6)
    model = SpanProposal(16, mlp=32, dropout=0.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = model.loss(*model(x, word_mask), gold_starts, gold_ends, word_mask)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.05 * losses[0]
    with torch.no_grad():
        lp = model.log_probs(*model(x, word_mask))
    cands = topk_spans(*lp, lengths=[5, 4], k=1)
    hits, total = span_hits(cands, [hull_spans(h) for h in heads], ks=(1,))
    assert total == 9 and hits == {1: total}


def test_loss_ignores_root_and_padding() -> None:
    model = SpanProposal(4, mlp=4, dropout=0.0)
    word_mask = torch.tensor([[True, True, True, False]])
    s = torch.zeros(1, 4, 4)  # uniform scores ...
    start_ok, end_ok = span_masks(word_mask)
    s_start, s_end = s.masked_fill(~start_ok, -1e9), s.masked_fill(~end_ok, -1e9)
    gold = torch.tensor([[0, 1, 1, 0]])  # ROOT / padding targets would be invalid cells if they counted
    gold_end = torch.tensor([[0, 2, 2, 0]])
    # word 1: one start (log 1), two ends (log 2); word 2: two starts, one end -> mean 0.5 log 2 per side
    assert math.isclose(model.loss(s_start, s_end, gold, gold_end, word_mask).item(), math.log(2), rel_tol=1e-6)


def test_span_hits_hand_example() -> None:
    gold = [hull_spans(PROJECTIVE), [(1, 1)]]  # [(1,1), (1,5), (3,3), (3,4), (5,5)] and a one-word sentence
    cands = [
        [
            [(1, 1, -0.1), (1, 2, -2.0)],  # hit at rank 0
            [(2, 5, -0.5), (1, 5, -0.9)],  # hit at rank 1
            [(3, 4, -0.2), (3, 5, -1.0)],  # miss
            [(4, 4, -0.3), (3, 5, -0.4), (3, 4, -0.5)],  # hit at rank 2
            [(5, 5, 0.0)],  # hit at rank 0
        ],
        [[(1, 1, 0.0)]],  # hit at rank 0
    ]
    hits, total = span_hits(cands, gold, ks=(1, 2, 3))
    assert total == 6 and hits == {1: 3, 2: 4, 3: 5}
    assert span_hits([], [], ks=(1,)) == ({1: 0}, 0)
    with pytest.raises(ValueError):
        span_hits([cands[0][:2]], [gold[0]])
