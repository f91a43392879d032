"""Enhanced UD graphs (the DEPS column) from a basic tree with UPOS, FEATS and LEMMA, by rules: no model. Design,
rules and measurements: docs/enhanced.md."""

from __future__ import annotations

from dataclasses import replace

from spandep.data.sentence import Sentence
from spandep.enhancement.case import case_labels
from spandep.enhancement.control import controlled_subjects
from spandep.enhancement.coordination import shared_heads, shared_subjects
from spandep.enhancement.graph import Graph
from spandep.enhancement.relative import relative_pronouns

RULES = (case_labels, relative_pronouns, shared_heads, shared_subjects, controlled_subjects)  # in this order


def enhance(sentence: Sentence) -> Sentence:
    """A copy of ``sentence`` with every word's DEPS the enhanced graph of its basic tree (HEAD and DEPREL, every
    word headed)."""
    graph = Graph(sentence)
    for rule in RULES:
        rule(graph)
    return replace(sentence, words=[replace(w, deps=graph.column(w.id)) for w in sentence.words])


__all__ = ["RULES", "enhance"]
