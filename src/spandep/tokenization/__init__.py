"""Raw text → sentences of tokens (and the words of multiword tokens): a lossless rule fallback
(:class:`RuleTokenizer`) and a small character-level network trained per treebank (:func:`load_tokenizer`).
See ``docs/tokenizer.md``. The trained tokenizer (torch) is imported on first use."""

from __future__ import annotations

from typing import Any

from spandep.tokenization.rules import RuleTokenizer
from spandep.tokenization.text import Tokenizer, TokenSpan, paragraphs, token_ranges

__all__ = [
    "RuleTokenizer", "TokenSpan", "Tokenizer", "TrainedTokenizer", "load_tokenizer", "paragraphs", "token_ranges",
    "tokenizer_for",
]


def __getattr__(name: str) -> Any:
    if name in ("TrainedTokenizer", "load_tokenizer", "tokenizer_for"):
        from spandep.tokenization import trained

        return getattr(trained, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
