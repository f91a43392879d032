"""Batching the requests of many clients: one worker thread runs the model over batches of requests.

A request's sentences are a :class:`Job`. Jobs wait in one bounded FIFO queue; the worker takes the oldest job,
then every later job with the same key (model and inference options: only those can share a model call) until the
batch holds ``batch_words`` words, waiting up to ``wait_s`` for more when the queue has none. The batch's
sentences are parsed in one call and each job gets its own sentences back, in order. A full queue refuses a job
(:class:`QueueFull`, with a retry delay estimated from the recent speed); a job whose client gave up before the
worker took it is skipped (``Future.cancel``); :meth:`Batcher.stop` parses what is queued, then ends the worker.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from spandep.data.sentence import Sentence

__all__ = ["Batcher", "Job", "QueueFull"]

ParseBatch = Callable[[Hashable, list[Sentence]], list[Sentence]]  # (key, sentences) -> the parsed sentences, in order
SPEED_MEMORY = 0.8  # weight of the previous estimate in the moving average of words parsed per second


class QueueFull(Exception):
    """The queue holds ``max_queue`` jobs; ``retry_after``: whole seconds until it has probably drained."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"queue full; retry after {retry_after} s")
        self.retry_after = retry_after


@dataclass(eq=False)
class Job:
    """One request's sentences; ``future`` gets the parsed sentences (or the exception the parse raised)."""

    key: Hashable
    sentences: list[Sentence]
    future: Future[list[Sentence]] = field(default_factory=Future)

    @property
    def words(self) -> int:
        return sum(len(s) for s in self.sentences)


@dataclass
class Counters:
    """What the worker has done since it started (``/health`` shows them)."""

    batches: int = 0
    jobs: int = 0
    sentences: int = 0
    words: int = 0
    refused: int = 0
    largest_batch: int = 0  # jobs in the largest batch
    parse_seconds: float = 0.0  # time the worker spent in the model

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Batcher:
    """The queue and the worker thread; ``parse`` is called on the worker thread only."""

    def __init__(self, parse: ParseBatch, batch_words: int, wait_s: float, max_queue: int) -> None:
        self._parse = parse
        self.batch_words = batch_words
        self.wait_s = wait_s
        self.max_queue = max_queue
        self.counters = Counters()
        self._queue: deque[Job] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self.parsing = 0  # jobs in the batch the worker is parsing now
        self._words_per_s = 0.0
        self._thread = threading.Thread(target=self._run, name="spandep-batcher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Parse every queued job, then end the worker (new jobs are refused from now on)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def queued(self) -> int:
        return len(self._queue)

    def submit(self, key: Hashable, sentences: list[Sentence]) -> Future[list[Sentence]]:
        """Queue one request's sentences; :class:`QueueFull` when ``max_queue`` jobs wait already."""
        job = Job(key, sentences)
        with self._cond:
            if self._stopping or len(self._queue) >= self.max_queue:
                self.counters.refused += 1
                raise QueueFull(self._retry_after())
            self._queue.append(job)
            self._cond.notify_all()
        return job.future

    def _retry_after(self) -> int:
        waiting = sum(job.words for job in self._queue)
        return max(1, math.ceil(waiting / self._words_per_s)) if self._words_per_s else 1

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            live = [job for job in batch if job.future.set_running_or_notify_cancel()]
            if live:
                self.parsing = len(live)
                self._parse_jobs(live)
                self.parsing = 0

    def _next_batch(self) -> list[Job] | None:
        """The oldest job and the later jobs of its key that fit ``batch_words``, after waiting up to ``wait_s``
        for them; ``None`` once stopping with an empty queue."""
        with self._cond:
            while not self._queue:
                if self._stopping:
                    return None
                self._cond.wait()
            batch = [self._queue.popleft()]
            words = batch[0].words
            deadline = time.monotonic() + self.wait_s
            while words < self.batch_words:
                same = next((job for job in self._queue if job.key == batch[0].key), None)
                if same is not None:
                    if words + same.words > self.batch_words:
                        break
                    self._queue.remove(same)
                    batch.append(same)
                    words += same.words
                    continue
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping:
                    break
                self._cond.wait(left)
            return batch

    def _parse_jobs(self, jobs: list[Job]) -> None:
        sentences = [s for job in jobs for s in job.sentences]
        started = time.perf_counter()
        try:
            parsed = self._parse(jobs[0].key, sentences)
        except Exception as exc:  # the model's error goes to every client of the batch; the worker lives on
            for job in jobs:
                job.future.set_exception(exc)
            return
        elapsed = time.perf_counter() - started
        words = sum(len(s) for s in sentences)
        if elapsed > 0 and words:
            speed = words / elapsed
            self._words_per_s = speed if not self._words_per_s else SPEED_MEMORY * self._words_per_s + (1 - SPEED_MEMORY) * speed
        c = self.counters
        c.batches, c.jobs, c.sentences, c.words = c.batches + 1, c.jobs + len(jobs), c.sentences + len(sentences), c.words + words
        c.largest_batch = max(c.largest_batch, len(jobs))
        c.parse_seconds = round(c.parse_seconds + elapsed, 3)
        start = 0
        for job in jobs:
            job.future.set_result(parsed[start : start + len(job.sentences)])
            start += len(job.sentences)
