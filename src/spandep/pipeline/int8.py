"""int8 in two places: storing a model's large transformer matrices (a smaller shipped file) and, optionally,
computing with them on the CPU.

Storage (:func:`quantize` / :func:`dequantize`): symmetric per-row quantisation, ``q = round(w / s)`` with
``s = max|w_row| / 127``; loading multiplies back, so the loaded model computes in float32. Compute
(:func:`dynamic_int8`): torch's dynamic quantisation of the encoder's linear layers, off by default.
"""

from __future__ import annotations

import torch

SCALE_SUFFIX = ".int8_scale"
MIN_ELEMENTS = 65_536  # smaller matrices gain little and are left in float16


def quantizable(name: str, tensor: torch.Tensor, min_elements: int = MIN_ELEMENTS) -> bool:
    """The transformer's linear weight matrices (not embedding tables, biases or norms)."""
    return (
        ".transformer." in f".{name}" and "embeddings" not in name and name.endswith(".weight")
        and tensor.dim() == 2 and tensor.is_floating_point() and tensor.numel() >= min_elements
    )


def quantize(state: dict[str, torch.Tensor], min_elements: int = MIN_ELEMENTS) -> tuple[dict[str, torch.Tensor], list[str]]:
    """``state`` with each quantizable matrix replaced by int8 values plus a ``SCALE_SUFFIX`` tensor, and their names."""
    out: dict[str, torch.Tensor] = {}
    names = []
    for name, w in state.items():
        if not quantizable(name, w, min_elements):
            out[name] = w
            continue
        w = w.float()
        scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12)  # (rows,)
        out[name] = (w / scale[:, None]).round().clamp(-127, 127).to(torch.int8)  # (rows, cols)
        out[name + SCALE_SUFFIX] = scale.half()  # (rows,)
        names.append(name)
    return out, names


def dequantize(state: dict[str, torch.Tensor], names: list[str]) -> dict[str, torch.Tensor]:
    """Inverse of :func:`quantize` (up to rounding): float32 matrices for the listed names."""
    out = {k: v for k, v in state.items() if not k.endswith(SCALE_SUFFIX)}
    for name in names:
        out[name] = state[name].float() * state[name + SCALE_SUFFIX].float()[:, None]  # (rows, cols)
    return out


def dynamic_int8(model: torch.nn.Module) -> torch.nn.Module:
    """Run the encoder's transformer with dynamically quantised int8 linear layers (CPU inference only).

    Weights become int8 with per-tensor scales and activations are quantised on the fly
    (``torch.ao.quantization.quantize_dynamic``); the rest of the model stays in float32. Faster matrix products
    on a CPU at a small, measured cost in accuracy (BENCHMARKS.md)."""
    import warnings

    from torch.ao.quantization import quantize_dynamic

    encoder = getattr(model, "encoder", None)
    transformer = getattr(encoder, "transformer", None)
    if transformer is None:
        raise ValueError("int8 inference needs a transformer encoder")
    if next(model.parameters()).device.type != "cpu":
        raise ValueError("int8 inference runs on the CPU; use --device cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch marks torch.ao.quantization as deprecated in favour of torchao
        encoder.transformer = quantize_dynamic(transformer, {torch.nn.Linear}, dtype=torch.qint8)
    return model
