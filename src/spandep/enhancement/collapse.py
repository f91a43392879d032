"""Empty nodes collapsed into paths, as the IWPT 2020/2021 shared tasks scored enhanced graphs (their
``enhanced_collapse_empty_nodes.pl``): an edge ``E:r`` from empty node ``E`` becomes ``H:r0>r`` for each edge ``H:r0``
of ``E``, and the empty nodes' lines go. The official scorer (``udtools.udeval``) reads such paths; it drops the
edges of empty nodes that are left."""

from __future__ import annotations

from dataclasses import replace

from spandep.data.sentence import Sentence
from spandep.enhancement.graph import is_empty_node, without_empty_nodes


def _edges(deps: str) -> list[tuple[str, str]]:
    """The ``(head, label)`` pairs of a DEPS value (none for ``_``)."""
    return [tuple(edge.split(":", 1)) for edge in deps.split("|")] if deps not in ("", "_") else []  # type: ignore[misc]


def collapse_empty_nodes(sentence: Sentence) -> Sentence:
    """A copy of ``sentence`` with its empty nodes collapsed into paths in the other words' DEPS."""
    empty = {}
    for _, line in sentence.extra_lines:
        if is_empty_node(line):
            columns = line.split("\t")
            empty[columns[0]] = _edges(columns[8])

    def paths(head: str, label: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if head not in empty:
            return [f"{head}:{label}"]
        if head in seen:  # a cycle among empty nodes: nothing to collapse it into
            return []
        return [p for h, r in empty[head] for p in paths(h, f"{r}>{label}", seen | {head})]

    if not empty:
        return sentence
    words = [replace(w, deps="|".join(dict.fromkeys(p for h, r in _edges(w.deps) for p in paths(h, r))) or "_")
             for w in sentence.words]
    return without_empty_nodes(replace(sentence, words=words))
