"""A UPOS tagging head on the parser's word vectors, trained jointly so that raw text gets tags too."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

NO_TAG = -100  # gold id of words whose UPOS is unknown ("_") or outside the tag set: ignored by the loss


class UposTagger(nn.Module):
    """Dropout + one linear layer over each word vector; cross-entropy against gold UPOS."""

    def __init__(self, n_in: int, tags: Sequence[str], dropout: float = 0.33) -> None:
        super().__init__()
        self.tags = list(tags)
        self.index = {t: i for i, t in enumerate(self.tags)}
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(n_in, len(self.tags))
        self.hparams = {"tags": self.tags, "dropout": dropout}

    def gold_ids(self, upos: Sequence[str]) -> list[int]:
        """Tag ids of one sentence's gold UPOS (``NO_TAG`` where unknown)."""
        return [self.index.get(t, NO_TAG) for t in upos]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(x))  # (batch, 1 + n, tags)

    def loss(self, x: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over words with a known gold tag; ``gold (batch, 1 + n)`` holds ``NO_TAG`` elsewhere."""
        scores = self(x)  # (batch, 1 + n, tags)
        if not bool((gold != NO_TAG).any()):
            return scores.sum() * 0.0
        return F.cross_entropy(scores.flatten(0, 1), gold.flatten(), ignore_index=NO_TAG)

    def predict(self, x: torch.Tensor, word_mask: torch.Tensor) -> list[list[str]]:
        """Best tag of each word ``1..n`` of each sentence."""
        best = self(x).argmax(-1).masked_fill(~word_mask, 0).tolist()  # (batch, 1 + n)
        lengths = (word_mask.sum(1) - 1).tolist()  # (batch,)
        return [[self.tags[i] for i in row[1 : n + 1]] for row, n in zip(best, lengths)]
