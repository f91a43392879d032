"""Relative clauses: the relative pronoun's role goes to the noun it stands for (``the book which I read``: ``read
→ book`` as ``obj``) and the pronoun refers to that noun (``book → which`` as ``ref``); ``whose`` does the same one
level down (``the firm whose CEO left``: ``CEO → firm`` as ``nmod:poss``). A clause with no relative pronoun (``the
book I read``) gives the noun the role its shape leaves open: ``obl`` where a preposition is stranded after the
predicate (``the house I live in``), ``obj`` where the clause has a subject and no object, ``nsubj`` where it has no
subject."""

from __future__ import annotations

from spandep.data.sentence import Token
from spandep.enhancement.graph import Graph, feature

RELATIVE_CLAUSES = ("acl:relcl",)
MOVED = {"advmod": "obl"}  # a relative adverb's role as the noun's (``the lab where I work``: ``work → lab`` as ``obl``)
COMPLEMENTS = ("obj", "ccomp", "xcomp")  # a clause with one of these leaves no object role open


def relative_pronouns(graph: Graph) -> None:
    """For each relative clause, move the arcs of its relative pronouns (children of the clause's predicate with
    ``PronType=Rel``, or possessive ones of such a child) to the modified noun and add the ``ref`` arcs; a clause
    without one gets its implied arc (:func:`implied_role`)."""
    for clause in graph.words:
        if clause.deprel not in RELATIVE_CLAUSES or not clause.head:
            continue
        found = [(clause, p) for p in graph.children(clause.id) if feature(p, "PronType") == "Rel"]
        found += [(c, p) for c in graph.children(clause.id) for p in graph.children(c.id, "nmod") if p.deprel == "nmod:poss"
                  and feature(p, "PronType") == "Rel"]
        for holder, pronoun in found:
            for edge in [e for e in graph.edges[pronoun.id] if e[0] == holder.id]:
                graph.remove(pronoun.id, edge)
                graph.add(holder.id, clause.head, MOVED.get(edge[1], edge[1]))
            graph.add(clause.head, pronoun.id, "ref")
        role = None if found else implied_role(graph, clause)
        if role:
            graph.add(clause.id, clause.head, role)


def implied_role(graph: Graph, clause: Token) -> str | None:
    """The role of the modified noun in a relative clause without a relative pronoun, from the clause's shape."""
    kids = graph.children(clause.id)
    passive = any(k.deprel == "aux:pass" for k in kids)
    if not graph.children(clause.id, "nsubj", "csubj", "expl"):
        return "nsubj:pass" if passive else "nsubj"
    if passive or any(k.deprel in COMPLEMENTS for k in kids):
        return None
    if any(k.upos == "ADP" and k.deprel == "obl" and k.id > clause.id for k in kids):
        return "obl"
    return "obj"
