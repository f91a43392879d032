"""Tree decoders, independent of any model code: arc decoders over scores ``(batch, n+1, n+1)`` and span decoders
over candidate subtree spans and their link scores."""

from spandep.decoding.eisner import eisner
from spandep.decoding.mst import mst, mst_single
from spandep.decoding.spans import SpanCandidates, SpanDecodeResult, span_dp, span_mst

__all__ = ["eisner", "mst", "mst_single", "SpanCandidates", "SpanDecodeResult", "span_dp", "span_mst"]
