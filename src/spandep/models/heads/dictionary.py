"""A language's dictionary for the words a lemma head never saw in training (``Lemmatizer.dictionary``, issue 45).

The edit scripts of ``models/heads/lemma.py`` generalise from the training words' endings, which fails on the forms
a language makes irregularly or that no training word resembles: an English model gives ``fled → fle``, ``hottest →
hott``, a Russian one most of its errors on unseen nouns and verbs. simplemma (MIT, on PyPI) carries full-form word
lists of about fifty languages; its lookup is what this module uses, never its guessing rules. Two modes, chosen per
model on its dev split (``benchmarks/scripts/lemma_dictionary.py``; docs/heads.md, "A language's dictionary"):

- ``"repair"``: where a word's form is in none of the model's lexicons and the script's lemma is a word of neither the
  training lemmas nor the dictionary, while the dictionary has the form with another lemma, that lemma;
- ``"prefer"``: the dictionary's lemma for every such unseen form the dictionary has, the script's for the rest.

Proper nouns (predicted UPOS ``PROPN``) keep the script's lemma: their casing and spelling are the treebank's. The
dictionary is loaded on the first word that needs it, in simplemma's low-memory form (about 25 MB for Russian).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import simplemma
from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

MODES = ("repair", "prefer")
SERBO_CROATIAN = frozenset({"hr", "sr", "bs"})  # simplemma lists them as one language, hbs
KEPT = frozenset({"PROPN"})  # predicted UPOS whose lemma the dictionary never replaces


def checked(setting: Any) -> dict[str, str]:
    """``setting`` (a lemma head's ``dictionary``) as ``{"language": code, "mode": mode}``, or a ValueError that says
    what is allowed."""
    if not isinstance(setting, dict) or set(setting) != {"language", "mode"}:
        raise ValueError(f"the lemma head's dictionary must be a table of language and mode, not {setting!r}")
    if setting["language"] not in SUPPORTED_LANGUAGES:
        raise ValueError(f"the lemma head's dictionary language {setting['language']!r} is not one of simplemma's: {', '.join(sorted(SUPPORTED_LANGUAGES))}")
    if setting["mode"] not in MODES:
        raise ValueError(f"the lemma head's dictionary mode must be {' or '.join(map(repr, MODES))}, not {setting['mode']!r}")
    return {"language": setting["language"], "mode": setting["mode"]}


def language_of(code: str | None) -> str | None:
    """simplemma's code for the language of ISO 639-1 ``code`` (``spandep.data.languages``), or ``None`` where it
    has no list of that language."""
    found = "hbs" if code in SERBO_CROATIAN else code
    return found if found in SUPPORTED_LANGUAGES else None


class Dictionary:
    """The lookups of one language (``checked`` setting) for a lemma head whose lexicons know ``seen_forms`` and
    ``seen_lemmas`` (the training words')."""

    def __init__(self, setting: dict[str, str], seen_forms: Collection[str], seen_lemmas: Collection[str]) -> None:
        self.language, self.mode = setting["language"], setting["mode"]
        self.seen_forms, self.seen_lemmas = seen_forms, seen_lemmas

    def _known(self, word: str) -> bool:
        return simplemma.is_known(word, lang=self.language, low_memory=True)

    def _is_word(self, word: str) -> bool:
        return word in self.seen_lemmas or self._known(word)

    def lemma(self, lemma: str, form: str, tag: str) -> str:
        """The lemma of a word whose head gave ``lemma`` for ``form`` with the predicted UPOS ``tag``, as the mode
        says (the module docstring)."""
        if tag in KEPT or form in self.seen_forms or not self._known(form):
            return lemma
        found = simplemma.lemmatize(form, lang=self.language, low_memory=True)
        if self.mode == "prefer":
            return found
        return found if found != form and not self._is_word(lemma) else lemma
