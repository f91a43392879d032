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
    upos_vocab: list[str] | None = None

    def featurize(self, forms: list[str], upos: list[str] | None = None) -> dict[str, Any]:
        """Per-sentence features (plain Python / numpy), computed once and cached by the caller.

        Must hold ``n_words``; may hold ``cost``, the padded length the sentence costs in a batch (word pieces for
        a transformer), which token-budget batching uses instead of ``n_words + 1``.
        """
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


def sentence_features(encoder: WordEncoder, forms: list[str], upos: list[str]) -> dict[str, Any]:
    """``encoder.featurize`` for one sentence, passing UPOS tags only to an encoder that embeds them."""
    return encoder.featurize(forms, upos if encoder.upos_vocab is not None else None)


def batch_cost(features: dict[str, Any]) -> int:
    """What one sentence costs in a token-budget batch (its padded sequence length)."""
    return int(features.get("cost", features["n_words"] + 1))
