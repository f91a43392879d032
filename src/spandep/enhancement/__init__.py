"""Enhanced UD graphs (the DEPS column) from a basic tree with UPOS, FEATS and LEMMA, by rules: no model. Design,
rules and measurements: docs/enhanced.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from spandep.data.sentence import Sentence, Token
from spandep.data.trees import is_valid_tree
from spandep.enhancement.case import case_labels
from spandep.enhancement.control import controlled_subjects
from spandep.enhancement.coordination import shared_heads, shared_subjects
from spandep.enhancement.conventions import CONVENTIONS, ENGLISH, Conventions
from spandep.enhancement.graph import Graph, without_empty_nodes
from spandep.enhancement.relative import relative_pronouns

RULES = (case_labels, relative_pronouns, shared_heads, shared_subjects, controlled_subjects)  # in this order


def enhance(sentence: Sentence, rules: Sequence[Callable[[Graph], None]] = RULES, conventions: Conventions = ENGLISH) -> Sentence:
    """A copy of ``sentence`` with every word's DEPS the enhanced graph of its basic tree (HEAD and DEPREL; a
    ``ValueError`` where they are not a tree) built by ``rules``, in order, as the language's ``conventions`` write
    it (:data:`CONVENTIONS`). The enhanced graph replaces the one the
    sentence had: its empty nodes, which belong to that graph, are left out."""
    if not is_valid_tree(sentence.heads):
        where = f"{sentence.source}:{sentence.line}"
        raise ValueError(f"{where}: an enhanced graph needs a tree (a head for every word, one root, no cycle)")
    graph = Graph(sentence, conventions)
    for rule in rules:
        if rule.__name__ not in conventions.without:
            rule(graph)
    words = [Token(**{**vars(w), "deps": graph.column(w.id)}) for w in sentence.words]  # dataclasses.replace: 5 times slower
    return without_empty_nodes(replace(sentence, words=words))


__all__ = ["CONVENTIONS", "ENGLISH", "RULES", "Conventions", "enhance", "without_empty_nodes"]
