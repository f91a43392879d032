"""Span proposal (Gan et al., 2022, §3.3): for every word, where does its subtree start and end?

For word ``i`` the module scores each candidate start ``j ≤ i`` and each candidate end ``j ≥ i`` with a biaffine
function ``x_iᵀ U x_j + wᵀ x_j`` (MLP projections first, as in the Biaffine parser), normalises each side with a
softmax over the words of the sentence, and scores a span as ``log P_start(s | i) + log P_end(e | i)``. Training
targets are the hull spans of the gold tree (``spandep.data.trees.hull_spans``), so non-projective trees need no
filtering. Because the span score is separable, the exact top-k spans of a word come from its top-k starts and
top-k ends (``topk_spans``).

Conventions: word vectors ``x (batch, 1 + n, d)`` with ROOT at position 0 and ``word_mask (batch, 1 + n)`` true for
ROOT and the real words. Score tensors are indexed ``[batch, i, j]`` = (word, candidate boundary). Disallowed cells
(ROOT column, padding columns, ``j > i`` for starts, ``j < i`` for ends) and the rows of ROOT and padding hold a large
negative *finite* value, so softmaxes never produce NaN.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from spandep.data.trees import hull_spans
from spandep.masking import NEG_INF, mask_value
from spandep.models.layers import MLP, Biaffine

Span = tuple[int, int, float]  # (start, end, log P_start + log P_end)

__all__ = [
    "SpanProposal",
    "gold_span_targets",
    "span_hits",
    "span_masks",
    "topk_spans",
]


def span_masks(word_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Allowed ``(word i, start j)`` and ``(word i, end j)`` cells: ``i`` and ``j`` real words, ``j ≤ i`` / ``j ≥ i``.

    ``word_mask (batch, 1 + n)`` → two boolean tensors ``(batch, 1 + n, 1 + n)``; ROOT's row and column are all false.
    """
    words = word_mask.clone()  # (batch, 1 + n)
    words[:, 0] = False
    pos = torch.arange(word_mask.size(1), device=word_mask.device)  # (1 + n,)
    before = pos.unsqueeze(0) <= pos.unsqueeze(1)  # (1 + n, 1 + n): j <= i
    after = pos.unsqueeze(0) >= pos.unsqueeze(1)  # (1 + n, 1 + n): j >= i
    pairs = words.unsqueeze(2) & words.unsqueeze(1)  # (batch, 1 + n, 1 + n): both real words
    return pairs & before, pairs & after


