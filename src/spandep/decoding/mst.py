"""Maximum spanning arborescence decoding with exactly one word attached to ROOT.

Chu-Liu-Edmonds in log space (scores are added, never exponentiated), written with numpy and an
explicit stack of contractions, so deep contraction chains cannot hit Python's recursion limit.

The one-root constraint uses the reweighting of Gabow & Tarjan (1984), as revisited by
Stanojevic & Cohen (2021, "A Root of a Problem"): subtracting from every ROOT arc a constant
larger than the spread of all tree scores makes each extra ROOT child cost more than any gain
elsewhere, while trees with one ROOT child keep their order. One unconstrained decode then
returns the best single-root tree. (A swap rule in the style of Zmigrod et al. (2020), dropping
the ROOT arc that is cheapest to replace, was tried first; as written here it failed the
brute-force checks when the replacement arc closes a cycle, so it was not kept.)
When every word's best head already gives a tree with one ROOT child, that is returned at once.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["mst", "mst_single"]

# One contraction: (rest, cycle, cycle_heads, out_arg, in_arg), see _contract.
_Record = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _finite_weights(scores: np.ndarray) -> np.ndarray:
    """Float64 copy where -inf arcs become a finite penalty below every tree without them.

    With ``a`` the largest finite |score| and n words, a tree free of forbidden arcs scores at
    least ``-n * a`` and one with a forbidden arc at most ``-p + (n - 1) * a``, so
    ``p = 2 (n + 1) (a + 1)`` separates them. Row 0 (ROOT's own head) and the diagonal
    (self-loops) become -inf: they are structurally impossible and never chosen.
    """
    size = scores.shape[0]
    weights = np.array(scores, dtype=np.float64)  # (n+1, n+1)
    weights[0, :] = 0.0
    np.fill_diagonal(weights, 0.0)
    forbidden = np.isneginf(weights)  # (n+1, n+1)
    biggest = float(np.abs(np.where(forbidden, 0.0, weights)).max())
    weights[forbidden] = -2.0 * size * (biggest + 1.0)
    weights[0, :] = -np.inf
    np.fill_diagonal(weights, -np.inf)
    return weights


def _find_cycle(best: np.ndarray) -> list[int] | None:
    """Nodes of one cycle of the head function ``best`` (node 0 is ROOT), or None if acyclic."""
    heads = best.tolist()
    state = [0] * len(heads)  # 0: unseen, s > 0: on the walk started at s, -1: done
    state[0] = -1
    for start in range(1, len(heads)):
        if state[start]:
            continue
        node = start
        while state[node] == 0:
            state[node] = start
            node = heads[node]
        if state[node] == start:
            cycle = [node]
            nxt = heads[node]
            while nxt != node:
                cycle.append(nxt)
                nxt = heads[nxt]
            return cycle
        node = start
        while state[node] == start:
            state[node] = -1
            node = heads[node]
    return None


def _contract(
    weights: np.ndarray, best: np.ndarray, cycle: list[int]
) -> tuple[np.ndarray, _Record]:
    """Merge ``cycle`` into one new node (the last index) and return the smaller weight matrix.

    An arc into the cycle at word v from head h is worth ``w[v, h] - w[v, best[v]]`` (it
    replaces v's cycle arc); an arc out of the cycle to word d is the best over cycle heads.
    """
    size = weights.shape[0]
    cyc = np.array(cycle, dtype=np.int64)  # (c,)
    in_cycle = np.zeros(size, dtype=bool)  # (size,)
    in_cycle[cyc] = True
    rest = np.flatnonzero(~in_cycle)  # (r,), rest[0] == 0 (ROOT)
    r = rest.size
    cycle_heads = best[cyc]  # (c,)
    out_block = weights[np.ix_(rest, cyc)]  # (r, c): d in rest takes a head in the cycle
    out_arg = out_block.argmax(axis=1)  # (r,)
    out_best = out_block[np.arange(r), out_arg]  # (r,)
    in_block = weights[np.ix_(cyc, rest)] - weights[cyc, cycle_heads][:, None]  # (c, r)
    in_arg = in_block.argmax(axis=0)  # (r,)
    in_best = in_block[in_arg, np.arange(r)]  # (r,)
    contracted = np.empty((r + 1, r + 1), dtype=np.float64)  # (r+1, r+1)
    contracted[:r, :r] = weights[np.ix_(rest, rest)]
    contracted[:r, r] = out_best
    contracted[r, :r] = in_best
    contracted[r, r] = -np.inf
    contracted[0, :] = -np.inf
    return contracted, (rest, cyc, cycle_heads, out_arg, in_arg)


def _expand(heads: np.ndarray, record: _Record) -> np.ndarray:
    """Undo one contraction: map heads of the contracted graph back onto the cycle's graph."""
    rest, cyc, cycle_heads, out_arg, in_arg = record
    r = rest.size
    full = np.empty(r + cyc.size, dtype=np.int64)  # (size,)
    outer = heads[:r]  # (r,)
    full[rest] = np.where(outer == r, cyc[out_arg], rest[np.minimum(outer, r - 1)])
    full[cyc] = cycle_heads
    enter = int(heads[r])  # the cycle's head, as an index into rest
    full[cyc[in_arg[enter]]] = rest[enter]
    full[0] = 0
    return full


def _decode(weights: np.ndarray) -> np.ndarray:
    """Unconstrained Chu-Liu-Edmonds on ``weights`` (-inf only on row 0 and the diagonal)."""
    records: list[_Record] = []
    while True:
        best = weights.argmax(axis=1)  # (size,)
        best[0] = 0
        cycle = _find_cycle(best)
        if cycle is None:
            break
        weights, record = _contract(weights, best, cycle)
        records.append(record)
    for record in reversed(records):
        best = _expand(best, record)
    return best


def mst_single(scores_np: np.ndarray) -> np.ndarray:
    """Best tree with one ROOT child for one sentence.

    ``scores_np[d, h]`` (shape ``(n+1, n+1)``) is the log-space score of word d taking head h;
    row 0 and the diagonal are ignored and -inf forbids an arc (used only if no tree avoids
    it). Returns int64 heads of shape ``(n+1,)`` with ``heads[0] == 0``.
    """
    if scores_np.ndim != 2 or scores_np.shape[0] != scores_np.shape[1]:
        raise ValueError(f"scores must be (n+1, n+1), got {scores_np.shape}")
    size = scores_np.shape[0]
    if size <= 2:
        return np.zeros(size, dtype=np.int64)  # (n+1,): no words, or one word under ROOT
    weights = _finite_weights(scores_np)  # (n+1, n+1)
    best = weights.argmax(axis=1)  # (n+1,)
    best[0] = 0
    if np.count_nonzero(best == 0) == 2 and _find_cycle(best) is None:
        return best  # every word's favourite head already forms a one-root tree
    # Trees differ by less than n * (hi - lo), so this makes any second ROOT child a loss.
    arcs = weights[1:][np.isfinite(weights[1:])]  # (n * n,)
    correction = (size - 1) * (float(arcs.max()) - float(arcs.min())) + 1.0
    weights[1:, 0] -= correction
    return _decode(weights)


@torch.no_grad()
def mst(scores: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Batched :func:`mst_single`: ``scores`` ``(batch, n+1, n+1)`` as in :func:`eisner`, returns
    heads ``(batch, n+1)`` (LongTensor on the device of ``scores``; 0 at position 0 and padding)."""
    if scores.dim() != 3 or scores.size(1) != scores.size(2):
        raise ValueError(f"scores must be (batch, n+1, n+1), got {tuple(scores.shape)}")
    if scores.dtype not in (torch.float32, torch.float64):
        scores = scores.float()  # (batch, n+1, n+1)
    array = scores.detach().cpu().numpy()  # (batch, n+1, n+1)
    batch, size, _ = array.shape
    lengths_list = lengths.cpu().tolist()
    if len(lengths_list) != batch or any(not 0 <= length < size for length in lengths_list):
        raise ValueError(f"lengths must be (batch,) values in [0, {size - 1}]")
    out = np.zeros((batch, size), dtype=np.int64)  # (batch, n+1)
    for b, length in enumerate(lengths_list):
        if length > 0:
            out[b, : length + 1] = mst_single(array[b, : length + 1, : length + 1])
    return torch.from_numpy(out).to(scores.device)  # (batch, n+1)
