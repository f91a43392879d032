"""A UPOS tagging head on the parser's word vectors, trained jointly so that raw text gets tags too."""

from __future__ import annotations

from spandep.models.heads.base import ClassifierHead


class UposTagger(ClassifierHead):
    """Universal part-of-speech tags as classes (models saved before the casing feature load with none)."""

    name = "upos"
    column = "upos"
