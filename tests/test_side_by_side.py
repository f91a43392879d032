"""Pieces of torch work side by side, one torch thread each (spandep/side_by_side.py), and the span linker's batches
run that way: the same parse as one after another."""

from __future__ import annotations

import threading

import pytest
import torch

from spandep.side_by_side import each_side_by_side


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_every_item_runs_once_on_worker_threads_of_one_torch_thread_each(two_threads) -> None:
    seen: list[tuple[int, int, str, bool]] = []

    def work(item: int) -> None:
        seen.append((item, torch.get_num_threads(), threading.current_thread().name, torch.is_inference_mode_enabled()))

    with torch.inference_mode():
        each_side_by_side(work, list(range(7)))
    assert sorted(item for item, *_ in seen) == list(range(7))
    assert {(threads, name.startswith("spandep-side"), inference) for _, threads, name, inference in seen} == {(1, True, True)}
    assert torch.get_num_threads() == 2  # set back


def test_one_thread_one_item_or_not_on_the_cpu_runs_in_order_here(two_threads) -> None:
    names: list[str] = []
    work = lambda item: names.append(threading.current_thread().name)  # noqa: E731
    each_side_by_side(work, [1])
    each_side_by_side(work, [1, 2, 3], on_cpu=False)
    torch.set_num_threads(1)
    each_side_by_side(work, [1, 2])
    assert names == [threading.current_thread().name] * 6


def test_an_items_error_is_raised_and_the_thread_count_set_back(two_threads) -> None:
    def work(item: int) -> None:
        if item == 3:
            raise ValueError("item 3")

    with pytest.raises(ValueError, match="item 3"):
        each_side_by_side(work, list(range(5)))
    assert torch.get_num_threads() == 2


def test_a_span_parse_at_two_threads_is_the_parse_at_one(tiny_models, monkeypatch) -> None:
    import spandep
    from conftest import DEV
    from spandep.data.conllu import read_conllu
    from spandep.models.span import inference

    batches: list[int] = []

    def counted(work, items, on_cpu=True):
        batches.append(len(items) if torch.get_num_threads() > 1 else 0)
        each_side_by_side(work, items, on_cpu)

    monkeypatch.setattr(inference, "each_side_by_side", counted)

    parses = {}
    for threads in (1, 2):
        nlp = spandep.load(tiny_models["span"], threads=threads, batch_tokens=16)  # many linker batches
        parsed = nlp.parse_sentences(read_conllu(DEV))
        parses[threads] = [(w.head, w.deprel) for s in parsed for w in s.words]
    torch.set_num_threads(1)
    assert parses[1] == parses[2] and len(parses[1]) >= 40
    assert max(batches) > 1  # at two threads the linker's batches went side by side
