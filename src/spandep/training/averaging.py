"""``[training] ema``: an exponential moving average of the trained weights, read at every dev evaluation and saved
as the model, while the optimiser goes on from the raw weights.

After optimiser step ``t`` (from 1) each trained parameter's average moves towards it by ``1 - d``, with
``d = min(ema, 1 - 1 / t)``: the plain mean of the weights after each step until ``t`` reaches the average's horizon
``1 / (1 - ema)``, an exponential average over about that many steps from then on (the initial weights never count).
Frozen parameters (a base encoder under adapters) are never copied. The averages travel in the checkpoint, so a
resumed run ends with the same model as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

PREFIX = "average."  # the averages' names in a checkpoint's extra tensors


class WeightAverage:
    """The moving average of ``model``'s trained parameters."""

    def __init__(self, model: torch.nn.Module, decay: float) -> None:
        self.decay = decay
        self.params = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        self.shadow = {name: p.detach().clone() for name, p in self.params}

    @torch.no_grad()
    def update(self, steps_done: int) -> None:
        """Move the averages after the optimiser's ``steps_done``-th step."""
        weight = 1.0 - min(self.decay, 1.0 - 1.0 / steps_done)
        for name, p in self.params:
            self.shadow[name].lerp_(p.detach(), weight)

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """The model holds the averages inside the block and its own weights again after it."""
        held = {name: p.detach().clone() for name, p in self.params}
        self._load_into_model(self.shadow)
        try:
            yield
        finally:
            self._load_into_model(held)

    @torch.no_grad()
    def _load_into_model(self, values: dict[str, torch.Tensor]) -> None:
        for name, p in self.params:
            p.copy_(values[name])

    def tensors(self) -> dict[str, torch.Tensor]:
        """The averages by checkpoint name."""
        return {PREFIX + name: t for name, t in self.shadow.items()}

    @torch.no_grad()
    def load(self, tensors: dict[str, torch.Tensor]) -> None:
        """Restore the averages from :meth:`tensors`' output (read back from a checkpoint)."""
        for name, t in self.shadow.items():
            t.copy_(tensors[PREFIX + name])
