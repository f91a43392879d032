"""One tree over a long sentence from the trees of its overlapping windows (docs/design.md, "Long sentences").

A sentence of n words is cut into windows of ``width`` words that overlap by half (:func:`windows`), and each window
is parsed as a sentence of its own, so memory grows with ``width``², never with n². Every word then has one proposed
arc from each window that holds it (its head inside that window, or ROOT where it is that window's root), and takes
the one of its *core* window, the window in which it lies farthest from an edge (:func:`core_windows`). Those core
arcs give every word one head, but they are not yet one tree: every window has a root, and arcs of neighbouring
windows can close a cycle. :func:`merge_windows` repairs them, keeping every core arc it can:

1. the core arcs split the words into components, each either a tree under one ROOT child or a cycle with trees
   hanging from it; a component is entered through its root word, or through a word of its cycle (whose core arc is
   then dropped);
2. a component may hang from another through any arc a window proposed for one of its entry words, or through a
   *fallback* arc (its entry to the other component's first entry word, weight :data:`FALLBACK`, below any proposed
   arc), so a tree always exists;
3. a maximum spanning arborescence with one ROOT child over the components (:func:`spandep.decoding.mst.mst_single`,
   dense over components: a few per window, not per word) chooses how they hang together, maximising the total
   weight of the arcs kept; a core arc weighs ``CORE_BONUS + p``, any other proposed arc ``p`` (``p`` its window's
   head probability, 1 where the window gave none).

The result is always a tree over all n words with exactly one ROOT child. Nothing here imports model code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spandep.decoding.mst import mst_single

__all__ = ["CORE_BONUS", "FALLBACK", "ProposedArcs", "core_windows", "merge_windows", "windows"]

CORE_BONUS = 1.0  # added to a core arc's weight: a word's most central window outweighs any other one's proposal
FALLBACK = -1.0  # weight of a fallback arc: below every proposed arc (those weigh at least 0)


def windows(n: int, width: int) -> list[tuple[int, int]]:
    """Windows ``[start, end)`` (0-based word positions) of at most ``width`` words covering ``n`` words, each
    starting ``max(1, width // 2)`` words after the one before, the last ending at ``n``."""
    if width < 1:
        raise ValueError(f"width must be at least 1, not {width}")
    if n <= width:
        return [(0, n)]
    stride = max(1, width // 2)
    starts = list(range(0, n - width + 1, stride))
    if starts[-1] != n - width:
        starts.append(n - width)
    return [(a, a + width) for a in starts]


def core_windows(n: int, spans: list[tuple[int, int]]) -> np.ndarray:
    """For each word ``0..n-1`` the index of the window of ``spans`` (sorted by start, covering every word) in
    which it lies farthest from an edge, the first such window on a tie → ``(n,)``."""
    best = np.full(n, -1, dtype=np.int64)  # (n,)
    depth = np.full(n, -1, dtype=np.int64)  # (n,): distance to the nearer edge of the best window so far
    for w, (a, b) in enumerate(spans):
        pos = np.arange(a, b)  # (b - a,)
        here = np.minimum(pos - a, b - 1 - pos)  # (b - a,)
        better = here > depth[a:b]  # (b - a,)
        best[a:b][better] = w
        depth[a:b][better] = here[better]
    if (best < 0).any():
        raise ValueError("the windows do not cover every word")
    return best


@dataclass
class ProposedArcs:
    """The arcs the windows proposed over words ``1..n``: ``dep``, ``head`` (0 = ROOT) and ``prob`` (the window's
    head probability, 1 where it gave none) ``(A,)`` each, and ``core (A,)``, true for exactly one arc per word."""

    n: int
    dep: np.ndarray
    head: np.ndarray
    prob: np.ndarray
    core: np.ndarray

    def weights(self) -> np.ndarray:
        """Each arc's weight in the repair: ``CORE_BONUS + p`` for a core arc, ``p`` for another → ``(A,)``."""
        return self.prob + CORE_BONUS * self.core  # (A,)


def _components(head: np.ndarray) -> tuple[np.ndarray, list[list[int]], list[bool]]:
    """Components of the functional graph ``head (1 + n,)`` (0 = ROOT): each word's component id ``(1 + n,)`` (ROOT:
    0; components 1..K), and per component its entry words (its ROOT child, or its cycle's words in order) and
    whether it is a cycle."""
    size = len(head)
    comp = np.zeros(size, dtype=np.int64)  # (1 + n,)
    entries: list[list[int]] = [[]]
    cyclic: list[bool] = [False]
    state = [0] * size  # 0 unseen, s > 0 on the walk started at s, -1 done
    state[0] = -1
    heads = head.tolist()
    for start in range(1, size):
        if state[start]:
            continue
        path, node = [], start
        while state[node] == 0:
            state[node] = start
            path.append(node)
            node = heads[node]
        if state[node] == start:  # the walk closed a new cycle at node
            cycle = path[path.index(node):]
            entries.append(cycle)
            cyclic.append(True)
            target = len(entries) - 1
        elif node == 0:  # the walk reached ROOT: its last word is a new ROOT child
            entries.append([path[-1]])
            cyclic.append(False)
            target = len(entries) - 1
        else:  # it joined a component found before
            target = int(comp[node])
        for v in path:
            comp[v] = target
            state[v] = -1
    return comp, entries, cyclic


def merge_windows(arcs: ProposedArcs) -> tuple[np.ndarray, np.ndarray]:
    """One tree over ``arcs.n`` words with one ROOT child, from the arcs the windows proposed (module docstring):
    heads ``(1 + n,)`` (``heads[0] = 0``) and, per word, the index of its arc in ``arcs`` ``(1 + n,)`` (``-1`` where
    it hangs by a fallback arc, and at position 0)."""
    n = arcs.n
    weight = arcs.weights()  # (A,)
    core = np.flatnonzero(arcs.core)  # (n,)
    if len(core) != n or sorted(arcs.dep[core].tolist()) != list(range(1, n + 1)):
        raise ValueError("every word needs exactly one core arc")
    head = np.zeros(n + 1, dtype=np.int64)  # (1 + n,)
    chosen = np.full(n + 1, -1, dtype=np.int64)  # (1 + n,)
    head[arcs.dep[core]], chosen[arcs.dep[core]] = arcs.head[core], core
    core_weight = np.zeros(n + 1)  # (1 + n,)
    core_weight[arcs.dep[core]] = weight[core]
    comp, entries, cyclic = _components(head)
    k = len(entries) - 1
    if k == 1 and not cyclic[1]:
        return head, chosen  # the core arcs already form one tree
    # A cycle entered through word e loses e's core arc (a tree's entry arc is its ROOT arc, one of the arcs that
    # may enter it); a cycle's fallback entry is the word whose core arc is the cheapest to lose.
    fallback_entry = [0] + [min(e, key=lambda v: core_weight[v]) if c else e[0] for e, c in zip(entries[1:], cyclic[1:])]
    enter = np.full((k + 1, k + 1), FALLBACK)  # (1 + K, 1 + K) [child component, parent component]
    for b in range(1, k + 1):
        if cyclic[b]:
            enter[b] -= core_weight[fallback_entry[b]]  # (1 + K,): the dropped core arc
        else:
            enter[b, 0] = core_weight[entries[b][0]]  # its own ROOT arc
    via: dict[tuple[int, int], int] = {}  # (child, parent component) → index of the proposed arc that enters so
    is_entry = np.zeros(n + 1, dtype=bool)  # (1 + n,)
    is_entry[[e for entry in entries[1:] for e in entry]] = True
    for j in np.flatnonzero(is_entry[arcs.dep] & ~arcs.core).tolist():  # other windows' arcs into entry words
        d, h = int(arcs.dep[j]), int(arcs.head[j])
        b, a = int(comp[d]), int(comp[h])
        if a == b:
            continue
        value = float(weight[j]) - (float(core_weight[d]) if cyclic[b] else 0.0)
        if value > enter[b, a]:
            enter[b, a] = value
            via[(b, a)] = j
    parent = mst_single(enter)  # (1 + K,)
    for b in range(1, k + 1):
        a = int(parent[b])
        if (b, a) in via:
            j = via[(b, a)]
            d = int(arcs.dep[j])
            head[d], chosen[d] = arcs.head[j], j
        elif not (a == 0 and not cyclic[b]):  # not its own ROOT arc: a fallback arc
            d = fallback_entry[b]
            head[d], chosen[d] = (0 if a == 0 else entries[a][0]), -1
    return head, chosen
