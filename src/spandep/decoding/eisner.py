"""First-order projective decoding (Eisner, 1996) with exactly one word attached to ROOT.

The chart is filled one span width at a time; for each width all spans of the whole batch are
computed at once from strided views of the chart (no copies, no index tensors), so the Python
loop runs n times, not O(n^3) times. Only the back-pointers go to the CPU to read the tree off.

Chart cells, all indexed ``[batch, i, j]`` with ``i <= j``:

* ``inc_r``: incomplete span, arc i -> j (head i, dependent j), the two halves not yet closed;
* ``inc_l``: incomplete span, arc j -> i (head j, dependent i);
* ``com_r``: complete span headed by i, reaching right to j;
* ``com_l``: complete span headed by j, reaching left to i.

The single-root constraint is the usual one: a complete span headed by ROOT may only cover
the whole sentence, so ROOT's right side is one incomplete arc 0 -> r plus r's right side.

Given heads and subtrees (:class:`~spandep.decoding.constraints.Fixed`) are kept by masking arcs
(``Fixed.arc_scores``) and, for a subtree, every complete item that crosses its span (``Fixed.crossing``): a
projective tree has a span as one word's subtree exactly when none of its complete items crosses it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from spandep.decoding.constraints import Fixed

__all__ = ["eisner"]

# Kinds of chart items on the back-tracking stack.
_INC_R, _INC_L, _COM_R, _COM_L = 0, 1, 2, 3


def _finite_scores(scores: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Copy of ``scores`` in which padding, row 0 and the diagonal are 0 and every -inf arc is a
    finite penalty so low that any tree using one scores below every tree that uses none.

    With ``a`` the largest finite |score| of a sentence of n words, a tree without forbidden arcs
    scores at least ``-n * a``; one with a forbidden arc at most ``-m + (n - 1) * a``; so the
    penalty ``m = 2 (n + 1) (a + 1)`` keeps them apart without ever meeting -inf or NaN.
    """
    batch, size, _ = scores.shape
    pos = torch.arange(size, device=scores.device)  # (n+1,)
    live = pos.unsqueeze(0) <= lengths.unsqueeze(1)  # (batch, n+1)
    valid = live.unsqueeze(2) & live.unsqueeze(1)  # (batch, n+1, n+1)
    valid &= (pos.unsqueeze(1) != pos.unsqueeze(0)) & (pos != 0).unsqueeze(1)  # (batch, n+1, n+1)
    forbidden = valid & (scores == float("-inf"))  # (batch, n+1, n+1)
    kept = scores.masked_fill(~valid | forbidden, 0.0)  # (batch, n+1, n+1)
    biggest = kept.abs().amax(dim=(1, 2))  # (batch,)
    penalty = 2.0 * (lengths.to(kept.dtype) + 1.0) * (biggest + 1.0)  # (batch,)
    penalty = penalty.view(batch, 1, 1).expand_as(kept)  # (batch, n+1, n+1)
    return torch.where(forbidden, -penalty, kept)  # (batch, n+1, n+1)


def _band(table: torch.Tensor, count: int, width: int, offset: int) -> torch.Tensor:
    """View ``(batch, count, width)`` of a contiguous ``(batch, s, s)`` table whose element
    ``[b, i, t]`` is the flat cell ``i * (s + 1) + t + offset`` of sentence b: row i starts one
    step further along the diagonal, so a band of spans of one width is read without copying."""
    size = table.size(1)
    return table.as_strided((table.size(0), count, width), (size * size, size + 1, 1), offset)


