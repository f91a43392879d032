"""LoRA (Hu et al., 2022) with ``peft``: each targeted linear layer ``W`` computes ``W x + (alpha / r) B A x``
with ``A`` (r × in) and ``B`` (out × r, zero at the start) trained and ``W`` frozen; merged into ``W`` for inference."""

from __future__ import annotations

from typing import Any

from torch import nn

from spandep.checks import Range
from spandep.encoders.adapters.base import Adapter


class LoraAdapter(Adapter):
    """``r``: the rank; ``alpha``: the scale numerator; ``dropout``: on the adapter's input; ``targets``:
    ``"all-linear"`` (every linear layer of the transformer) or a list of module names (a name matches a module
    whose dotted path ends with it, e.g. ``["query", "value"]`` in BERT, ``["q", "v"]`` in MPNet)."""

    name = "lora"
    config_defaults = {"r": 16, "alpha": 32, "dropout": 0.1, "targets": "all-linear"}

    @classmethod
    def settings_problem(cls, settings: dict[str, Any]) -> str | None:
        """Rank, scale and dropout out of range; targets neither ``"all-linear"`` nor a list of names."""
        targets = settings["targets"]
        if targets != "all-linear" and not (isinstance(targets, list) and targets and all(isinstance(t, str) for t in targets)):
            return f'adapter targets must be "all-linear" or a list of module names such as ["query", "value"], not {targets!r}'
        return (
            Range(1).problem("adapter r", settings["r"])
            or Range(0, integer=False, open_low=True).problem("adapter alpha", settings["alpha"])
            or Range(0, 1, integer=False, open_high=True).problem("adapter dropout", settings["dropout"])
        )

    @classmethod
    def wrap(cls, model: nn.Module, settings: dict[str, Any]) -> nn.Module:
        from peft import LoraConfig, LoraModel

        config = LoraConfig(
            r=settings["r"], lora_alpha=settings["alpha"], lora_dropout=settings["dropout"], target_modules=settings["targets"]
        )
        return LoraModel(model, config, "default")
