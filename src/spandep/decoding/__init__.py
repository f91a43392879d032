"""Tree decoders, independent of any model code: arc decoders over scores ``(batch, n+1, n+1)`` and span decoders
over candidate subtree spans and their link scores.

``DECODERS`` names every algorithm; a parser type maps the user-facing names (``mst``, ``projective``) to them
(``Parser.decoders``). Each takes the constraints of its sentences (``Fixed``: given heads and subtrees) and keeps
them. A new decoder is one file plus one line here.
"""

from spandep.decoding.constraints import FREE, ConstraintError, Fixed
from spandep.decoding.eisner import eisner
from spandep.decoding.mst import mst, mst_single
from spandep.decoding.spans import SpanCandidates, SpanDecodeResult, span_dp, span_mst
from spandep.registry import Registry

DECODERS: Registry = Registry("decoder")
DECODERS.add("mst", mst)
DECODERS.add("eisner", eisner)
DECODERS.add("span_mst", span_mst)
DECODERS.add("span_dp", span_dp)

__all__ = ["DECODERS", "FREE", "ConstraintError", "Fixed", "eisner", "mst", "mst_single", "SpanCandidates", "SpanDecodeResult", "span_dp", "span_mst"]
