"""int8 in two places: storing a model's large matrices (a smaller shipped file) and, optionally, computing with
the encoder's on the CPU.

Storage (:func:`quantize` / :func:`dequantize`): symmetric per-row quantisation, ``q = round(w / s)`` with
``s = max|w_row| / 127`` (a row: the last dimension, so a biaffine weight of (labels, d, d) has labels × d rows);
loading multiplies back, so the loaded model computes in float32. Which matrices: the pretrained modules' linear
weights (``spandep export --int8``), or every floating-point weight of two or more dimensions (``--int8-all``: the
parser, the heads and an adapter too, for a model whose pretrained weights are not stored at all). Compute
(:func:`dynamic_int8`): torch's dynamic quantisation of the encoder's linear layers, off by default.
"""

from __future__ import annotations

from typing import Literal

import torch

Int8Scope = Literal["encoder", "all"]  # which weights spandep export --int8 / --int8-all stores as int8
SCALE_SUFFIX = ".int8_scale"
MIN_ELEMENTS = 65_536  # smaller matrices gain little and are left in float16
ALL_MIN_ELEMENTS = 4_096  # --int8-all: an adapter's matrices are small but many


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


def dynamic_int8(model: torch.nn.Module) -> torch.nn.Module:
    """Run the encoder's pretrained module with dynamically quantised int8 linear layers (CPU inference only).

    Weights become int8 with per-tensor scales and activations are quantised on the fly
    (``torch.ao.quantization.quantize_dynamic``); the rest of the model stays in float32. Faster matrix products
    on a CPU at a small, measured cost in accuracy (BENCHMARKS.md)."""
    import warnings

    from torch.ao.quantization import quantize_dynamic

    pretrained = model.encoder.pretrained_module()  # type: ignore[union-attr, operator]
    if pretrained is None:
        raise ValueError("int8 inference needs a pretrained (transformer) encoder")
    if next(model.parameters()).device.type != "cpu":
        raise ValueError("int8 inference runs on the CPU; use --device cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch marks torch.ao.quantization as deprecated in favour of torchao
        quantize_dynamic(pretrained, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
    model.encoder.int8 = True  # type: ignore[union-attr]
    return model
