"""The interface of an adapter type: its settings, and the ``peft`` tuner it puts over a transformer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import torch
from torch import nn

from spandep.registry import SettingsCheck


class Adapter(SettingsCheck):
    """Subclasses declare ``name`` (the ``type`` of an ``adapter`` table) and ``config_defaults`` (its other keys
    and their defaults), check values in ``settings_problem`` and build the tuner in :meth:`wrap`."""

    name: ClassVar[str]
    config_defaults: ClassVar[dict[str, Any]] = {}

    @classmethod
    def wrap(cls, model: nn.Module, settings: dict[str, Any]) -> nn.Module:
        """A ``peft`` tuner over ``model`` (its ``model`` attribute; other attributes read through to it) with the
        adapter's layers injected: the adapter's weights trainable, every weight of ``model`` frozen."""
        raise NotImplementedError


def adapter_parameters(tuner: nn.Module) -> list[nn.Parameter]:
    """The weights an adapter added to a tuner's model (those of each injected layer's adapter modules)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    return [
        p
        for module in tuner.modules()
        if isinstance(module, BaseTunerLayer)
        for part in module.adapter_layer_names
        for p in getattr(module, part).parameters()
    ]


def merge_layers(tuner: nn.Module, each: Callable[[nn.Module, torch.Tensor], None]) -> nn.Module:
    """The tuner's model with each injected layer's delta added to its base layer's weight, a layer at a time, into a
    new tensor (``peft``'s safe merge: the pretrained weight, perhaps memory-mapped from its file, is only read), and
    the adapter's layers removed; ``each(base_layer, pretrained_weight)`` is called as soon as a layer is merged."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    for module in [m for m in tuner.modules() if isinstance(m, BaseTunerLayer)]:
        base = module.get_base_layer()
        pretrained = base.weight.data  # the merge points the parameter at a new tensor; this one keeps the old
        module.merge(safe_merge=True)
        each(base, pretrained)
    return tuner.unload()  # type: ignore[operator]
