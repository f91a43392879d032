"""Controlled and raised subjects: the subject of an open clausal complement (``xcomp``) is the object of its
controlling predicate where it has one (``asked him to go``), else its subject (``she wants to go``), with the
label ``nsubj:xsubj``."""

from __future__ import annotations

from spandep.enhancement.graph import Graph

CONTROLLERS = (("obj", "iobj"), ("nsubj",))  # tried in this order


def controlled_subjects(graph: Graph) -> None:
    """Add ``nsubj:xsubj`` from each ``xcomp`` (a basic one or one shared through coordination) without a subject of
    its own to its controller, higher clauses first so a chain of them (``tries to want to go``) resolves."""
    complements = [w for w in graph.words if any(label == "xcomp" for _, label in graph.edges[w.id])]
    for word in sorted(complements, key=lambda w: depth(graph, w.id)):
        if graph.children(word.id, "nsubj", "csubj", "expl"):
            continue
        for head in [h for h, label in graph.edges[word.id] if label == "xcomp"]:
            for relations in CONTROLLERS:
                controllers = graph.dependents(head, *relations)
                if controllers:
                    for controller in controllers:
                        graph.add(word.id, controller, "nsubj:xsubj")
                    break


def depth(graph: Graph, word: int) -> int:
    """The number of basic arcs from ``word`` up to the root."""
    steps = 0
    while (head := graph.word(word).head):
        word, steps = head, steps + 1
    return steps
