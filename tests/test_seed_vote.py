"""The voting ensemble of the seed experiment (``benchmarks/scripts/seed_vote.py``)."""

from __future__ import annotations

from dataclasses import replace

from conftest import DEV

from benchmarks.scripts.seed_vote import majority, vote
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_valid_tree


def test_one_member_is_its_own_vote_and_the_majority_wins() -> None:
    gold = [s for s in read_conllu(DEV) if len(s) >= 4][:5]
    for sentence in gold:
        assert [(w.head, w.deprel, w.upos) for w in vote([sentence]).words] == [(w.head, w.deprel, w.upos) for w in sentence.words]
        # a member that chains every word to its left neighbour, with another label and tag, is outvoted two to one
        chain = replace(sentence, words=[replace(w, head=w.id - 1, deprel="dep", upos="X") for w in sentence.words])
        voted = vote([chain, sentence, sentence])
        assert [(w.head, w.deprel, w.upos) for w in voted.words] == [(w.head, w.deprel, w.upos) for w in sentence.words]


def test_votes_that_form_no_tree_still_give_one() -> None:
    sentence = next(s for s in read_conllu(DEV) if len(s) >= 4)
    cycle = replace(sentence, words=[replace(w, head=w.id % len(sentence) + 1) for w in sentence.words])  # no ROOT
    voted = vote([cycle, cycle, sentence])
    assert is_valid_tree([w.head for w in voted.words])


def test_majority_ties_go_to_the_first_value() -> None:
    assert majority(["b", "a", "a", "b"]) == "b"
    assert majority(["c", "a", "a"]) == "a"


def test_a_tie_of_trees_goes_to_the_first_member() -> None:
    sentence = next(s for s in read_conllu(DEV) if len(s) >= 4)
    chain = replace(sentence, words=[replace(w, head=w.id - 1) for w in sentence.words])
    for first, second in ((chain, sentence), (sentence, chain)):
        assert [w.head for w in vote([first, second]).words] == [w.head for w in first.words]