def _max_last(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Max and argmax over the last dim. ``argmax`` + ``gather`` rather than ``max(dim)``: on a
    busy 2-core CPU, torch 2.13's ``max(dim)`` was measured at ~8 ms per call even on tiny inputs
    (with 2 intra-op threads), which made decoding small sentences ~100x slower."""
    arg = values.argmax(dim=-1, keepdim=True)  # (..., 1)
    return values.gather(-1, arg).squeeze(-1), arg.squeeze(-1)  # (...), (...)


def _read_tree(length: int, bp_inc: np.ndarray, bp_com_r: np.ndarray, bp_com_l: np.ndarray) -> list[int]:
    """Follow the back-pointers ``(n+1, n+1)`` of one sentence from the full span headed by ROOT; heads[0] = 0.
    It reads O(n) cells, so the tables stay arrays (as lists of Python ints they cost about 100 bytes × n²)."""
    heads = [0] * (length + 1)
    stack: list[tuple[int, int, int]] = [(_COM_R, 0, length)]  # (kind, i, j)
    while stack:
        kind, i, j = stack.pop()
        if i == j:
            continue
        if kind == _COM_R:
            k = int(bp_com_r[i, j])
            stack.append((_INC_R, i, k))
            stack.append((_COM_R, k, j))
        elif kind == _COM_L:
            k = int(bp_com_l[i, j])
            stack.append((_COM_L, i, k))
            stack.append((_INC_L, k, j))
        else:
            if kind == _INC_R:
                heads[j] = i
            else:
                heads[i] = j
            k = int(bp_inc[i, j])
            stack.append((_COM_R, i, k))
            stack.append((_COM_L, k + 1, j))
    return heads


def _constrained(
    scores: torch.Tensor, lengths: torch.Tensor, fixed: Sequence[Fixed | None]
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The scores of a batch with each sentence's constraints masked in (``Fixed.arc_scores``, float64) and the
    complete items each sentence's spans forbid ``(batch, n+1, n+1)`` (``None`` when no sentence has spans)."""
    scores = scores.double().clone()  # (batch, n+1, n+1)
    crossing = torch.zeros(scores.shape, dtype=torch.bool, device=scores.device) if any(f and f.spans for f in fixed) else None  # (batch, n+1, n+1)
    for b, (length, f) in enumerate(zip(lengths.tolist(), fixed)):
        if f:
            f.check(length, projective=True)
            end = length + 1
            scores[b, :end, :end] = torch.from_numpy(f.arc_scores(scores[b, :end, :end].cpu().numpy()))  # (n+1, n+1)
            if crossing is not None:
                crossing[b, :end, :end] = torch.from_numpy(f.crossing())  # (n+1, n+1)
    return scores, crossing


@torch.no_grad()
def eisner(scores: torch.Tensor, lengths: torch.Tensor, fixed: Sequence[Fixed | None] | None = None) -> torch.Tensor:
    """Highest-scoring projective tree with one ROOT child, for every sentence of a batch.

    ``scores[b, d, h]`` is the log-space score of word d taking head h (index 0 is ROOT, row 0
    is ignored, -inf forbids an arc); ``lengths[b]`` is the number of words. Returns heads
    ``(batch, n+1)`` as a LongTensor on the device of ``scores``; position 0 and padding are 0.
    Arcs scored -inf are used only when every projective tree needs one. Scores must not hold
    +inf or NaN inside the sentence (padding may hold anything). ``fixed``: each sentence's constraints
    (``None``: none), kept by the best projective tree that keeps them; ``ConstraintError`` when none does.
    """
    if scores.dim() != 3 or scores.size(1) != scores.size(2):
        raise ValueError(f"scores must be (batch, n+1, n+1), got {tuple(scores.shape)}")
    device = scores.device
    batch, size, _ = scores.shape
    lengths = lengths.to(device=device, dtype=torch.long)  # (batch,)
    if lengths.shape != (batch,) or bool((lengths < 0).any()) or bool((lengths >= size).any()):
        raise ValueError(f"lengths must be (batch,) values in [0, {size - 1}]")
    if scores.dtype not in (torch.float32, torch.float64):
        scores = scores.float()  # (batch, n+1, n+1)
    crossing = None
    if fixed is not None and any(fixed):
        scores, crossing = _constrained(scores, lengths, fixed)  # (batch, n+1, n+1) each
    arc = _finite_scores(scores, lengths)  # (batch, n+1, n+1)
    neg_inf = float("-inf")

    # Row-major tables hold cell [i, j] at [b, i, j]; the "_t" copies hold it at [b, j, i], so
    # that every read below walks contiguous memory (see _band).
    inc_r = arc.new_full((batch, size, size), neg_inf)  # (batch, n+1, n+1)
    inc_l_t = arc.new_full((batch, size, size), neg_inf)  # (batch, n+1, n+1)
    com_r = arc.new_full((batch, size, size), neg_inf)  # (batch, n+1, n+1)
    com_r_t = arc.new_full((batch, size, size), neg_inf)  # (batch, n+1, n+1)
    com_l = arc.new_full((batch, size, size), neg_inf)  # (batch, n+1, n+1)
    com_l_t = arc.new_full((batch, size, size), neg_inf)  # (batch, n+1, n+1)
    for table in (com_r, com_r_t, com_l, com_l_t):
        table.diagonal(dim1=1, dim2=2).fill_(0.0)
    bp_inc = torch.zeros((batch, size, size), dtype=torch.int32, device=device)  # (batch, n+1, n+1): positions fit int32
    bp_com_r = torch.zeros_like(bp_inc)  # (batch, n+1, n+1)
    bp_com_l = torch.zeros_like(bp_inc)  # (batch, n+1, n+1)

    for width in range(1, size):
        count = size - width  # number of spans [i, i + width]
        starts = torch.arange(count, device=device)  # (m,)
        shift = width * size

        # Incomplete spans: max over k = i .. j-1 of com_r[i, k] + com_l[k+1, j], then the arc.
        halves = _band(com_r, count, width, 0)  # (batch, m, width): com_r[i, i + t]
        halves = halves + _band(com_l_t, count, width, shift + 1)  # (batch, m, width)
        best, arg = _max_last(halves)  # (batch, m), (batch, m)
        right = best + arc.diagonal(-width, dim1=1, dim2=2)  # (batch, m): arc i -> j
        left = best + arc.diagonal(width, dim1=1, dim2=2)  # (batch, m): arc j -> i
        left[:, 0] = neg_inf  # ROOT never takes a head
        inc_r.diagonal(width, dim1=1, dim2=2).copy_(right)
        inc_l_t.diagonal(-width, dim1=1, dim2=2).copy_(left)
        bp_inc.diagonal(width, dim1=1, dim2=2).copy_(arg + starts)

        # Complete right spans: max over k = i+1 .. j of inc_r[i, k] + com_r[k, j].
        joined = _band(inc_r, count, width, 1)  # (batch, m, width): inc_r[i, i + 1 + t]
        joined = joined + _band(com_r_t, count, width, shift + 1)  # (batch, m, width)
        best, arg = _max_last(joined)  # (batch, m), (batch, m)
        # One ROOT child: ROOT's complete span exists only over the whole sentence.
        best[:, 0].masked_fill_(lengths != width, neg_inf)
        if crossing is not None:
            best.masked_fill_(crossing.diagonal(width, dim1=1, dim2=2), neg_inf)  # (batch, m): items crossing a span
        com_r.diagonal(width, dim1=1, dim2=2).copy_(best)
        com_r_t.diagonal(-width, dim1=1, dim2=2).copy_(best)
        bp_com_r.diagonal(width, dim1=1, dim2=2).copy_(arg + starts + 1)

        # Complete left spans: max over k = i .. j-1 of com_l[i, k] + inc_l[k, j].
        joined = _band(com_l, count, width, 0)  # (batch, m, width): com_l[i, i + t]
        joined = joined + _band(inc_l_t, count, width, shift)  # (batch, m, width)
        best, arg = _max_last(joined)  # (batch, m), (batch, m)
        if crossing is not None:
            best.masked_fill_(crossing.diagonal(width, dim1=1, dim2=2), neg_inf)  # (batch, m): items crossing a span
        com_l.diagonal(width, dim1=1, dim2=2).copy_(best)
        com_l_t.diagonal(-width, dim1=1, dim2=2).copy_(best)
        bp_com_l.diagonal(width, dim1=1, dim2=2).copy_(arg + starts)

    bp_inc_np = bp_inc.cpu().numpy()  # (batch, n+1, n+1)
    bp_com_r_np = bp_com_r.cpu().numpy()  # (batch, n+1, n+1)
    bp_com_l_np = bp_com_l.cpu().numpy()  # (batch, n+1, n+1)
    out = torch.zeros((batch, size), dtype=torch.long)  # (batch, n+1)
    for b, length in enumerate(lengths.cpu().tolist()):
        if length > 0:
            end = length + 1
            heads = _read_tree(length, bp_inc_np[b, :end, :end], bp_com_r_np[b, :end, :end], bp_com_l_np[b, :end, :end])
            if fixed is not None and fixed[b]:
                fixed[b].check_kept(heads[1:], projective=True)  # type: ignore[union-attr]
            out[b, :end] = torch.tensor(heads, dtype=torch.long)  # (length+1,)
    return out.to(device)  # (batch, n+1)
