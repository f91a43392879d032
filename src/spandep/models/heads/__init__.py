"""Output heads: per-word classifiers on the shared encoder's word vectors (UPOS, and more to come), trained
jointly with any parser type and filling their CoNLL-U column where the input has ``_``.

``HEADS`` is the registry: a new head is one file (an :class:`OutputHead` subclass) plus one line here; a training
config switches it on with a table ``[heads.NAME]``.
"""

from __future__ import annotations

from spandep.models.heads.base import IGNORE, OutputHead
from spandep.registry import Registry

HEADS: Registry[type[OutputHead]] = Registry("output head")
HEADS.add("upos", "spandep.models.heads.upos:UposTagger")

__all__ = ["HEADS", "IGNORE", "OutputHead"]
