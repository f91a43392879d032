"""Parsing sentences with any parser type: a tree per sentence, in input order, with bounded memory.

Used by the API, the CLI, the workers, the integrations and the trainer's dev evaluation, so what is selected on
dev is exactly what users run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import islice

from spandep.data.sentence import Sentence
from spandep.inference import InferenceOptions, InferenceStats
from spandep.models.base import Parse, Parser
from spandep.models.confidence import Calibration
from spandep.pipeline.long import parse_sentences


def with_tree(sentence: Sentence, parse: Parse, calibration: Calibration | None = None) -> Sentence:
    """A copy of ``sentence`` with HEAD and DEPREL replaced, each column of ``parse.columns`` (a word attribute
    such as ``upos``) filled in where it was ``_``, and the parse's confidence (with the model's ``calibration``)
    where it has scores; every other column and line is kept."""
    confidence = None if parse.scores is None else (calibration or Calibration()).confidence(parse.scores, parse.heads)
    words = []
    for i, (w, h, r) in enumerate(zip(sentence.words, parse.heads, parse.labels)):
        filled = {name: values[i] for name, values in parse.columns.items() if getattr(w, name) == "_"}
        probs = {"head_prob": confidence.head[i], "label_prob": confidence.label[i]} if confidence else {}
        words.append(replace(w, head=h, deprel=r, **filled, **probs))
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
    while chunk := list(islice(it, chunk_size)):
        for s, parse in zip(chunk, parse_sentences(model, chunk, options, stats)):
            yield with_tree(s, parse, model.calibration)
