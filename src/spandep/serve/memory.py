"""The process's memory in ``spandep serve``: fewer malloc arenas and free memory handed back.

glibc gives each thread that allocates its own malloc arena (up to 8 per core), and a server's threads (uvicorn's
pool reading and writing requests, the worker, torch's) each keep the freed memory of their arena: under load the
resident memory crept up by 134 MB in three minutes. With two arenas, as ``MALLOC_ARENA_MAX=2`` gives, it stayed
within 8.5 % of its mean and the throughput did not drop (docs/serve.md, "Memory"). A big request still leaves its
peak behind (freed memory glibc keeps for later), and a mixed load leaves peaks of its own:
:func:`spandep.malloc.trim` hands it back to the system. After every batch it cost a tenth of the throughput under
load, so the worker trims after a turn when nothing else waits, else at most every :data:`TRIM_EVERY_S` seconds (docs/serve.md, "Memory").
The swings stayed (a 3-minute soak: 20.2 % from the mean): glibc's mmap threshold grows with the large blocks freed
(up to 32 MB), so a model batch's tensors come to live in the arenas, whose free memory is kept. A fixed threshold
of 1 MiB (as ``MALLOC_MMAP_THRESHOLD_=1048576`` gives) maps every block that large on its own and unmaps it when
freed: in the same soak the mean fell from 731 to 663 MB and the largest distance from it from 20.2 % to 12.2 %
(docs/serve.md, "Soak"). What still climbed (630 to 720 MB over ten minutes) was not malloc's free memory but
memory in use, outside Python: oneDNN's cache of compiled kernels, which every model load bounds, the service's
included (:mod:`spandep.storage.kernels`)."""

from __future__ import annotations

import os

from spandep.malloc import libc_function

__all__ = ["MALLOC_OPTIONS", "TRIM_EVERY_S", "set_malloc_options"]

MALLOC_OPTIONS = {  # the environment variable glibc reads at start -> (its mallopt parameter number, malloc.h; value)
    "MALLOC_ARENA_MAX": (-8, 2),  # M_ARENA_MAX: two arenas
    "MALLOC_MMAP_THRESHOLD_": (-3, 1 << 20),  # M_MMAP_THRESHOLD: blocks of 1 MiB or more mapped alone, unmapped when freed
}
TRIM_EVERY_S = 2.0  # the worker trims after a turn when this long has passed since its last trim


def set_malloc_options() -> list[str]:
    """Set :data:`MALLOC_OPTIONS` (module docstring) before the threads start, each unless its environment variable
    already says; the variables whose setting was made here (none without glibc)."""
    mallopt = libc_function("mallopt")
    if mallopt is None:
        return []
    return [name for name, (parameter, value) in MALLOC_OPTIONS.items() if name not in os.environ and mallopt(parameter, value) == 1]
