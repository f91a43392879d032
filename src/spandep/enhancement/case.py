"""Case information in the relation labels: ``obl:with``, ``nmod:of``, ``acl:to``, ``advcl:if`` from the case or
mark word nearest the dependent (with its ``fixed`` words: ``because_of``; ``when`` and ``where`` from an
interrogative adverb: ``advcl:when``), ``conj:and`` from the coordinating conjunction of the conjunct or of a later
one (``A, B and C``: both ``conj:and``; ``/`` is ``slash``). A subtype is the lower-cased form: EWT writes
``nmod:including``, not the lemma ``include``; one that is not letters (``&``) is left out."""

from __future__ import annotations

import re

from spandep.data.sentence import Token
from spandep.enhancement.graph import Graph, feature

MARKERS = {"nmod": ("case",), "obl": ("case",), "acl": ("mark", "case"), "advcl": ("mark", "case")}  # bare label → its markers
ADVERBIAL_MARKERS = ("advcl",)  # also marked by an interrogative adverb before the clause's head (``when``)
CASED = ("nmod", "obl")  # relations whose case is written where the conventions say so
SUBTYPE = re.compile(r"[a-z]+(_[a-z]+)*")


def subtype(graph: Graph, word: Token) -> str | None:
    """The subtype a marker writes: its lower-cased form with its ``fixed`` words joined by ``_`` (``and/or`` →
    ``and_or``, ``/`` → ``slash``), or None where that is not letters."""
    lemma = graph.conventions.marker == "lemma"
    text = "_".join((w.lemma if lemma and w.lemma != "_" else w.form).lower() for w in [word, *graph.children(word.id, "fixed")])
    text = "slash" if text == "/" else text.replace("/", "_")
    return text if SUBTYPE.fullmatch(text) else None


def marker(graph: Graph, word: Token, relation: str) -> str | None:
    """The case-marked subtype of ``word`` under the bare ``relation``: that of its last marker, then (by the
    graph's conventions) its case for ``nmod``/``obl``, or None."""
    relations = MARKERS.get(relation, ())
    found = [c for c in graph.children(word.id) if c.deprel in relations]
    if not found and relation in ADVERBIAL_MARKERS:
        found = [c for c in graph.children(word.id, "advmod") if c.id < word.id and feature(c, "PronType") == "Int"]
    parts = [subtype(graph, found[-1]) if found else None]
    if graph.conventions.case and relation in CASED:
        parts.append((feature(word, "Case") or "").lower() or None)
    return ":".join(p for p in parts if p) or None


def conjunction(graph: Graph, word: Token) -> str | None:
    """The subtype of conjunct ``word`` from its coordinating conjunction: its own ``cc``, else that of the first
    later conjunct of the same head that has one."""
    later = [c for c in graph.children(word.head, "conj") if c.id >= word.id] if word.head else []
    for conjunct in later:
        cc = [c for c in graph.children(conjunct.id) if c.deprel == "cc"]
        if cc:
            return subtype(graph, cc[0])
    return None


def case_labels(graph: Graph) -> None:
    """Give every basic ``nmod``/``obl``/``acl``/``advcl`` arc its marker's subtype and every ``conj`` arc its
    conjunction's."""
    keep_subtype = graph.conventions.case  # obl:arg → obl:arg:ins; EWT's subtyped relations take no marker
    for word in graph.words:
        relation = word.deprel.split(":")[0] if keep_subtype else word.deprel
        if word.deprel == "conj":
            found = conjunction(graph, word) if graph.conventions.conj else None
        else:
            found = marker(graph, word, relation)
        if found:
            graph.relabel(word.id, (word.head, word.deprel), f"{word.deprel}:{found}")
