"""The paired bootstrap of two parsers' LAS (``benchmarks/scripts/paired_bootstrap.py``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import DEV

from benchmarks.scripts.paired_bootstrap import bootstrap, sentence_counts
from spandep.data.conllu import read_conllu


def test_counts_take_the_universal_relation_and_refuse_other_tokens() -> None:
    gold = list(read_conllu(DEV))[:3]
    subtyped = [replace(s, words=[replace(w, deprel=w.deprel.split(":")[0] + ":x") for w in s.words]) for s in gold]
    counts = sentence_counts(gold, subtyped)
    assert counts.tolist() == [[len(s), len(s)] for s in gold]  # a subtype is not an error of the universal LAS
    wrong = [replace(s, words=[replace(w, head=(w.head or 0) + 1) for w in s.words]) for s in gold]
    assert sentence_counts(gold, wrong)[:, 1].sum() == 0
    with pytest.raises(ValueError, match="not gold tokens"):
        sentence_counts(gold, [replace(gold[0], words=gold[0].words[:-1]), *gold[1:]])


def test_bootstrap_of_equal_and_of_better_parses() -> None:
    rng = np.random.default_rng(1)
    words = rng.integers(5, 30, size=200)
    a = np.stack([words, words - rng.integers(0, 3, size=200)], 1)  # (sentences, 2)
    same = bootstrap(a, a, samples=500, seed=0)
    assert same["delta_LAS"] == 0.0 and same["ci95"] == [0.0, 0.0] and same["share_not_above"] == 1.0
    worse = a.copy()
    worse[:, 1] -= 1  # one more error in every sentence
    better = bootstrap(a, worse, samples=500, seed=0)
    assert better["delta_LAS"] == pytest.approx(100 * 200 / words.sum())
    assert 0 < better["ci95"][0] < better["delta_LAS"] < better["ci95"][1] and better["share_not_above"] == 0.0
    with pytest.raises(ValueError, match="not of the same sentences"):
        bootstrap(a, a[1:], samples=10, seed=0)
