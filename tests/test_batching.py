from hypothesis import given, settings
from hypothesis import strategies as st

from spandep.data.batching import length_groups, token_batches
from spandep.data.vocab import build_vocab


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 80), min_size=0, max_size=60), st.integers(1, 400), st.booleans(), st.integers(0, 5))
def test_every_sentence_once_and_budget_kept(lengths, budget, shuffle, seed):
    batches = token_batches(lengths, budget, shuffle=shuffle, seed=seed)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))
    for b in batches:
        assert b, "no empty batch"
        padded = len(b) * max(max(lengths[i], 1) for i in b)
        assert padded <= budget or len(b) == 1


def test_shuffle_is_seeded_and_count_is_stable():
    lengths = [5, 3, 9, 9, 2, 7, 1, 4, 8, 8, 6] * 5
    a = token_batches(lengths, 30, shuffle=True, seed=1)
    assert a == token_batches(lengths, 30, shuffle=True, seed=1)
    assert a != token_batches(lengths, 30, shuffle=True, seed=2)
    # the number of optimiser steps per epoch does not depend on the shuffle (the LR schedule relies on it)
    assert len({len(token_batches(lengths, 30, shuffle=True, seed=s)) for s in range(5)}) == 1
    assert len(a) == len(token_batches(lengths, 30))


def test_build_vocab_orders_by_frequency_then_name():
    assert build_vocab(["b", "a", "b", "c", "a", "b"], specials=["<unk>"]) == ["<unk>", "b", "a", "c"]
    assert build_vocab(["x", "y", "y"], min_freq=2) == ["y"]


@given(st.lists(st.integers(0, 300), max_size=80), st.sampled_from([1.0, 1.5, 3.0]))
def test_length_groups_cover_every_sentence_once_each_within_its_ratio(lengths, ratio):
    groups = length_groups(lengths, ratio)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for group in groups:
        shortest = max(2, lengths[group[0]])
        assert all(lengths[i] <= ratio * shortest for i in group) and lengths[group[0]] == min(lengths[i] for i in group)
    firsts = [lengths[g[0]] for g in groups]
    assert firsts == sorted(firsts)
    assert all(lengths[b[0]] > ratio * max(2, lengths[a[0]]) for a, b in zip(groups, groups[1:]))  # no needless split
