"""The work of many clients on one worker thread: read each request, then parse the requests in turns, batched.

A request is a :class:`Job`: a ``read`` function (reading and tokenizing its data, which is CPU work too) and the
``key`` of the model call its sentences need (model and inference options; ``None``: nothing to parse, the job is
its reading). Jobs wait in one bounded ring (:class:`QueueFull` past ``max_queue``, with a retry delay estimated
from the recent speed). Each turn the worker takes the first job of the ring, then the later jobs with its key, in
ring order that have not begun: it reads a job it has not read yet, and takes from each job its next sentences while
the turn holds at most ``batch_words`` words (a sentence counts one word more: a short sentence costs more than its
words), waiting up to ``wait_s`` for more jobs when the ring has none. The turn's sentences are parsed in one call;
each job gets its own back, in order, and a job with sentences left goes to the end of the ring, where it heads a
later turn of its own. So a big request is parsed a turn at a time, round-robin with the others: a small request
waits for at most the turn in progress, and a job whose
client has gone (``Future.cancel``: a timeout, a disconnect) is dropped at its next turn. :meth:`Batcher.stop`
parses what is queued, then ends the worker.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any

from spandep.data.sentence import Sentence

__all__ = ["Batcher", "Job", "QueueFull", "cost"]

ParseBatch = Callable[[Hashable, list[Sentence]], list[Sentence]]  # (key, sentences) -> the parsed sentences, in order
Read = Callable[[], list[Sentence]]  # a request's sentences (raises what the client is told: a bad input, a limit)
SPEED_MEMORY = 0.8  # weight of the previous estimate in the moving average of words parsed per second


def cost(sentence: Sentence) -> int:
    """What a sentence weighs in a turn: its words and one more (a one-word sentence costs about two words' time)."""
    return len(sentence) + 1


class QueueFull(Exception):
    """The ring holds ``max_queue`` jobs; ``retry_after``: whole seconds until it has probably drained."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"queue full; retry after {retry_after} s")
        self.retry_after = retry_after


@dataclass(eq=False)
class Job:
    """One request: ``read`` gives its sentences (on the worker), ``key`` says which model call parses them
    (``None``: none); ``future`` gets the parsed sentences, or the exception reading or parsing raised.
    ``estimate``: its words before it is read (for ``Retry-After``)."""

    key: Hashable
    read: Read
    estimate: int = 0
    future: Future[list[Sentence]] = field(default_factory=Future)
    sentences: list[Sentence] | None = None  # once read
    done: list[Sentence] = field(default_factory=list)  # parsed so far, in order

    @property
    def left(self) -> int:
        """The cost of what is still to do."""
        if self.sentences is None:
            return self.estimate
        return sum(cost(s) for s in self.sentences[len(self.done) :])

    def finish(self, result: list[Sentence] | None = None, error: BaseException | None = None) -> None:
        """Give the client its result (or ``error``), unless it has gone (cancelled) meanwhile."""
        try:
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(self.done if result is None else result)
        except InvalidStateError:  # cancelled between the worker's check and now: nobody waits for it
            pass


@dataclass
class Counters:
    """What the worker has done since it started (``/health`` shows them)."""

    batches: int = 0
    jobs: int = 0  # requests answered whole
    sentences: int = 0
    words: int = 0
    refused: int = 0  # 503: the ring was full
    cancelled: int = 0  # dropped because their client had gone (timeout, disconnect)
    largest_batch: int = 0  # jobs in the largest batch
    parse_seconds: float = 0.0  # time the worker spent in the model
    read_seconds: float = 0.0  # time the worker spent reading and tokenizing requests

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Batcher:
    """The ring and the worker thread; ``parse`` and each job's ``read`` are called on the worker thread only."""

    def __init__(self, parse: ParseBatch, batch_words: int, wait_s: float, max_queue: int) -> None:
        self._parse = parse
        self.batch_words = batch_words
        self.wait_s = wait_s
        self.max_queue = max_queue
        self.counters = Counters()
        self._ring: deque[Job] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self.parsing = 0  # jobs in the turn the worker is on now (reading or parsing)
        self._words_per_s = 0.0
        self._thread = threading.Thread(target=self._run, name="spandep-batcher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Finish every queued job, then end the worker (new jobs are refused from now on)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def queued(self) -> int:
        return len(self._ring)

    def submit(self, key: Hashable, read: Read, estimate: int = 0) -> Future[list[Sentence]]:
        """Queue one request; :class:`QueueFull` when ``max_queue`` jobs wait already."""
        job = Job(key, read, estimate)
        with self._cond:
            if self._stopping or len(self._ring) >= self.max_queue:
                self.counters.refused += 1
                raise QueueFull(self._retry_after())
            self._ring.append(job)
            self._cond.notify_all()
        return job.future

    def _retry_after(self) -> int:
        waiting = sum(job.left for job in self._ring)
        return max(1, math.ceil(waiting / self._words_per_s)) if self._words_per_s else 1

    def _run(self) -> None:
        while (first := self._first()) is not None:
            self.parsing = 1  # reading counts: the worker is on a job
            if first.key is None:  # nothing to parse: reading is the whole job
                if self._read(first):
                    self._answered(first, first.sentences or [])
            else:
                self._turn(first)
            self.parsing = 0
            del first  # answered (or back in the ring): its sentences are not kept while the worker waits for the next

    def _first(self) -> Job | None:
        """The first job of the ring whose client still waits (taken out of the ring); ``None`` once stopping with
        an empty ring."""
        with self._cond:
            while True:
                while not self._ring:
                    if self._stopping:
                        return None
                    self._cond.wait()
                job = self._ring.popleft()
                if not self._gone(job):
                    return job

    def _gone(self, job: Job) -> bool:
        if job.future.cancelled():
            self.counters.cancelled += 1
            return True
        return False

    def _read(self, job: Job) -> bool:
        """Read ``job`` (on this thread); ``False`` when reading failed (the client has the error)."""
        started = time.perf_counter()
        try:
            job.sentences = job.read()
        except Exception as exc:  # what the client is told: a bad input, a limit
            job.finish(error=exc)
            return False
        finally:
            self.counters.read_seconds = round(self.counters.read_seconds + time.perf_counter() - started, 3)
        return True

    def _turn(self, first: Job) -> None:
        """One turn: ``first`` and the later jobs of its key, each read if it was not yet, then as many of its next
        sentences as the budget holds (at least one for ``first``: a sentence is never cut), parsed in one call. The
        turn ends at a job whose next sentence does not fit (it keeps its place); the unfinished jobs go to the end
        of the ring."""
        taken: list[tuple[Job, list[Sentence]]] = []
        budget = self.batch_words
        job, place = first, 0
        deadline = time.monotonic() + self.wait_s
        while True:
            if job.sentences is None and not self._read(job):
                pass
            elif not job.sentences:
                self._answered(job, [])
            else:
                chunk = self._chunk(job, budget, at_least_one=not taken)
                if not chunk:
                    with self._cond:
                        self._ring.insert(place, job)
                    break
                taken.append((job, chunk))
                budget -= sum(cost(s) for s in chunk)
            found = self._next_of(first.key, deadline, budget) if budget > 0 else None
            if found is None:
                break
            job, place = found
        if taken:
            self.parsing = len(taken)
            self._parse_turn(first.key, taken)

    @staticmethod
    def _chunk(job: Job, budget: int, at_least_one: bool) -> list[Sentence]:
        """The next sentences of ``job`` (read, with sentences left) whose cost fits ``budget``."""
        assert job.sentences is not None
        start = end = len(job.done)
        spent = 0
        while end < len(job.sentences) and ((at_least_one and end == start) or spent + cost(job.sentences[end]) <= budget):
            spent += cost(job.sentences[end])
            end += 1
        return job.sentences[start:end]

    def _next_of(self, key: Hashable, deadline: float, budget: int) -> tuple[Job, int] | None:
        """The first job of ``key`` not begun yet in the ring whose client still waits, taken out, with its place;
        ``None`` when its next sentence does not fit ``budget`` (it stays), or when none comes before ``deadline``."""
        with self._cond:
            while True:
                for place, job in enumerate(self._ring):
                    if job.key != key or job.done:  # a job begun joins only the turns it heads: a new one waits one turn at most
                        continue
                    if job.future.cancelled():
                        del self._ring[place]
                        self._gone(job)
                        break  # look again from the start
                    if job.sentences and cost(job.sentences[len(job.done)]) > budget:
                        return None
                    del self._ring[place]
                    return job, place
                else:
                    left = deadline - time.monotonic()
                    if left <= 0 or self._stopping:
                        return None
                    self._cond.wait(left)

    def _parse_turn(self, key: Hashable, taken: list[tuple[Job, list[Sentence]]]) -> None:
        sentences = [s for _, chunk in taken for s in chunk]
        started = time.perf_counter()
        try:
            parsed = self._parse(key, sentences)
        except Exception as exc:  # the model's error goes to every client of the turn; the worker lives on
            for job, _ in taken:
                job.finish(error=exc)
            return
        elapsed = time.perf_counter() - started
        words = sum(len(s) for s in sentences)
        if elapsed > 0 and words:
            speed = words / elapsed
            self._words_per_s = speed if not self._words_per_s else SPEED_MEMORY * self._words_per_s + (1 - SPEED_MEMORY) * speed
        c = self.counters
        c.batches, c.sentences, c.words = c.batches + 1, c.sentences + len(sentences), c.words + words
        c.largest_batch = max(c.largest_batch, len(taken))
        c.parse_seconds = round(c.parse_seconds + elapsed, 3)
        start = 0
        with self._cond:
            for job, chunk in taken:
                job.done.extend(parsed[start : start + len(chunk)])
                start += len(chunk)
                assert job.sentences is not None
                if len(job.done) < len(job.sentences):
                    self._ring.append(job)  # the rest in a later turn, after the others
                else:
                    self._answered(job, job.done)

    def _answered(self, job: Job, result: list[Sentence]) -> None:
        self.counters.jobs += 1
        job.finish(result)
