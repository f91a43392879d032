"""Coordination: every conjunct shares the first conjunct's heads (``saw A and B``: ``saw → B`` as ``obj``), and a
conjoined predicate without a subject of its own shares the first one's (``she came and saw``: ``saw → she``)."""

from __future__ import annotations

from spandep.data.sentence import Token
from spandep.enhancement.case import marker
from spandep.enhancement.graph import Graph, feature

SUBJECTS = ("nsubj", "csubj")
NOT_SHARED = ("root", "conj", "parataxis")  # heads of the first conjunct the others do not share


def shared_heads(graph: Graph) -> None:
    """Give each conjunct the incoming edges of the first conjunct; a case-marked relation takes the conjunct's own
    marker where it has one (``with A and in B``: ``obl:in`` for B)."""
    for word in graph.words:
        if word.deprel != "conj":
            continue
        for head, label in list(graph.edges[word.head]):
            bare = label.split(":")[0]
            if bare in NOT_SHARED:
                continue
            own = marker(graph, word, bare)
            graph.add(head, word.id, f"{bare}:{own}" if own else label)


def shared_subjects(graph: Graph) -> None:
    """Give each conjunct with no subject of its own the subjects of the first conjunct but a relative pronoun (EWT
    does not share a relative clause's subject with a conjoined clause), as ``nsubj:pass`` where the conjunct is
    passive and ``nsubj`` where it is not."""
    for word in graph.words:
        if word.deprel != "conj" or graph.children(word.id, *SUBJECTS, "expl"):
            continue
        for subject in graph.children(word.head, *SUBJECTS):
            if feature(subject, "PronType") != "Rel":
                label = subject.deprel.split(":")[0] + (":pass" if passive(graph, word, subject.deprel) else "")
                graph.add(word.id, subject.id, label)


def passive(graph: Graph, conjunct: Token, label: str) -> bool:
    """Whether ``conjunct`` is passive: it has an ``aux:pass``, or it is a participle with no auxiliary of its own
    sharing a passive subject (``label``) (``he was arrested and sent``)."""
    aux = graph.children(conjunct.id, "aux")
    return any(a.deprel == "aux:pass" for a in aux) or (
        not aux and label.endswith(":pass") and feature(conjunct, "VerbForm") == "Part")
