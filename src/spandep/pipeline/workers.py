"""Multi-process parsing on one machine: an ordered, bounded-memory parallel map over worker processes.

Each worker process loads its pipeline once from a spec (``spandep.api.ModelSpec``: a model folder and options, no
live model, so it pickles cheaply and works with the ``spawn`` start method) and parses each chunk it is sent with the
pipeline's ``parse_chunk``. ``parse_chunks`` parses chunks of sentences in
the workers, keeping at most ``2 × workers`` chunks in flight (memory stays bounded on any input size), and yields
them in input order; ``parse_parallel`` cuts a stream of sentences into such chunks. Each chunk is parsed exactly
as ``parse_stream`` parses a chunk of the same size, so the output equals a single-process run with the same chunks.

Spawned workers import the caller's main module again: a script that parses with workers must do it under
``if __name__ == "__main__":``. A worker that cannot load the model (a bad path) makes the next result raise its
error (e.g. :class:`~spandep.errors.ModelError`) in the caller, and the workers are stopped; a worker that dies
(killed for memory) is an error naming its status, not a wait. Each worker has pipes of its own: stopping them
midway (Ctrl-C, SIGTERM, an error) kills them at once and can never wait on a lock one of them held.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import pickle
import queue
import signal
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from multiprocessing.connection import Connection
from typing import Any, Protocol

from spandep.data.sentence import Sentence
from spandep.errors import WorkerError
from spandep.options import InferenceStats

__all__ = ["ChunkParser", "Spec", "parse_chunks", "parse_parallel"]


class ChunkParser(Protocol):
    """A loaded pipeline, as a worker uses it (``spandep.api.Pipeline``)."""

    def parse_chunk(self, chunk: list[Sentence]) -> tuple[list[Sentence], InferenceStats]: ...


class Spec(Protocol):
    """What loads a pipeline in a worker process, picklable (``spandep.api.ModelSpec``)."""

    def load(self) -> ChunkParser: ...


def _serve(spec: Spec, tasks: Connection, results: Connection) -> None:
    """One worker: load the pipeline, then parse each chunk received on ``tasks`` and send ``(True, (parsed, stats))``
    or ``(False, error)`` on ``results``, until ``tasks`` ends. A thread receives the chunks, so that the caller's
    sends never wait on this worker's own send of a result (no deadlock on large chunks)."""
    inbox: queue.SimpleQueue[list[Sentence] | None] = queue.SimpleQueue()

    def receive() -> None:
        while True:
            try:
                chunk = tasks.recv()
            except (EOFError, OSError):
                chunk = None
            inbox.put(chunk)
            if chunk is None:
                return

    threading.Thread(target=receive, daemon=True).start()
    try:
        pipeline: ChunkParser | Exception = spec.load()
    except Exception as exc:  # reported with each chunk, so that the caller raises it at its first result
        pipeline = exc
    while (chunk := inbox.get()) is not None:
        try:
            if isinstance(pipeline, Exception):
                raise pipeline
            reply: tuple[bool, Any] = (True, pipeline.parse_chunk(chunk))
        except Exception as exc:
            reply = (False, exc)
        try:
            results.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # an error that does not pickle: its text
            results.send((False, RuntimeError(f"{reply[1]!r} (sent as text: {exc})")))


class _Workers:
    """``count`` spawned worker processes, each with a pipe of its own for chunks and one for results: nothing is
    shared between them, so stopping (killing the processes) can never wait on a lock a worker held."""

    def __init__(self, spec: Spec, count: int) -> None:
        ctx = mp.get_context("spawn")
        self.processes: list[Any] = []
        self.tasks: list[Connection] = []
        self.results: list[Connection] = []
        try:
            for _ in range(count):
                task_out, task_in = ctx.Pipe(duplex=False)
                result_out, result_in = ctx.Pipe(duplex=False)
                process = ctx.Process(target=_serve, args=(spec, task_out, result_in), daemon=True)
                with _sigint_ignored():  # Ctrl-C stops the caller, whose leaving stops the workers: they ignore it
                    process.start()
                task_out.close()  # the worker's ends: closed here, so that a worker's end is seen as end of file
                result_in.close()
                self.processes.append(process)
                self.tasks.append(task_in)
                self.results.append(result_out)
        except BaseException:
            self.stop()
            raise

    def send(self, worker: int, chunk: list[Sentence]) -> None:
        try:
            self.tasks[worker].send(chunk)
        except OSError:  # its end closed: the worker died
            raise self._died(worker) from None

    def receive(self, worker: int) -> tuple[list[Sentence], InferenceStats]:
        """The next result of ``worker``; its error raised here; a worker that died is an error naming its status."""
        try:
            ok, value = self.results[worker].recv()
        except (EOFError, OSError):
            raise self._died(worker) from None
        if not ok:
            raise value
        return value

    def _died(self, worker: int) -> WorkerError:
        process = self.processes[worker]
        process.join()
        return WorkerError(
            f"a parsing worker (pid {process.pid}) ended with status {process.exitcode}: killed for memory? "
            "try fewer workers or a smaller batch"
        )

    def stop(self) -> None:
        """Kill every worker and wait for it (at once: their work is either done or no longer wanted)."""
        for process in self.processes:
            if process.exitcode is None:
                process.kill()
        for process in self.processes:
            process.join()
        for conn in self.tasks + self.results:
            conn.close()


def parse_chunks(
    spec: Spec, chunks: Iterable[list[Sentence]], workers: int = 2
) -> Iterator[tuple[list[Sentence], InferenceStats]]:
    """Parse each chunk in one of ``workers`` spawned processes (in turn, two chunks in flight each), yielding the
    parsed chunks and their counters in input order; the first error of a worker (loading the model included) is
    raised here and stops the workers, as does leaving early (an error, Ctrl-C, ``close()``)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, not {workers!r}")
    it = iter(chunks)
    pool = _Workers(spec, workers)
    try:
        pending: deque[int] = deque()  # the worker of each chunk in flight, in input order
        sent = 0
        while True:
            while len(pending) < 2 * workers and (chunk := next(it, None)) is not None:
                pool.send(sent % workers, chunk)
                pending.append(sent % workers)
                sent += 1
            if not pending:
                break
            yield pool.receive(pending.popleft())
    finally:
        pool.stop()


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
    spec: Spec,
    sentences: Iterable[Sentence],
    workers: int = 2,
    chunk_size: int = 512,
    stats: InferenceStats | None = None,
) -> Iterator[Sentence]:
    """Parse ``sentences`` with ``workers`` processes (spawned), ``chunk_size`` at a time, yielding them in input
    order; ``stats`` accumulates the workers' counters."""
    it = iter(sentences)
    for parsed, counters in parse_chunks(spec, iter(lambda: list(islice(it, chunk_size)), []), workers):
        if stats is not None:
            stats.add(counters)
        yield from parsed
