"""The two values that mark what a model may not choose, one name each.

* :data:`MASKED`: the *logit* of a disallowed cell before a softmax: large, negative and finite, so a row with
  every cell disallowed never turns into NaN (narrower float types use :func:`mask_value`).
* :data:`NEG_INF`: the *log score* of something impossible (a link outside the masks, a missing candidate), as
  the decoders read it.
"""

from __future__ import annotations

import torch

MASKED = -1e9
NEG_INF = float("-inf")


def mask_value(dtype: torch.dtype) -> float:
    """:data:`MASKED`, or a quarter of the lowest value of a float type too narrow for it (float16)."""
    return max(MASKED, torch.finfo(dtype).min / 4)
