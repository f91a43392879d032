"""Small building blocks shared by the scorers: MLP projections and biaffine products."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn


class MLP(nn.Module):
    """Linear → LeakyReLU(0.1) → dropout, the projection before every biaffine scorer."""

    def __init__(self, n_in: int, n_out: int, dropout: float) -> None:
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.act = nn.LeakyReLU(0.1)
        self.dropout = nn.Dropout(dropout)
        nn.init.orthogonal_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.act(self.linear(x)))  # (..., n_out)


class Biaffine(nn.Module):
    """``s[b, o, i, j] = [x_i; 1]ᵀ W_o [y_j; 1]`` (bias terms optional), squeezed when ``n_out == 1``."""

    def __init__(self, n_in: int, n_out: int = 1, bias_x: bool = True, bias_y: bool = True) -> None:
        super().__init__()
        self.n_out = n_out
        self.bias_x = bias_x
        self.bias_y = bias_y
        self.weight = nn.Parameter(torch.zeros(n_out, n_in + bias_x, n_in + bias_y))

    def _pad(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.bias_x:
            x = torch.cat([x, torch.ones_like(x[..., :1])], dim=-1)  # (batch, n, n_in + 1)
        if self.bias_y:
            y = torch.cat([y, torch.ones_like(y[..., :1])], dim=-1)  # (batch, m, n_in + 1)
        return x, y

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """All pairs: ``x (batch, n, d)``, ``y (batch, m, d)`` → ``(batch, [n_out,] n, m)``."""
        x, y = self._pad(x, y)
        s = torch.einsum("bxi,oij,byj->boxy", x, self.weight, y)  # (batch, n_out, n, m)
        return s.squeeze(1) if self.n_out == 1 else s

    def pairwise(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Aligned pairs only: ``x, y (batch, n, d)`` → ``(batch, n, n_out)``; cheap label scoring at chosen heads."""
        x, y = self._pad(x, y)
        return torch.einsum("bni,oij,bnj->bno", x, self.weight, y)  # (batch, n, n_out)


@contextmanager
def evaluating(*modules: nn.Module) -> Iterator[None]:
    """Every module in eval mode under ``torch.inference_mode()``; each one's training flag restored afterwards,
    whatever happens inside."""
    was_training = [m.training for m in modules]
    for m in modules:
        m.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        for m, flag in zip(modules, was_training):
            m.train(flag)
