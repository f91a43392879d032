"""Raw text → sentences of tokens (and the words of multiword tokens): a lossless rule fallback
(:class:`RuleTokenizer`) and a small character-level network trained per treebank (:func:`load_tokenizer`).
See ``docs/tokenizer.md``."""

from spandep.tokenization.rules import RuleTokenizer
from spandep.tokenization.text import Tokenizer, TokenSpan, paragraphs, token_ranges

__all__ = ["RuleTokenizer", "TokenSpan", "Tokenizer", "paragraphs", "token_ranges"]
