"""The process's memory in ``spandep serve``: fewer malloc arenas, and free memory handed back after big requests.

glibc gives each thread that allocates its own malloc arena (up to 8 per core), and a server's threads (uvicorn's
pool reading and writing requests, the worker, torch's) each keep the freed memory of their arena: under load the
resident memory crept up by 134 MB in three minutes. With two arenas, as ``MALLOC_ARENA_MAX=2`` gives, it stayed
within 8.5 % of its mean and the throughput did not drop (docs/serve.md, "Memory"). A big request still leaves its
peak behind (freed memory glibc keeps for later), and a mixed load leaves peaks of its own: :func:`trim` hands it back
to the system (``malloc_trim``). After every batch it cost a tenth of the throughput under load, so the worker trims
after a turn when nothing else waits, else at most every :data:`TRIM_EVERY_S` seconds (docs/serve.md, "Memory")."""

from __future__ import annotations

import ctypes
import os

__all__ = ["TRIM_EVERY_S", "limit_malloc_arenas", "trim"]

MALLOC_ARENAS = 2
M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)
TRIM_EVERY_S = 2.0  # the worker trims after a turn when this long has passed since its last trim


def _libc_function(name: str) -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    return getattr(ctypes.CDLL(None), name, None)  # the C library this process runs on (None: not glibc)


def limit_malloc_arenas() -> bool:
    """Limit this process to ``MALLOC_ARENAS`` malloc arenas (module docstring) before its threads start, unless
    ``MALLOC_ARENA_MAX`` already says how many; whether the limit was set (``False`` without glibc)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    mallopt = _libc_function("mallopt")
    return mallopt is not None and mallopt(M_ARENA_MAX, MALLOC_ARENAS) == 1


def trim() -> bool:
    """Hand the free memory at the top of every arena back to the system (glibc's ``malloc_trim(0)``); whether any
    was (``False`` without glibc)."""
    malloc_trim = _libc_function("malloc_trim")
    return malloc_trim is not None and malloc_trim(0) == 1
