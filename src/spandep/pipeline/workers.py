"""Multi-process parsing on one machine: a picklable parser factory and an ordered, bounded-memory parallel map.

``ParserFactory`` holds only a model path and options (no live model), so it pickles cheaply and works with the
``spawn`` start method; each worker process builds its parser once. ``parse_parallel`` cuts the input into chunks
of ``chunk_size`` sentences, keeps at most ``2 × workers`` chunks in flight (memory stays bounded on any input
size), and yields parsed sentences in input order. Each chunk is parsed exactly as ``parse_stream`` parses a chunk
of the same size, so the output equals a single-process run with the same ``chunk_size``.
"""

from __future__ import annotations

import multiprocessing as mp
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from spandep.data.sentence import Sentence
from spandep.inference import InferenceOptions, InferenceStats

__all__ = ["ParserFactory", "parse_parallel"]


@dataclass(frozen=True)
class ParserFactory:
    """Everything a process needs to build a parser: ``model`` folder (``None``: the default model) and options."""

    model: str | None = None
    options: InferenceOptions = field(default_factory=InferenceOptions)
    threads: int = 1
    device: str = "cpu"
    int8: bool = False

    def load(self) -> Any:
        """Load the model in this process (``threads`` torch threads)."""
        import torch

        from spandep.pipeline.model_io import load_model, resolve_model_dir

        if self.threads:
            torch.set_num_threads(self.threads)
        return load_model(resolve_model_dir(self.model), self.device, self.int8)

    def parse_chunk(self, model: Any, chunk: list[Sentence]) -> tuple[list[Sentence], InferenceStats]:
        """Parse one chunk with a loaded model (the same call ``parse_stream`` makes per chunk) and its counters."""
        from spandep.pipeline.predict import parse_stream

        stats = InferenceStats()
        parsed = list(parse_stream(model, chunk, self.options, chunk_size=max(1, len(chunk)), stats=stats))
        return parsed, stats


_worker: tuple[ParserFactory, Any] | None = None  # this process's factory and loaded model


def _init(factory: ParserFactory) -> None:
    global _worker
    _worker = (factory, factory.load())


def _parse(chunk: list[Sentence]) -> tuple[list[Sentence], InferenceStats]:
    assert _worker is not None, "worker not initialised"
    factory, model = _worker
    return factory.parse_chunk(model, chunk)


def parse_parallel(
    factory: ParserFactory,
    sentences: Iterable[Sentence],
    workers: int = 2,
    chunk_size: int = 512,
    stats: InferenceStats | None = None,
) -> Iterator[Sentence]:
    """Parse ``sentences`` with ``workers`` processes (spawned), yielding them in input order; ``stats``
    accumulates the workers' counters."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    it = iter(sentences)
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init, initargs=(factory,)) as pool:
        pending: deque[Any] = deque()
        while True:
            while len(pending) < 2 * workers and (chunk := list(islice(it, chunk_size))):
                pending.append(pool.apply_async(_parse, (chunk,)))
            if not pending:
                break
            parsed, counters = pending.popleft().get()
            if stats is not None:
                stats.add(counters)
            yield from parsed
