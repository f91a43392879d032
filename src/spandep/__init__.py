"""spandep: dependency parsing as MRC-based span-span prediction, with a Biaffine baseline.

``spandep.load()`` returns a parsing :class:`~spandep.api.Pipeline` (see :mod:`spandep.api`); it is imported on
first use, so ``import spandep`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Doc", "Pipeline", "__version__", "load"]

if TYPE_CHECKING:
    from spandep.api import Doc, Pipeline, load


def __getattr__(name: str) -> Any:
    if name in ("load", "Pipeline", "Doc"):
        from spandep import api

        return getattr(api, name)
    raise AttributeError(f"module 'spandep' has no attribute {name!r}")
