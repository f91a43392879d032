"""The encoder held in bfloat16: its pretrained module's linear weights stored in bfloat16 for a model that parses
with ``precision = "bfloat16"`` (:class:`~spandep.options.InferenceOptions`) on a processor that computes it
natively.

Such a parse runs the encoder under ``torch.autocast``, which casts each float32 weight matrix to bfloat16 for its
product and keeps the copies while the batch runs: the weights were held twice. Held in bfloat16, the casts have
nothing to do and the float32 copies are gone, so the parse is the same to the last bit (autocast rounds a float32
weight to the bfloat16 it now holds) in about half the encoder's memory. Every other tensor of the pretrained module
is copied off the memory-mapped file it was read from, so that the file's pages go too. A model so held parses in
bfloat16 only: the float32 weights are not kept (``Parser.settings`` refuses ``precision = "float32"``).
"""

from __future__ import annotations

import torch
from torch import nn

from spandep.encoders.base import native_bfloat16

__all__ = ["hold_bfloat16"]


def hold_bfloat16(model: nn.Module) -> bool:
    """Hold ``model``'s pretrained encoder module in bfloat16 (module docstring) where its device computes bfloat16
    natively and the encoder is neither int8 nor without a pretrained module; whether it did."""
    encoder = model.encoder  # type: ignore[union-attr]
    pretrained = encoder.pretrained_module()
    device = next(model.parameters()).device
    if pretrained is None or encoder.int8 or not native_bfloat16(device):
        return False
    with torch.no_grad():
        for module in pretrained.modules():
            for name, tensor in list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False)):
                held = tensor.to(torch.bfloat16) if isinstance(module, nn.Linear) else tensor.clone()
                if isinstance(tensor, nn.Parameter):
                    setattr(module, name, nn.Parameter(held, requires_grad=False))
                else:
                    module.register_buffer(name, held, persistent=name not in module._non_persistent_buffers_set)
    encoder.held_bfloat16 = True
    return True
