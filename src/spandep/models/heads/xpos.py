"""An XPOS tagging head: the treebank's own part-of-speech tags (Penn tags for EWT), where the treebank has them."""

from __future__ import annotations

from spandep.models.heads.base import ClassifierHead


class XposTagger(ClassifierHead):
    """Language-specific tags as classes; a training set without an XPOS column is refused by ``config_from_data``."""

    name = "xpos"
    column = "xpos"
