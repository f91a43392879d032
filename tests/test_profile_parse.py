"""The stage profile of a parse (``benchmarks/scripts/profile_parse.py``): exclusive stage accounting on a counting
clock (no timing), every stage of each parser type reached, and the parse unchanged by the instrumentation."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from benchmarks.scripts import profile_parse
from benchmarks.scripts.profile_parse import STAGES, StageClock, instrumented, one_run
from spandep.data.conllu import read_conllu
from spandep.models.base import Parser
from spandep.pipeline.predict import parse_stream
from spandep.storage.model_io import load_model

from tests.conftest import DEV


@pytest.fixture
def ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process clock that advances by one at every reading."""
    counter = itertools.count()
    monkeypatch.setattr(profile_parse.time, "process_time", lambda: float(next(counter)))


def test_nested_stages_are_charged_exclusively(ticks: None) -> None:
    clock = StageClock()  # reading 0

    def inner() -> None:
        pass

    def steps():  # a generator: each step is timed
        yield 1
        yield 2

    timed_inner = clock.timed("labels", inner)
    with clock.stage("decoding"):  # reading 1: "other" gets 1 - 0
        timed_inner()  # readings 2, 3: "decoding" 2 - 1, "labels" 3 - 2
    # reading 4: "decoding" 4 - 3
    assert list(clock.timed("encoder", steps)()) == [1, 2]  # 3 steps: readings 5..10
    clock._charge()  # reading 11: "other"
    assert clock.seconds["other"] == 1 + (5 - 4) + (7 - 6) + (9 - 8) + (11 - 10)
    assert clock.seconds["decoding"] == 2 and clock.seconds["labels"] == 1 and clock.seconds["encoder"] == 3
    assert sum(clock.seconds.values()) == 11  # every tick charged to exactly one stage


@pytest.mark.parametrize(
    ("kind", "reached"),
    [("span", {"encoder", "heads", "proposal", "linking", "labels", "decoding", "I/O"}), ("biaffine", {"encoder", "heads", "word scorer", "labels", "decoding", "I/O"})],
)
def test_every_stage_of_a_parse_is_reached(ticks: None, tiny_models: dict[str, Path], kind: str, reached: set[str]) -> None:
    model = load_model(tiny_models[kind])
    seconds, _, words = one_run(model, str(DEV), "conllu", None, limit=5)
    assert set(seconds) == set(STAGES)
    assert {stage for stage, s in seconds.items() if s > 0} >= reached
    assert seconds["tokenizer"] == 0 and words == sum(len(s) for s in list(read_conllu(DEV))[:5])


@pytest.mark.parametrize("kind", ["span", "biaffine"])
def test_instrumentation_leaves_the_parse_and_the_code_unchanged(tiny_models: dict[str, Path], kind: str) -> None:
    model = load_model(tiny_models[kind])
    sentences = list(read_conllu(DEV))[:8]
    before = (Parser.encoded_batches, Parser.decoder, profile_parse.predict.with_tree)
    plain = list(parse_stream(model, sentences))
    with instrumented(StageClock()):
        profiled = list(parse_stream(model, sentences))
    assert (Parser.encoded_batches, Parser.decoder, profile_parse.predict.with_tree) == before
    assert [(s.heads, s.deprels) for s in profiled] == [(s.heads, s.deprels) for s in plain]
