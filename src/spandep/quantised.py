"""int8 rows: how a weight matrix is stored in a quarter of its float32 bytes, for every file that stores weights
(a model folder's ``model.safetensors``, a trained tokenizer's in a compact model).

Symmetric per-row quantisation, ``q = round(w / s)`` with ``s = max|w_row| / 127`` (a row: the last dimension, so a
biaffine weight of (labels, d, d) has labels × d rows), the scales stored beside the matrix as ``NAME`` +
``SCALE_SUFFIX`` in float16; loading multiplies back, so the loaded weights compute in float32. Which matrices a
model stores so is ``storage.int8``'s choice.
"""

from __future__ import annotations

import torch

SCALE_SUFFIX = ".int8_scale"
MIN_ELEMENTS = 65_536  # smaller matrices gain little and are left in float16
ALL_MIN_ELEMENTS = 4_096  # --int8-all: an adapter's matrices are small but many


def halved(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``state`` with its floating-point tensors in float16 (a compact folder's storage; other dtypes as given)."""
    return {k: v.half() if v.is_floating_point() else v for k, v in state.items()}


def quantize(
    state: dict[str, torch.Tensor], candidates: set[str], min_elements: int = MIN_ELEMENTS
) -> tuple[dict[str, torch.Tensor], list[str]]:
    """``state`` with each tensor named in ``candidates`` of two or more dimensions and at least ``min_elements``
    values replaced by int8 values plus a ``SCALE_SUFFIX`` tensor (one scale per row), and the names of those
    replaced."""
    out: dict[str, torch.Tensor] = {}
    names = []
    for name, w in state.items():
        if name not in candidates or w.dim() < 2 or not w.is_floating_point() or w.numel() < min_elements:
            out[name] = w
            continue
        w = w.float()
        scale = (w.abs().amax(dim=-1) / 127.0).clamp(min=1e-12)  # (..., rows)
        out[name] = (w / scale[..., None]).round().clamp(-127, 127).to(torch.int8)  # (..., rows, cols)
        out[name + SCALE_SUFFIX] = scale.half()  # (..., rows)
        names.append(name)
    return out, names


def dequantize(state: dict[str, torch.Tensor], names: list[str]) -> dict[str, torch.Tensor]:
    """Inverse of :func:`quantize` (up to rounding): float32 tensors for the listed names."""
    out = {k: v for k, v in state.items() if not k.endswith(SCALE_SUFFIX)}
    for name in names:
        out[name] = state[name].float() * state[name + SCALE_SUFFIX].float()[..., None]  # (..., rows, cols)
    return out


def int8_names(stored: dict[str, torch.Tensor]) -> list[str]:
    """The tensors of ``stored`` kept in int8: those with a scale beside them."""
    return [k for k in stored if k + SCALE_SUFFIX in stored]


def loaded(stored: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``stored`` with every int8 matrix multiplied back (those with a scale beside them): what a file that may hold
    int8 rows loads as."""
    return dequantize(stored, int8_names(stored))
