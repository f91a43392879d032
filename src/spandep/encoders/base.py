"""The interface every word encoder implements.

An encoder turns a batch of sentences into one vector per word plus one for ROOT at position 0.
Feature extraction is split from the forward pass so that each sentence is tokenised once
(``featurize``) and batches are assembled cheaply (``collate``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class WordEncoder(nn.Module):
    """Base class: subclasses set ``out_dim`` and implement the four methods below."""

    out_dim: int

    def featurize(self, forms: list[str]) -> dict[str, Any]:
        """Per-sentence features (plain Python / numpy) with at least ``n_words``; computed once, cached by the caller."""
        raise NotImplementedError

    def collate(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        """Stack the features of several sentences into padded batch tensors (on CPU)."""
        raise NotImplementedError

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Return word vectors ``(batch, 1 + max_words, out_dim)``; position 0 is ROOT."""
        raise NotImplementedError

    def export_config(self) -> dict[str, Any]:
        """JSON-serialisable settings (and vocabularies) that rebuild this encoder with ``build_encoder``."""
        raise NotImplementedError
