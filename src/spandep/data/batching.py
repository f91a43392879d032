"""Token-budget, length-bucketed batches: sentences of similar length share a batch, so little is padding."""

from __future__ import annotations

import random
from collections.abc import Sequence


def token_batches(lengths: Sequence[int], budget: int, shuffle: bool = False, seed: int = 0) -> list[list[int]]:
    """Group sentence indices into batches whose padded size ``len(batch) * max_length`` stays within ``budget``.

    Sentences are sorted by length (with random tie-breaking when ``shuffle``) so each batch is near-uniform;
    with ``shuffle`` the batch order is random too. A sentence longer than the budget gets a batch of its own.
    """
    rng = random.Random(seed)
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random() if shuffle else i))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        n = max(lengths[i], 1)
        if current and max(longest, n) * (len(current) + 1) > budget:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


def length_groups(lengths: Sequence[int], ratio: float) -> list[list[int]]:
    """Indices grouped by length, shortest first: a group ends before the first length over ``ratio`` times its
    shortest (lengths under 2 count as 2). Parsed group by group, a mixed set of sentences wastes less on padding."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:
        if not groups or lengths[i] > ratio * max(2, lengths[groups[-1][0]]):
            groups.append([])
        groups[-1].append(i)
    return groups
