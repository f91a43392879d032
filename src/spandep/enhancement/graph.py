"""The enhanced graph being built over one sentence's basic tree: edges by dependent, the basic tree's children,
and each word's features, so that the rules read the tree and write the graph without touching the sentence."""

from __future__ import annotations

from dataclasses import replace

from spandep.data.sentence import Sentence, Token
from spandep.enhancement.conventions import ENGLISH, Conventions


def is_empty_node(line: str) -> bool:
    """Whether an extra line of a sentence (``Sentence.extra_lines``) is an empty node's (ID ``8.1``)."""
    return "." in line.split("\t", 1)[0]


def without_empty_nodes(sentence: Sentence) -> Sentence:
    """``sentence`` without its empty nodes' lines (multiword tokens kept)."""
    return replace(sentence, extra_lines=[(k, line) for k, line in sentence.extra_lines if not is_empty_node(line)])


def feature(token: Token, name: str) -> str | None:
    """The value of FEATS feature ``name`` of ``token`` (``PronType`` → ``Rel``), or None."""
    for pair in token.feats.split("|"):
        key, _, value = pair.partition("=")
        if key == name:
            return value
    return None


class Graph:
    """An enhanced graph over the words 1..n of a sentence with a complete basic tree, written by ``conventions``.
    ``edges[d]`` are the ``(head, label)`` pairs of dependent ``d`` in the order the rules added them (the basic arc
    first)."""

    def __init__(self, sentence: Sentence, conventions: Conventions = ENGLISH) -> None:
        self.conventions = conventions
        self.words: list[Token] = sentence.words
        self.edges: dict[int, list[tuple[int, str]]] = {w.id: [(int(w.head), w.deprel)] for w in sentence.words}
        self.kids: dict[int, list[Token]] = {w.id: [] for w in sentence.words}
        for w in sentence.words:
            if w.head:
                self.kids[w.head].append(w)

    def word(self, i: int) -> Token:
        """Word ``i`` (1-based)."""
        return self.words[i - 1]

    def children(self, head: int, *relations: str) -> list[Token]:
        """The basic-tree children of ``head`` whose relation, less its subtype, is one of ``relations`` (all with
        none given), in word order."""
        return [c for c in self.kids[head] if not relations or c.deprel.split(":")[0] in relations]

    def add(self, head: int, dependent: int, label: str) -> None:
        """Add the edge ``head → dependent`` with ``label`` unless the graph has it or it would be a self-loop."""
        pair = (head, label)
        if head != dependent and pair not in self.edges[dependent]:
            self.edges[dependent].append(pair)

    def relabel(self, dependent: int, old: tuple[int, str], label: str) -> None:
        """Give the edge ``old`` of ``dependent`` the label ``label``."""
        edges = self.edges[dependent]
        edges[edges.index(old)] = (old[0], label)

    def remove(self, dependent: int, edge: tuple[int, str]) -> None:
        """Drop ``edge`` of ``dependent``."""
        self.edges[dependent].remove(edge)

    def column(self, dependent: int) -> str:
        """The DEPS value of ``dependent``: its edges sorted by head, then label (CoNLL-U's order)."""
        return "|".join(f"{h}:{label}" for h, label in sorted(self.edges[dependent]))

    def dependents(self, head: int, *relations: str) -> list[int]:
        """The dependents of ``head`` in the graph over an edge whose label, less its subtypes, is one of
        ``relations``."""
        return [d for d, edges in self.edges.items()
                if any(h == head and label.split(":")[0] in relations for h, label in edges)]
