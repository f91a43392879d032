"""Output heads: per-word classifiers on the shared encoder's word vectors (UPOS, XPOS, FEATS, lemmas), trained
jointly with any parser type and filling their CoNLL-U column where the sentence gives none (docs/design.md, "The fill rule").

``HEADS`` is the registry: a new head is one file (an :class:`OutputHead` subclass) plus one line here; a training
config switches it on with a table ``[heads.NAME]``.
"""

from __future__ import annotations

from spandep.models.heads.base import IGNORE, HeadInput, OutputHead
from spandep.registry import Registry

STATE_PREFIX = "heads."  # the state-dict keys of a parser's output heads (``Parser.heads``)
HEADS: Registry[type[OutputHead]] = Registry("output head")
HEADS.add("upos", "spandep.models.heads.upos:UposTagger")
HEADS.add("xpos", "spandep.models.heads.xpos:XposTagger")
HEADS.add("feats", "spandep.models.heads.feats:FeatsTagger")
HEADS.add("lemma", "spandep.models.heads.lemma:Lemmatizer")

__all__ = ["HEADS", "IGNORE", "STATE_PREFIX", "HeadInput", "OutputHead"]
