"""Label and tag vocabularies built from training data and stored as plain lists in a model's config."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


def build_vocab(items: Iterable[str], specials: Iterable[str] = (), min_freq: int = 1) -> list[str]:
    """Specials first, then items seen ``min_freq`` times or more, most frequent first (ties alphabetical)."""
    counts = Counter(items)
    head = list(specials)
    seen = set(head)
    rest = sorted((k for k, c in counts.items() if c >= min_freq and k not in seen), key=lambda k: (-counts[k], k))
    return head + rest
