"""Label and tag vocabularies built from training data and stored as plain lists in a model's config."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence


def build_vocab(items: Iterable[str], specials: Iterable[str] = (), min_freq: int = 1) -> list[str]:
    """Specials first, then items seen ``min_freq`` times or more, most frequent first (ties alphabetical)."""
    counts = Counter(items)
    head = list(specials)
    seen = set(head)
    rest = sorted((k for k, c in counts.items() if c >= min_freq and k not in seen), key=lambda k: (-counts[k], k))
    return head + rest


def kept_first(vocab: Sequence[str], first: Sequence[str]) -> list[str]:
    """``vocab`` with the items of ``first`` it has numbered first, in ``first``'s order, then the rest in their own
    order: a run that starts from a trained model (``[training] init``) keeps that model's class ids."""
    have = set(vocab)
    head = [v for v in first if v in have]
    taken = set(head)
    return head + [v for v in vocab if v not in taken]
