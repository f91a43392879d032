"""Multi-process parsing on one machine: a picklable parser factory and an ordered, bounded-memory parallel map.

``ParserFactory`` holds only a model path and options (no live model), so it pickles cheaply and works with the
``spawn`` start method; each worker process builds its parser once. ``parse_chunks`` parses chunks of sentences in
the workers, keeping at most ``2 × workers`` chunks in flight (memory stays bounded on any input size), and yields
them in input order; ``parse_parallel`` cuts a stream of sentences into such chunks. Each chunk is parsed exactly
as ``parse_stream`` parses a chunk of the same size, so the output equals a single-process run with the same chunks.

Spawned workers import the caller's main module again: a script that parses with workers must do it under
``if __name__ == "__main__":``. A worker that cannot load the model (a bad path) makes the next result raise its
error (e.g. :class:`~spandep.errors.ModelError`) in the caller, and the pool is stopped, instead of being
restarted over and over.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from spandep.data.sentence import Sentence
from spandep.inference import InferenceOptions, InferenceStats

__all__ = ["ParserFactory", "parse_chunks", "parse_parallel"]


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


_worker: tuple[ParserFactory, Any] | Exception | None = None  # this process's factory and model, or why loading failed


def _init(factory: ParserFactory) -> None:
    global _worker
    try:
        _worker = (factory, factory.load())
    except Exception as exc:  # an initializer that raises makes the pool start a new worker, forever: report it instead
        _worker = exc


def _parse(chunk: list[Sentence]) -> tuple[list[Sentence], InferenceStats]:
    assert _worker is not None, "worker not initialised"
    if isinstance(_worker, Exception):
        raise _worker
    factory, model = _worker
    return factory.parse_chunk(model, chunk)


def parse_chunks(
    factory: ParserFactory, chunks: Iterable[list[Sentence]], workers: int = 2
) -> Iterator[tuple[list[Sentence], InferenceStats]]:
    """Parse each chunk in one of ``workers`` spawned processes, yielding the parsed chunks and their counters in
    input order; the first error of a worker (loading the model included) is raised here and stops the pool."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, not {workers!r}")
    it = iter(chunks)
    ctx = mp.get_context("spawn")
    with _sigint_ignored():  # Ctrl-C stops the caller, whose leaving stops the workers: they ignore it themselves
        pool = ctx.Pool(workers, initializer=_init, initargs=(factory,))
    with pool:  # leaving terminates the workers
        pending: deque[Any] = deque()
        while True:
            while len(pending) < 2 * workers and (chunk := next(it, None)) is not None:
                pending.append(pool.apply_async(_parse, (chunk,)))
            if not pending:
                break
            yield pending.popleft().get()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while processes are started, which keep that (a Python process leaves an ignored SIGINT
    ignored): in the main thread only, where signals are handled."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def parse_parallel(
    factory: ParserFactory,
    sentences: Iterable[Sentence],
    workers: int = 2,
    chunk_size: int = 512,
    stats: InferenceStats | None = None,
) -> Iterator[Sentence]:
    """Parse ``sentences`` with ``workers`` processes (spawned), ``chunk_size`` at a time, yielding them in input
    order; ``stats`` accumulates the workers' counters."""
    it = iter(sentences)
    for parsed, counters in parse_chunks(factory, iter(lambda: list(islice(it, chunk_size)), []), workers):
        if stats is not None:
            stats.add(counters)
        yield from parsed
