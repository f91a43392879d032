"""Brute-force references for the decoder tests: enumerate every tree of a few words.

Kept deliberately naive (independent of spandep.data.trees) so that it can check that code too.
Feasible for n <= 6: (n+1)**n head assignments are filtered once per (n, projective) and cached.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np


def naive_is_tree(heads: tuple[int, ...]) -> bool:
    """One ROOT child, no self-loops, and every word reaches ROOT by following heads."""
    n = len(heads)
    if sum(1 for h in heads if h == 0) != 1:
        return False
    for word in range(1, n + 1):
        node, steps = word, 0
        while node != 0:
            node = heads[node - 1]
            steps += 1
            if steps > n:
                return False
    return True


def naive_is_projective(heads: tuple[int, ...]) -> bool:
    """No two arcs (ROOT at position 0) cross: checked pair by pair."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, start=1)]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


def naive_descendants(heads: tuple[int, ...] | list[int], word: int) -> set[int]:
    """The word itself and every word whose head chain passes through it."""
    found = set()
    for other in range(1, len(heads) + 1):
        node = other
        for _ in range(len(heads) + 1):
            if node == word:
                found.add(other)
                break
            if node == 0:
                break
            node = heads[node - 1]
    return found


@lru_cache(maxsize=None)
def all_trees(n: int, projective: bool = False) -> np.ndarray:
    """All valid trees of n words as an int array (count, n) of heads (word i's head at i-1)."""
    trees = [
        heads
        for heads in itertools.product(range(n + 1), repeat=n)
        if naive_is_tree(heads) and (not projective or naive_is_projective(heads))
    ]
    return np.array(trees, dtype=np.int64).reshape(len(trees), n)


def tree_score(scores: np.ndarray, heads: np.ndarray | list[int]) -> float:
    """Sum of scores[d, heads[d-1]] over words d = 1..n (scores is (n+1, n+1))."""
    heads = np.asarray(heads, dtype=np.int64)
    n = heads.shape[0]
    return float(scores[np.arange(1, n + 1), heads].sum())


def best_tree(scores: np.ndarray, projective: bool = False) -> tuple[float, np.ndarray]:
    """(score, heads) of a best tree by exhaustive search; heads has length n (no ROOT slot)."""
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0] - 1
    trees = all_trees(n, projective)  # (count, n)
    totals = scores[np.arange(1, n + 1), trees].sum(axis=1)  # (count,)
    index = int(np.argmax(totals))
    return float(totals[index]), trees[index]
