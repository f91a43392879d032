"""What a parser predicts for one sentence, whichever model type made it."""

from __future__ import annotations

from typing import NamedTuple


class Parse(NamedTuple):
    """Heads and dependency labels of words ``1..n`` (head 0 = ROOT), and their UPOS tags when the model has a
    tagging head (``None`` otherwise)."""

    heads: list[int]
    labels: list[str]
    upos: list[str] | None = None
