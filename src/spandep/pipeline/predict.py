"""Parsing sentences with any parser type: a tree per sentence, in input order, with bounded memory.

Used by the API, the CLI, the workers, the integrations and the trainer's dev evaluation, so what is selected on
dev is exactly what users run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import islice

from spandep.data.sentence import Sentence
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.base import Parse, Parser
from spandep.models.confidence import Calibration
from spandep.pipeline.long import parse_sentences


READ_WITH = {"feats": "upos"}  # FEATS is read with UPOS: ``_`` beside the user's UPOS means "no features"


def given_columns(sentence: Sentence, columns: Iterable[str]) -> set[str]:
    """The ``columns`` (word attributes such as ``upos``) the user gave for ``sentence``: those that are not ``_``
    for at least one of its words (FEATS also where UPOS is: features are those of the user's tags). A given
    column is the user's, ``_`` included (in an annotated file, ``_`` in FEATS means "no features"); only a
    column that is ``_`` for every word is the model's to fill."""
    return {
        name for name in columns
        if any(getattr(w, name) != "_" or (name in READ_WITH and getattr(w, READ_WITH[name]) != "_") for w in sentence.words)
    }


def with_tree(sentence: Sentence, parse: Parse, calibration: Calibration | None = None) -> Sentence:
    """A copy of ``sentence`` with HEAD and DEPREL replaced, each column of ``parse.columns`` filled in where the
    sentence does not give it (:func:`given_columns`: ``_`` for every word), and the parse's confidence (with the
    model's ``calibration``) where it has scores. DEPS, the enhanced graph over the old tree, becomes ``_`` for
    every word when the tree changed; every other column and line is kept."""
    confidence = None if parse.scores is None else (calibration or Calibration()).confidence(parse.scores, parse.heads)
    filled = {name: values for name, values in parse.columns.items() if name not in given_columns(sentence, parse.columns)}
    same_tree = sentence.heads == list(parse.heads) and sentence.deprels == list(parse.labels)
    deps = {} if same_tree or not given_columns(sentence, ("deps",)) else {"deps": "_"}
    words = []
    for i, (w, h, r) in enumerate(zip(sentence.words, parse.heads, parse.labels)):
        probs = {"head_prob": confidence.head[i], "label_prob": confidence.label[i]} if confidence else {}
        words.append(replace(w, head=h, deprel=r, **{name: values[i] for name, values in filled.items()}, **deps, **probs))
    return replace(sentence, words=words, confidence=None if confidence is None else confidence.sentence)


def parse_stream(
    model: Parser,
    sentences: Iterable[Sentence],
    options: InferenceOptions | None = None,
    chunk_size: int = 2000,
    stats: InferenceStats | None = None,
) -> Iterator[Sentence]:
    """Parse an iterable lazily, ``chunk_size`` sentences at a time, keeping input order and bounded memory (a
    sentence of more than ``LONG_SENTENCE_WORDS`` words in windows: ``spandep.pipeline.long``)."""
    it = iter(sentences)
    calibration = model.calibration.for_treebank(model.treebank_of(options))
    while chunk := list(islice(it, chunk_size)):
        for s, parse in zip(chunk, parse_sentences(model, chunk, options, stats)):
            yield with_tree(s, parse, calibration)
