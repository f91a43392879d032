"""Maximum spanning arborescence decoding with exactly one word attached to ROOT.

Chu-Liu-Edmonds in log space (scores are added, never exponentiated), in Tarjan's O(n²) form with numpy
vectors and no recursion, so long sentences and long chains of contractions stay fast.

The one-root constraint uses the reweighting of Gabow & Tarjan (1984), as revisited by
Stanojevic & Cohen (2021, "A Root of a Problem"): subtracting from every ROOT arc a constant
larger than the spread of all tree scores makes each extra ROOT child cost more than any gain
elsewhere, while trees with one ROOT child keep their order. One unconstrained decode then
returns the best single-root tree. (A swap rule in the style of Zmigrod et al. (2020), dropping
the ROOT arc that is cheapest to replace, was tried first; as written here it failed the
brute-force checks when the replacement arc closes a cycle, so it was not kept.)
When every word's best head already gives a tree with one ROOT child, that is returned at once.

Given heads and subtrees (:class:`~spandep.decoding.constraints.Fixed`) are kept by masking
(``Fixed.arc_scores``) and by the same reweighting: every arc entering a span is lowered as ROOT's arcs are, so the
best tree has one arc into each span (its subtree's root) when a tree of that kind exists.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from spandep.decoding.constraints import Fixed

__all__ = ["mst", "mst_single"]

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
    weights[forbidden] = 0.0  # in place: no (n+1, n+1) temporaries (10,000 words: 800 MB each)
    biggest = max(abs(float(weights.max())), abs(float(weights.min())))
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


def _decode(weights: np.ndarray) -> np.ndarray:
    """Unconstrained Chu-Liu-Edmonds on ``weights`` (-inf only on row 0 and the diagonal) in O(n²).

    Tarjan's (1977) dense form with Camerini et al.'s (1979) expansion. Each super-node (a word, or a contracted
    cycle) keeps one vector of its best entering score per original head; contracting a cycle takes the maximum
    of its members' vectors, each lowered by the score of the member's own cycle arc, so a contraction costs
    O(n · cycle length) instead of a copy of the whole matrix. (Re-building the matrix per contraction was
    O(n³) when contractions chain, as they do for a long text given as one sentence: ~25 s at 2,000 words.)
    """
    size = weights.shape[0]
    inw: dict[int, np.ndarray] = {v: weights[v] for v in range(1, size)}  # best entering score per original head
    inarg: dict[int, np.ndarray] = {v: np.full(size, v, dtype=np.int64) for v in range(1, size)}  # its original dependent
    parent = list(range(size))  # super-node union-find (path-compressed) ...
    up = [-1] * size  # ... and the contraction tree (uncompressed): the super-node that absorbed each one
    members: list[np.ndarray] = [np.array([v]) for v in range(size)]
    weak = list(range(size))  # union-find of weakly connected parts: an arc inside one closes a cycle
    enter: list[tuple[int, int, float]] = [(0, 0, 0.0)] * size  # chosen arc into each super-node: (head, dep, score)

    def find(table: list[int], x: int) -> int:
        root = x
        while table[root] != root:
            root = table[root]
        while table[x] != root:
            table[x], x = root, table[x]
        return root

    todo = list(range(size - 1, 0, -1))
    while todo:
        node = todo.pop()
        scores = inw[node]
        head = int(scores.argmax())
        enter[node] = (head, int(inarg[node][head]), float(scores[head]))
        top = find(parent, head)
        if find(weak, top) != find(weak, node):
            weak[find(weak, node)] = find(weak, top)
            continue
        cycle = [node]  # the arc closes a cycle: follow the chosen arcs back to node
        while top != node:
            cycle.append(top)
            top = find(parent, enter[top][0])
        new = len(parent)
        parent.append(new)
        up.append(-1)
        weak.append(new)
        weak[find(weak, node)] = new
        enter.append((0, 0, 0.0))
        merged = np.full(size, -np.inf)
        merged_arg = np.zeros(size, dtype=np.int64)
        for c in cycle:
            lowered = inw.pop(c) - enter[c][2]
            better = lowered > merged
            merged[better] = lowered[better]
            merged_arg[better] = inarg.pop(c)[better]
            parent[c] = up[c] = new
        members.append(np.concatenate([members[c] for c in cycle]))
        merged[members[new]] = -np.inf  # arcs inside the cycle
        inw[new], inarg[new] = merged, merged_arg
        todo.append(new)

    # Expansion: every super-node's chosen arc is kept, except those of the super-nodes that a kept arc enters
    # from outside (the ones on the path from that arc's dependent up to the super-node it was chosen for).
    heads = np.zeros(size, dtype=np.int64)
    dropped = [False] * len(parent)
    for node in range(len(parent) - 1, 0, -1):
        if dropped[node] or node == 0:
            continue
        head, dep, _ = enter[node]
        heads[dep] = head
        inner = dep
        while inner != node:
            dropped[inner] = True
            inner = up[inner]
    return heads


def _spread(weights: np.ndarray) -> float:
    """More than the difference of any two trees' scores over ``weights`` (-inf only on row 0 and the diagonal):
    trees differ by less than n * (hi - lo)."""
    hi = float(weights[1:].max())  # finite arcs only: the -inf diagonal never wins a max ...
    np.fill_diagonal(weights, np.inf)  # ... nor, turned to +inf for a moment, a min
    lo = float(weights[1:].min())
    np.fill_diagonal(weights, -np.inf)
    return (weights.shape[0] - 1) * (hi - lo) + 1.0


def mst_single(scores_np: np.ndarray, fixed: Fixed | None = None) -> np.ndarray:
    """Best tree with one ROOT child for one sentence, among those that keep ``fixed`` (``None``: all).

    ``scores_np[d, h]`` (shape ``(n+1, n+1)``) is the log-space score of word d taking head h;
    row 0 and the diagonal are ignored and -inf forbids an arc (used only if no tree avoids
    it). Returns int64 heads of shape ``(n+1,)`` with ``heads[0] == 0``. ``ConstraintError`` when no tree keeps
    ``fixed``.
    """
    if scores_np.ndim != 2 or scores_np.shape[0] != scores_np.shape[1]:
        raise ValueError(f"scores must be (n+1, n+1), got {scores_np.shape}")
    size = scores_np.shape[0]
    if fixed:
        fixed.check(size - 1, projective=False)
        scores_np = fixed.arc_scores(scores_np)  # (n+1, n+1)
    if size <= 2:
        return np.zeros(size, dtype=np.int64)  # (n+1,): no words, or one word under ROOT
    weights = _finite_weights(scores_np)  # (n+1, n+1)
    if fixed and fixed.spans:  # one arc into each span: each extra one a loss, as a second ROOT child is below
        weights -= _spread(weights) * fixed.entering()
    best = weights.argmax(axis=1)  # (n+1,)
    best[0] = 0
    if not (fixed and fixed.spans) and np.count_nonzero(best == 0) == 2 and _find_cycle(best) is None:
        return best  # every word's favourite head already forms a one-root tree
    weights[1:, 0] -= _spread(weights)  # any second ROOT child a loss
    heads = _decode(weights)  # (n+1,)
    if fixed:
        fixed.check_kept(heads[1:].tolist(), projective=False)
    return heads


@torch.no_grad()
def mst(scores: torch.Tensor, lengths: torch.Tensor, fixed: Sequence[Fixed | None] | None = None) -> torch.Tensor:
    """Batched :func:`mst_single`: ``scores`` ``(batch, n+1, n+1)`` as in :func:`eisner`, returns
    heads ``(batch, n+1)`` (LongTensor on the device of ``scores``; 0 at position 0 and padding); ``fixed``: each
    sentence's constraints (``None``: none)."""
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
            out[b, : length + 1] = mst_single(array[b, : length + 1, : length + 1], None if fixed is None else fixed[b])
    return torch.from_numpy(out).to(scores.device)  # (batch, n+1)
