"""What the machine computes natively: whether bfloat16 matrix products are worth running (the parsers' encoder
under ``precision = "bfloat16"``, a tokenizer's encoder features under its ``encoder_precision``)."""

from __future__ import annotations

import torch

__all__ = ["native_bfloat16"]


def native_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 matrix products natively (a CUDA GPU that supports them; an x86 CPU with
    AVX512-BF16 or AMX-BF16, as ``torch.cpu.get_capabilities`` reports it). Elsewhere bfloat16 is emulated and
    slower than float32."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    capabilities = torch.cpu.get_capabilities()
    return bool(capabilities.get("avx512_bf16") or capabilities.get("amx_bf16"))
