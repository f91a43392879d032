"""UD v1 → UD v2: the changes that can be made from a tree alone, so that a model trained on a v1 treebank outputs v2
relations and a v1 gold file is scored against v2 predictions.

Applied to a treebank flagged v1 (``ud_version = 1`` in a training config, a folder named ``*_v1`` or ``*_v1_*``:
:func:`named_v1`). The table, with what is left as it was, is in docs/data.md, "UD v1 treebanks"; it follows UD's
summary of the v2 changes (universaldependencies.org/v2/summary.html) and its conversion checklist
(universaldependencies.org/workgroups/v1_to_v2.html). Everything else of a sentence (forms, lemmas, XPOS, comments,
multiword tokens, DEPS, MISC) is kept as read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from spandep.data.sentence import Sentence, Token
from spandep.data.trees import tree_problems

__all__ = ["RELATIONS", "UPOS", "FEATURES", "named_v1", "to_v2", "sentences_to_v2"]

RELATIONS = {  # v1 universal relation → v2, subtypes kept (dobj:caus → obj:caus)
    "dobj": "obj", "nsubjpass": "nsubj:pass", "csubjpass": "csubj:pass", "auxpass": "aux:pass", "mwe": "fixed",
    "name": "flat:name", "foreign": "flat:foreign",
}
UPOS = {"CONJ": "CCONJ"}
FEATURES = {  # (feature, value) → (feature, value); value None: any value, kept
    ("Negative", None): ("Polarity", None), ("Aspect", "Pro"): ("Aspect", "Prosp"),
    ("VerbForm", "Trans"): ("VerbForm", "Conv"), ("Definite", "Red"): ("Definite", "Cons"),
}
PREDICATES = ("VERB", "AUX", "ADJ", "ADV")  # an nmod of a word of these is an obl in v2
NEG = {"DET": "det", "AUX": "aux"}  # neg by the word's UPOS; any other (PART, ADV, ...) → advmod
# which remnant of an elided clause is promoted to its head (v2's obliqueness order), by its correlate's relation
PROMOTION = ("nsubj", "obj", "iobj", "obl", "advmod", "csubj", "xcomp", "ccomp", "advcl")
_V1_NAME = re.compile(r"(?:^|_)v1(?:_|$)")


def named_v1(name: str) -> bool:
    """Whether a treebank's folder name marks it UD v1 (``zh_gsd_v1``, ``hi_hdtb_v1_prerelease``)."""
    return _V1_NAME.search(name) is not None


def _relation(word: Token, heads: dict[int, Token]) -> str:
    """The v2 relation of ``word`` (``heads``: words by id) other than ``remnant``'s."""
    universal, colon, subtype = word.deprel.partition(":")
    if universal in RELATIONS:
        new = RELATIONS[universal]
        return new if not colon else f"{new.partition(':')[0]}:{subtype}"
    if universal == "neg":
        return NEG.get(word.upos, "advmod")
    head = heads.get(word.head) if word.head else None
    if universal == "nmod" and subtype != "poss" and head is not None and _upos(head.upos) in PREDICATES:
        return "obl" + colon + subtype
    return word.deprel


def _upos(upos: str) -> str:
    return UPOS.get(upos, upos)


def _features(feats: str) -> str:
    """``feats`` with the v1 names and values of :data:`FEATURES` renamed, sorted as CoNLL-U wants them."""
    if feats == "_":
        return feats
    pairs = []
    for pair in feats.split("|"):
        name, _, value = pair.partition("=")
        new_name, new_value = FEATURES.get((name, value), FEATURES.get((name, None), (name, value)))
        pairs.append(f"{new_name}={value if new_value is None else new_value}")
    return "|".join(sorted(pairs, key=lambda p: p.partition("=")[0].lower()))


def _elided_clauses(words: list[Token]) -> Iterator[list[Token]]:
    """The ``remnant`` words of a sentence grouped by elided clause: in order, a group ending where a remnant's
    correlate (its head) is one a remnant of the group already has, or belongs to another predicate."""
    by_id = {w.id: w for w in words}
    group: list[Token] = []
    for word in (w for w in words if w.deprel.partition(":")[0] == "remnant"):
        correlate = by_id.get(word.head or 0)
        predicate = correlate.head if correlate else None
        if group and (word.head in {g.head for g in group} or predicate != by_id[group[0].head or 0].head):
            yield group
            group = []
        if correlate is not None:
            group.append(word)
    if group:
        yield group


def _rank(relation: str) -> int:
    universal = relation.partition(":")[0]
    return PROMOTION.index(universal) if universal in PROMOTION else len(PROMOTION)


def _orphans(words: list[Token]) -> list[Token]:
    """v1's ``remnant`` (each remnant attached to its correlate in the full clause) as v2's ellipsis: the remnant whose
    correlate ranks first in :data:`PROMOTION` heads the elided clause, attached as ``conj`` to the full clause's
    predicate, the others its ``orphan`` s. Where that would not give a tree, each remnant is only relabelled
    ``orphan`` (its head kept)."""
    by_id = {w.id: w for w in words}
    changed = dict(by_id)
    for group in _elided_clauses(words):
        promoted = min(group, key=lambda w: _rank(by_id[w.head or 0].deprel))
        changed[promoted.id] = replace(promoted, head=by_id[promoted.head or 0].head, deprel="conj")
        for word in group:
            if word is not promoted:
                changed[word.id] = replace(word, head=promoted.id, deprel="orphan")
    out = [changed[w.id] for w in words]
    kept = words if tree_problems([w.head for w in out]) else out
    return [replace(w, deprel="orphan") if w.deprel.partition(":")[0] == "remnant" else w for w in kept]


def to_v2(sentence: Sentence) -> Sentence:
    """``sentence`` of a UD v1 treebank with UD v2 relations, UPOS and feature names (a new sentence; the one given
    is unchanged)."""
    original = {w.id: w for w in sentence.words}
    words = [
        replace(w, deprel=_relation(w, original), upos=_upos(w.upos), feats=_features(w.feats)) for w in sentence.words
    ]
    if any(w.deprel.partition(":")[0] == "remnant" for w in words):
        words = _orphans(words)
    return replace(sentence, words=words)


def sentences_to_v2(sentences: Iterable[Sentence]) -> Iterator[Sentence]:
    """:func:`to_v2` of each sentence, lazily."""
    return map(to_v2, sentences)
