"""glibc's malloc, reached through ``ctypes``: free memory handed back to the system (``malloc_trim``).

A parse allocates its tensors' blocks through malloc, and freed blocks stay in malloc's arenas for later. Span
inference links and decodes sentences shortest first, so each group of sentences asks for blocks a little larger
than those the group before freed: they fit none of the holes, the arenas grow, and a process's resident memory
climbs with every group while its memory in use does not (en-accurate over EWT test: 0.71 GB after loading, 1.95 GB
at the end; with a trim between groups at most 1.13 GB; BENCHMARKS.md, "Parse memory"). :func:`trim` hands the free
pages back (on other C libraries it does nothing). ``spandep serve`` also sets malloc's options
(:mod:`spandep.serve.memory`).
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
