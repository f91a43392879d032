"""Tree utilities on head lists.

Convention used throughout: ``heads`` has length n and ``heads[i - 1]`` is the head of word i
(words are numbered 1..n); head 0 is the artificial ROOT. Everything here is iterative (no
recursion), so very long or very deep sentences are fine.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "children",
    "hull_spans",
    "is_projective",
    "is_valid_tree",
    "tree_problems",
]


def children(heads: Sequence[int]) -> list[list[int]]:
    """Dependents of every position 0..n (0 = ROOT), each list in increasing word order.

    Heads outside [0, n] are skipped, so this is safe on invalid input.
    """
    n = len(heads)
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    for dep, head in enumerate(heads, start=1):
        if isinstance(head, int) and 0 <= head <= n:
            kids[head].append(dep)
    return kids


def tree_problems(heads: Sequence[int | None]) -> list[str]:
    """Human-readable reasons why ``heads`` is not a dependency tree; empty if it is one.

    A valid tree has every head in [0, n], no self-loops, exactly one word attached to ROOT and
    no cycles. Each cycle is reported once, naming its words in order.
    """
    n = len(heads)
    if n == 0:
        return ["the sentence has no words"]
    problems: list[str] = []
    # usable[i]: head of word i when it is an in-range integer other than i itself, else -1
    usable: list[int] = [-1] * (n + 1)
    for dep, head in enumerate(heads, start=1):
        if head is None:
            problems.append(f"word {dep} has no head")
        elif not isinstance(head, int) or isinstance(head, bool):
            problems.append(f"word {dep} has a non-integer head {head!r}")
        elif head < 0 or head > n:
            problems.append(f"word {dep} has head {head} outside [0, {n}]")
        elif head == dep:
            problems.append(f"word {dep} is its own head (self-loop)")
        else:
            usable[dep] = head
    roots = [dep for dep in range(1, n + 1) if usable[dep] == 0]
    if len(roots) != 1:
        named = ", ".join(map(str, roots)) if roots else "none"
        problems.append(f"{len(roots)} words attached to ROOT (expected 1): {named}")
    # Cycle detection on the functional graph dep -> usable[dep]: colour 0 = unseen,
    # colour = walk id while on the current walk, -1 = finished.
    colour = [0] * (n + 1)
    for start in range(1, n + 1):
        if colour[start] != 0:
            continue
        path: list[int] = []
        node = start
        while node > 0 and colour[node] == 0:
            colour[node] = start
            path.append(node)
            node = usable[node]
        if node > 0 and colour[node] == start:  # walked back into this walk: a cycle
            cycle = path[path.index(node) :]
            first = cycle.index(min(cycle))
            cycle = cycle[first:] + cycle[:first]
            words = " -> ".join(map(str, cycle + [cycle[0]]))
            problems.append(f"cycle among words {sorted(cycle)} (head chain {words})")
        for visited in path:
            colour[visited] = -1
    return problems


def is_valid_tree(heads: Sequence[int | None]) -> bool:
    """True when ``heads`` is a tree: heads in range, one ROOT child, no self-loops or cycles."""
    return not tree_problems(heads)


def hull_spans(heads: Sequence[int]) -> list[tuple[int, int]]:
    """For each word 1..n, the 1-based inclusive (start, end) covering the word and all its
    descendants. For non-projective trees the hull may contain words outside the subtree.

    Runs in O(n): words are ordered top-down by a breadth-first walk from ROOT, and hulls are
    folded into heads bottom-up. Several ROOT children are tolerated (each subtree gets its own
    hulls); raises ``ValueError`` when some word cannot be reached from ROOT (cycles, self-loops,
    heads outside [0, n]).
    """
    n = len(heads)
    kids = children(heads)
    order: list[int] = []  # words, every head before its dependents
    frontier = list(kids[0])
    while frontier:
        order.extend(frontier)
        frontier = [kid for word in frontier for kid in kids[word]]
    if len(order) != n:
        raise ValueError("not a tree: " + "; ".join(tree_problems(heads) or ["unreachable words"]))
    lo = list(range(n + 1))
    hi = list(range(n + 1))
    for word in reversed(order):
        head = heads[word - 1]
        if head > 0:
            if lo[word] < lo[head]:
                lo[head] = lo[word]
            if hi[word] > hi[head]:
                hi[head] = hi[word]
    return [(lo[i], hi[i]) for i in range(1, n + 1)]


def is_projective(heads: Sequence[int]) -> bool:
    """True when no two arcs cross; an arc from ROOT is drawn from position 0.

    Arcs are intervals (min(h, d), max(h, d)); two cross when a < c < b < d. Sorting by
    (start ascending, end descending) and keeping a stack of open enclosing arcs gives
    O(n log n). Only the arcs are inspected, so this also answers for non-trees; heads outside
    [0, n] raise ``ValueError``.
    """
    n = len(heads)
    arcs: list[tuple[int, int]] = []
    for dep, head in enumerate(heads, start=1):
        if not 0 <= head <= n:
            raise ValueError(f"word {dep} has head {head} outside [0, {n}]")
        arcs.append((min(head, dep), max(head, dep)))
    arcs.sort(key=lambda arc: (arc[0], -arc[1]))
    stack: list[int] = []  # right ends of arcs enclosing the current one, innermost last
    for left, right in arcs:
        while stack and stack[-1] <= left:
            stack.pop()
        if stack and stack[-1] < right:  # innermost open arc ends strictly inside this one
            return False
        stack.append(right)
    return True
