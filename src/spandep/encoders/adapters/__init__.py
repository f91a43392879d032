"""Adapters: a few trained weights over a frozen pretrained transformer, so a fine-tuned model ships as a small
delta over its base encoder (``[encoder] adapter`` of the transformer encoder; docs/design.md, "Adapters").

``ADAPTERS`` is the registry: a new adapter type is one file (an :class:`Adapter` subclass building its ``peft``
tuner) plus one line here; a training config picks it with ``adapter = { type = "NAME", ... }``.
"""

from __future__ import annotations

from typing import Any

from spandep.encoders.adapters.base import Adapter, adapter_parameters, merge_layers
from spandep.registry import Registry

ADAPTERS: Registry[type[Adapter]] = Registry("adapter type")
ADAPTERS.add("lora", "spandep.encoders.adapters.lora:LoraAdapter")

__all__ = ["ADAPTERS", "Adapter", "adapter_parameters", "adapter_problem", "merge_layers"]


def adapter_problem(given: dict[str, Any]) -> str | None:
    """What is wrong with an ``adapter`` table (its type, unknown keys, its values), as one line; ``None``: nothing."""
    try:
        kind, settings = ADAPTERS.configured(given)
    except ValueError as exc:
        return f"adapter {exc}"
    return ADAPTERS.get(kind).settings_problem(settings)
