"""The span-span parser (Gan et al., 2022): span proposal, MRC span linking and span decoding, in one package.

* ``proposal.py``: a start and an end distribution per word, the top-k spans per word;
* ``linking.py``: what every linker shares (``LinkScorer``: masks, targets, losses, link tables);
* ``late.py``: the late-interaction linker over the shared encoder's word vectors (default);
* ``faithful.py`` with ``queries.py``: the paper's linker, a transformer over each marked query;
* ``labels.py``: reading labels at the decoded arcs;
* ``candidates.py`` and ``inference.py``: parsing, stage by stage (propose → link → decode);
* ``parser.py``: ``SpanParser``, the parser type that holds the modules and trains them jointly.

``LINKERS`` is the registry of linkers by query format: a new linker is one file plus one line here.
"""

from __future__ import annotations

from spandep.models.span.linking import LinkScorer
from spandep.registry import Registry

LINKERS: Registry[type[LinkScorer]] = Registry("linker format")
LINKERS.add("late", "spandep.models.span.late:LateSpanLinker")
LINKERS.add("paired", "spandep.models.span.faithful:SpanLinker")
LINKERS.add("inline", "spandep.models.span.faithful:SpanLinker")

__all__ = ["LINKERS", "LinkScorer"]
