"""Which words count as punctuation when scores "without punctuation" are computed.

The rule, applied to every GOLD word on its own (``PUNCT_RULE`` is this text in one paragraph and is
printed with every report):

1. If the word has a UPOS (not ``_``): it is punctuation iff its UPOS is ``PUNCT`` or ``SYM``.
2. Else, if it has an XPOS (not ``_``): it is punctuation iff its XPOS is one of the PTB punctuation
   tags, which are exactly these five: `` (opening quotes), '' (closing quotes), : (colons, dashes,
   semicolons), , (comma), . (sentence-final).
   -LRB-, -RRB-, # and $ are NOT punctuation.
3. Else (neither UPOS nor XPOS): it is punctuation iff its form is non-empty and consists only of
   Unicode punctuation characters (general category P*: Pc, Pd, Pe, Pf, Pi, Po, Ps).
"""

from __future__ import annotations

import unicodedata

from spandep.data.sentence import Token

__all__ = ["PUNCT_RULE", "PUNCT_UPOS", "PTB_PUNCT_TAGS", "is_punct", "is_punct_form"]

PUNCT_UPOS = frozenset({"PUNCT", "SYM"})
PTB_PUNCT_TAGS = frozenset({"``", "''", ":", ",", "."})

PUNCT_RULE = (
    "Punctuation (decided on GOLD words): a word with a UPOS is punctuation iff its UPOS is PUNCT or SYM; "
    "a word without UPOS (_) but with an XPOS iff its XPOS is a PTB punctuation tag (`` '' : , .; "
    "-LRB- -RRB- # $ are not punctuation); a word with neither iff its form consists only of Unicode "
    "punctuation characters (category P*)."
)


def is_punct_form(form: str) -> bool:
    """True when ``form`` is non-empty and every character is Unicode punctuation (category P*)."""
    return bool(form) and all(unicodedata.category(ch).startswith("P") for ch in form)


def is_punct(word: Token) -> bool:
    """Apply the punctuation rule of this module (see ``PUNCT_RULE``) to one word."""
    if word.upos != "_":
        return word.upos in PUNCT_UPOS
    if word.xpos != "_":
        return word.xpos in PTB_PUNCT_TAGS
    return is_punct_form(word.form)
