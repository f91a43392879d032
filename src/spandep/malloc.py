"""glibc's malloc, reached through ``ctypes``: free memory handed back to the system (``malloc_trim``).

Freed blocks stay in malloc's arenas for later, so a process's resident memory keeps the peaks it has been through.
:func:`trim` hands the free pages back (on other C libraries it does nothing): after the encoder is held in
bfloat16 (:mod:`spandep.storage.precision`: the float32 sums of an adapter's layers, freed one by one) and after a
turn of ``spandep serve``'s worker, which also sets malloc's options (:mod:`spandep.serve.memory`).
"""

from __future__ import annotations

import ctypes

__all__ = ["libc_function", "trim"]


def libc_function(name: str) -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """The function ``name`` of the C library this process runs on (``None`` where it has none: not glibc)."""
    return getattr(ctypes.CDLL(None), name, None)


def trim() -> bool:
    """Hand the free memory of every arena back to the system (glibc's ``malloc_trim(0)``); whether any was
    (``False`` without glibc)."""
    malloc_trim = libc_function("malloc_trim")
    return malloc_trim is not None and malloc_trim(0) == 1
