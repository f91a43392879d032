"""spandep: dependency parsing as MRC-based span-span prediction, with a Biaffine baseline.

``spandep.load()`` returns a parsing :class:`~spandep.api.Pipeline` (see :mod:`spandep.api`); its results are
:class:`~spandep.document.Doc` objects of :class:`~spandep.document.Sentence` s of :class:`~spandep.document.Word` s
(docs/api.md). They are imported on first use, so ``import spandep`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spandep.version import __version__

__all__ = ["Doc", "Pipeline", "Sentence", "Word", "__version__", "load"]

if TYPE_CHECKING:
    from spandep.api import Pipeline, load
    from spandep.document import Doc, Sentence, Word


def __getattr__(name: str) -> Any:
    if name in ("load", "Pipeline"):
        from spandep import api

        return getattr(api, name)
    if name in ("Doc", "Sentence", "Word"):
        from spandep import document

        return getattr(document, name)
    raise AttributeError(f"module 'spandep' has no attribute {name!r}")
