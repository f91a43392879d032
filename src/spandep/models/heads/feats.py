"""A morphological-features head: each word's whole FEATS bundle (``Number=Plur|Person=3``) is one class.

Bundles, not one classifier per feature: the choice was measured on EWT dev (docs/design.md, "Output heads").
A gold ``_`` in FEATS is a value (the word has no features), not an unknown: it is a class like any bundle.
"""

from __future__ import annotations

from spandep.models.heads.base import ClassifierHead

NO_FEATURES = "<none>"  # the class of a word whose FEATS is ``_``: kept apart from the "unknown" marker


class FeatsTagger(ClassifierHead):
    """Feature bundles as classes."""

    name = "feats"
    column = "feats"

    @classmethod
    def gold_class(cls, form: str, value: str) -> str:
        return NO_FEATURES if value == "_" else value

    def value(self, tag: str, form: str) -> str:
        return "_" if tag == NO_FEATURES else tag
