"""The encoder held in bfloat16: its pretrained module's linear weights stored in bfloat16 for a model that parses
with ``precision = "bfloat16"`` (:class:`~spandep.options.InferenceOptions`) on a processor that computes it
natively.

Such a parse runs the encoder under ``torch.autocast``, which casts each float32 weight matrix to bfloat16 for its
product and keeps the copies while the batch runs: the weights were held twice. Held in bfloat16, the casts have
nothing to do and the float32 copies are gone, so the parse is the same to the last bit (autocast rounds a float32
weight to the bfloat16 it now holds) in about half the encoder's memory. Every other tensor of the pretrained module
(the embedding tables, the layer norms) stays memory-mapped from the file it was read from, its pages handed back: a
parse reads again from the file only the embedding rows of the pieces it meets (en-accurate's table of 30,527 pieces
is 94 MB in float32). A model so held parses in bfloat16 only: the float32 weights are not kept
(``Parser.settings`` refuses ``precision = "float32"``).

It goes a layer at a time, so that loading never holds the float32 and the bfloat16 weights whole at once: an
adapter is merged layer by layer into new tensors (:meth:`~spandep.encoders.base.WordEncoder.merge_adapter`), each
sum held in bfloat16 at once, and the pages of every pretrained tensor memory-mapped from the base encoder's file are
handed back as soon as its copy is made (:func:`spandep.malloc.release`; they were only read) instead of when the file's last tensor
goes (en-accurate's peak while loading: 1.12 → 0.82 GB; BENCHMARKS.md, "Parse memory").
"""

from __future__ import annotations

import torch
from torch import nn

from spandep.hardware import native_bfloat16
from spandep.malloc import release, trim

__all__ = ["hold_bfloat16"]


def hold_bfloat16(model: nn.Module) -> bool:
    """Hold ``model``'s pretrained encoder module in bfloat16 (module docstring), merging its adapter on the way,
    where its device computes bfloat16 natively and the encoder is neither int8 nor without a pretrained module;
    whether it did (if not, the adapter is left to the caller to merge)."""
    encoder = model.encoder  # type: ignore[union-attr]
    device = next(model.parameters()).device
    if encoder.pretrained_module() is None or encoder.int8 or not native_bfloat16(device):
        return False
    with torch.no_grad():
        encoder.merge_adapter(_hold_merged)
        for module in encoder.pretrained_module().modules():
            for name, tensor in list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False)):
                if tensor.dtype == torch.bfloat16:  # held already (an adapter's merged layer)
                    continue
                if isinstance(module, nn.Linear):
                    held = tensor.to(torch.bfloat16)
                    if isinstance(tensor, nn.Parameter):
                        setattr(module, name, nn.Parameter(held, requires_grad=False))
                    else:
                        module.register_buffer(name, held, persistent=name not in module._non_persistent_buffers_set)
                release(tensor)  # a linear weight: its float32 pages; any other: stays mapped, its pages read again where used
    trim()  # the float32 sums of the adapter's layers, freed: handed back
    encoder.held_bfloat16 = True
    return True


def _hold_merged(layer: nn.Module, pretrained: torch.Tensor) -> None:
    """An adapted linear layer just merged: its sum held in bfloat16, the pretrained weight's pages released."""
    layer.weight = nn.Parameter(layer.weight.to(torch.bfloat16), requires_grad=False)  # type: ignore[union-attr]
    release(pretrained)
