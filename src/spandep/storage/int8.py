"""int8 in two places: storing a model's large matrices (a smaller shipped file) and, optionally, computing with
the encoder's on the CPU.

Storage (the row format: ``spandep.quantised``): which matrices a model stores so, its ``Int8Scope``: the pretrained
modules' linear weights (``spandep export --int8``), or every floating-point weight of two or more dimensions
(``--int8-all``: the parser, the heads and an adapter too, for a model whose pretrained weights are not stored at
all, and its trained tokenizers' weights). Compute (:func:`dynamic_int8`): torch's dynamic quantisation of the
encoder's linear layers, off by default.
"""

from __future__ import annotations

from typing import Literal

import torch

Int8Scope = Literal["encoder", "all"]  # which weights spandep export --int8 / --int8-all stores as int8


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
