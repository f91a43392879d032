"""glibc's malloc and the kernel's memory advice, reached through ``ctypes``: free memory handed back to the system
(``malloc_trim``), and the pages of a memory-mapped file's tensor handed back while it is kept (``madvise``).

Freed blocks stay in malloc's arenas for later, so a process's resident memory keeps the peaks it has been through.
:func:`trim` hands the free pages back (on other C libraries it does nothing): after the encoder is held in
bfloat16 (:mod:`spandep.storage.precision`: the float32 sums of an adapter's layers, freed one by one) and after a
turn of ``spandep serve``'s worker, which also sets malloc's options (:mod:`spandep.serve.memory`). :func:`release`
drops the resident pages of weights read from a file (a base encoder's): those a parse does not read (most rows of
an embedding table) stay on disk.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["libc_function", "release", "trim"]

MADV_PAGEOUT = 21  # madvise(2), Linux 5.4: reclaim these pages now (a file's clean pages are dropped, read again if touched)


def libc_function(name: str) -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """The function ``name`` of the C library this process runs on (``None`` where it has none: not glibc)."""
    return getattr(ctypes.CDLL(None), name, None)


def trim() -> bool:
    """Hand the free memory of every arena back to the system (glibc's ``malloc_trim(0)``); whether any was
    (``False`` without glibc)."""
    malloc_trim = libc_function("malloc_trim")
    return malloc_trim is not None and malloc_trim(0) == 1


def release(tensor: torch.Tensor) -> bool:
    """Hand back the resident pages of a CPU tensor memory-mapped from a file (a storage torch did not allocate
    itself, as a base encoder's weights read by ``transformers``), whole pages only, while it is still referenced;
    whether the kernel took the advice (Linux only). Only a hint: the tensor reads the same after it (a file's pages
    come back from the file), and a tensor torch allocated, or a system without ``madvise``, is left as it is."""
    storage = tensor.untyped_storage()
    madvise = libc_function("madvise")
    if not sys.platform.startswith("linux") or tensor.device.type != "cpu" or storage.resizable() or madvise is None:
        return False  # the advice's number is Linux's
    page = mmap.PAGESIZE
    start = -(-storage.data_ptr() // page) * page
    end = (storage.data_ptr() + storage.nbytes()) // page * page
    return end > start and madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_PAGEOUT) == 0