class SpanProposal(nn.Module):
    """Biaffine start and end scorers over word vectors; one softmax per word and side."""

    def __init__(self, n_in: int, mlp: int = 500, dropout: float = 0.33) -> None:
        super().__init__()
        self.hparams = {"span_mlp": mlp, "span_dropout": dropout}
        self.start_word = MLP(n_in, mlp, dropout)  # x_i: the word whose subtree is proposed
        self.start_cand = MLP(n_in, mlp, dropout)  # x_j: a candidate start
        self.end_word = MLP(n_in, mlp, dropout)
        self.end_cand = MLP(n_in, mlp, dropout)
        # bias_x adds a constant 1 to x_i, which yields the wᵀ x_j term; no bias on x_j (it would be constant per row)
        self.start_attn = Biaffine(mlp, 1, bias_x=True, bias_y=False)
        self.end_attn = Biaffine(mlp, 1, bias_x=True, bias_y=False)

    def forward(self, x: torch.Tensor, word_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked start and end scores, each ``(batch, 1 + n, 1 + n)`` indexed ``[word i, boundary j]``."""
        s_start = self.start_attn(self.start_word(x), self.start_cand(x))  # (batch, 1 + n, 1 + n)
        s_end = self.end_attn(self.end_word(x), self.end_cand(x))  # (batch, 1 + n, 1 + n)
        start_ok, end_ok = span_masks(word_mask)  # (batch, 1 + n, 1 + n) each
        fill = mask_value(s_start.dtype)
        return s_start.masked_fill(~start_ok, fill), s_end.masked_fill(~end_ok, fill)

    def loss(
        self,
        start_scores: torch.Tensor,
        end_scores: torch.Tensor,
        gold_starts: torch.Tensor,
        gold_ends: torch.Tensor,
        word_mask: torch.Tensor,
    ) -> torch.Tensor:
        """CE(start) + CE(end), each averaged over the real words (ROOT and padding excluded).

        ``gold_starts``/``gold_ends`` are ``(batch, 1 + n)`` long tensors (see ``gold_span_targets``).
        """
        words = word_mask.clone()  # (batch, 1 + n)
        words[:, 0] = False
        return F.cross_entropy(start_scores[words].float(), gold_starts[words]) + F.cross_entropy(
            end_scores[words].float(), gold_ends[words]
        )

    @staticmethod
    def log_probs(start_scores: torch.Tensor, end_scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``log P_start`` and ``log P_end`` (float32), each ``(batch, 1 + n, 1 + n)``; masked cells stay ≈ -1e9."""
        return F.log_softmax(start_scores.float(), dim=-1), F.log_softmax(end_scores.float(), dim=-1)

    @staticmethod
    def topk_spans(
        start_logp: torch.Tensor, end_logp: torch.Tensor, lengths: Sequence[int] | torch.Tensor, k: int
    ) -> list[list[list[Span]]]:
        """See the module-level ``topk_spans``."""
        return topk_spans(start_logp, end_logp, lengths, k)

    def export_config(self) -> dict[str, Any]:
        return dict(self.hparams)


def gold_span_targets(
    heads: Sequence[Sequence[int]], width: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Hull-span targets ``(gold_starts, gold_ends)``, each ``(batch, width)`` with ``width ≥ 1 + max n``.

    Position 0 (ROOT) holds ``(1, n)``; padding holds 0 (ignored by the loss, which masks by ``word_mask``).
    """
    width = width if width is not None else 1 + max((len(h) for h in heads), default=0)
    starts = torch.zeros(len(heads), width, dtype=torch.long)  # (batch, 1 + n)
    ends = torch.zeros(len(heads), width, dtype=torch.long)  # (batch, 1 + n)
    for b, h in enumerate(heads):
        n = len(h)
        if n == 0:
            continue
        spans = hull_spans(h)
        starts[b, 0], ends[b, 0] = 1, n
        starts[b, 1 : n + 1] = torch.tensor([s for s, _ in spans])
        ends[b, 1 : n + 1] = torch.tensor([e for _, e in spans])
    return starts, ends


def topk_spans(
    start_logp: torch.Tensor, end_logp: torch.Tensor, lengths: Sequence[int] | torch.Tensor, k: int
) -> list[list[list[Span]]]:
    """Exact top-k spans of every word by ``log P_start + log P_end``, best first.

    ``start_logp``/``end_logp`` are ``(batch, 1 + n, 1 + n)`` (``SpanProposal.log_probs``); ``lengths`` the number of
    words per sentence. Returns, per sentence, per word 1..n, up to ``k`` tuples ``(start, end, score)``, fewer when
    the word has fewer than ``k`` valid spans (``i · (n - i + 1)``). Validity is enforced here (``1 ≤ start ≤ i ≤ end
    ≤ n``), independently of the masks already in the scores. Exactness: a pair whose start is not among the top-k
    starts is beaten by the k pairs (top-k start, same end), so searching the k×k grid of top starts × top ends is
    enough.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    batch, width = start_logp.shape[:2]
    device = start_logp.device
    n = torch.as_tensor(lengths, dtype=torch.long, device=device).view(-1, 1, 1)  # (batch, 1, 1)
    pos = torch.arange(width, device=device)  # (1 + n,)
    i = pos.view(1, -1, 1)  # (1, 1 + n, 1)
    j = pos.view(1, 1, -1)  # (1, 1, 1 + n)
    row_ok = (i >= 1) & (i <= n)  # (batch, 1 + n, 1)
    start_ok = row_ok & (j >= 1) & (j <= i)  # (batch, 1 + n, 1 + n)
    end_ok = row_ok & (j >= i) & (j <= n)  # (batch, 1 + n, 1 + n)
    s = start_logp.float().masked_fill(~start_ok, NEG_INF)  # (batch, 1 + n, 1 + n)
    e = end_logp.float().masked_fill(~end_ok, NEG_INF)  # (batch, 1 + n, 1 + n)
    kk = min(k, width)
    s_val, s_idx = s.topk(kk, dim=-1)  # (batch, 1 + n, kk)
    e_val, e_idx = e.topk(kk, dim=-1)  # (batch, 1 + n, kk)
    grid = (s_val.unsqueeze(-1) + e_val.unsqueeze(-2)).flatten(2)  # (batch, 1 + n, kk * kk); -inf + x = -inf
    top_val, top_flat = grid.topk(min(k, kk * kk), dim=-1)  # (batch, 1 + n, k')
    top_start = s_idx.gather(-1, torch.div(top_flat, kk, rounding_mode="floor"))  # (batch, 1 + n, k')
    top_end = e_idx.gather(-1, top_flat % kk)  # (batch, 1 + n, k')
    vals, starts, ends = top_val.tolist(), top_start.tolist(), top_end.tolist()
    lens = n.view(-1).tolist()
    out: list[list[list[Span]]] = []
    for b in range(batch):
        sentence: list[list[Span]] = []
        for w in range(1, lens[b] + 1):
            sentence.append(
                [(st, en, v) for st, en, v in zip(starts[b][w], ends[b][w], vals[b][w]) if v != NEG_INF]
            )
        out.append(sentence)
    return out


def span_hits(
    candidates: Sequence[Sequence[Sequence[Span]]],
    gold: Sequence[Sequence[tuple[int, int]]],
    ks: Iterable[int] = (1,),
) -> tuple[dict[int, int], int]:
    """Count words whose gold (start, end) is among their first ``k`` candidates, for each ``k`` in ``ks``.

    ``candidates`` as returned by ``topk_spans`` (best first); ``gold`` per sentence the hull spans of words 1..n.
    Returns ``({k: hits}, n_words)``; sum these over dev batches and divide for the accuracy.
    """
    ks = sorted(set(ks))
    hits = {k: 0 for k in ks}
    total = 0
    for sent_cands, sent_gold in zip(candidates, gold, strict=True):
        if len(sent_cands) != len(sent_gold):
            raise ValueError(f"{len(sent_cands)} candidate lists for a sentence of {len(sent_gold)} words")
        for cands, span in zip(sent_cands, sent_gold):
            total += 1
            rank = next((r for r, c in enumerate(cands) if (c[0], c[1]) == tuple(span)), None)
            if rank is not None:
                for k in ks:
                    hits[k] += rank < k
    return hits, total
