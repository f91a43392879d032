"""Tree decoders over arc scores ``(batch, n+1, n+1)``; independent of any model code."""

from spandep.decoding.eisner import eisner
from spandep.decoding.mst import mst, mst_single

__all__ = ["eisner", "mst", "mst_single"]
