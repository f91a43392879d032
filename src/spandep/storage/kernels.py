"""The bound on oneDNN's cache of compiled kernels, set wherever a model is loaded (``load_model``: the command line,
``spandep.load``, spaCy, Ray Data, ``spandep serve``).

oneDNN, which runs torch's GELU and LSTM on the CPU, compiles a kernel for each tensor shape it meets and keeps up to
1,024 of them; texts of every length keep bringing new shapes, so a long-lived process's memory in use climbs. Under
``spandep serve``'s soak it climbed from 630 to 720 MB over ten minutes; keeping :data:`KERNEL_CACHE` kernels instead,
malloc's memory in use stayed at 155 to 174 MB where it had climbed from 178 to 240 MB in four minutes, and the soak's
resident memory stayed within 8.7 % of its mean (docs/serve.md, "Soak"). 16 kernels rather than 64 lowered
en-accurate's peak while parsing EWT test by about 40 MB, the API's parse as fast and the command's 2-4 % slower with
loading (BENCHMARKS.md, "Parse memory"). oneDNN reads the variable once, at its first kernel: it is set before any
model runs, and a process that ran oneDNN kernels before its first load keeps the default.
"""

from __future__ import annotations

import os

__all__ = ["KERNEL_CACHE", "bound_kernel_cache"]

KERNEL_CACHE = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", 16)  # the variable oneDNN reads at its first kernel; kernels kept (its default: 1,024)


def bound_kernel_cache() -> bool:
    """Keep :data:`KERNEL_CACHE` compiled oneDNN kernels (module docstring), unless its environment variable already
    says; whether it was set here. Called before the first model call: oneDNN reads the variable once. A kernel
    dropped is compiled again when its shape comes back (the same kernel: the answers do not change)."""
    name, capacity = KERNEL_CACHE
    if name in os.environ:
        return False
    os.environ[name] = str(capacity)
    return True
