"""Many mid-sized pieces of torch work run side by side, one torch thread each (issue 48).

A span parser's linker runs one batch of MRC queries after another: matrix products too small for a second torch
thread to halve (at 2 threads most of the second thread's time went to OpenMP's waiting: docs/speed.md). Where the
process has ``N > 1`` torch threads, :func:`each_side_by_side` instead gives the batches to ``N`` Python threads and
sets torch to one thread meanwhile, so that ``N`` batches run at once (torch's kernels release the GIL); torch's
thread count is set back afterwards, whatever happens. Each worker is a new thread, which takes torch's thread count
(and the caller's inference or grad mode, which are per thread) when it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch

__all__ = ["each_side_by_side"]

T = TypeVar("T")


def each_side_by_side(work: Callable[[T], None], items: Sequence[T], on_cpu: bool = True) -> None:
    """``work(item)`` for every item: in order on this thread where torch has one thread, there is one item or the
    work is not ``on_cpu`` (a GPU's kernels queue on one stream anyway), else on ``min(threads, len(items))`` threads
    of one torch thread each (the module docstring). ``work`` must be safe to run concurrently; the order in which
    the items finish is not fixed. An exception of any item is raised here."""
    threads = torch.get_num_threads()
    workers = min(threads, len(items)) if on_cpu else 1
    if workers <= 1:
        for item in items:
            work(item)
        return
    inference, grad = torch.is_inference_mode_enabled(), torch.is_grad_enabled()

    def run(item: T) -> None:
        torch.set_num_threads(1)
        with torch.inference_mode(inference), torch.set_grad_enabled(grad):
            work(item)

    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(workers, thread_name_prefix="spandep-side") as pool:
            for future in [pool.submit(run, item) for item in items]:
                future.result()
    finally:
        torch.set_num_threads(threads)
