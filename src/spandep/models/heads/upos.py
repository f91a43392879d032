"""A UPOS tagging head on the parser's word vectors, trained jointly so that raw text gets tags too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from spandep.data.sentence import Sentence
from spandep.data.vocab import build_vocab
from spandep.models.heads.base import IGNORE, OutputHead


class UposTagger(OutputHead):
    """Dropout + one linear layer over each word vector; cross-entropy against gold UPOS."""

    name = "upos"
    column = "upos"
    config_defaults = {"dropout": 0.33}

    def __init__(self, n_in: int, tags: Sequence[str], dropout: float = 0.33) -> None:
        super().__init__()
        self.tags = list(tags)
        self.index = {t: i for i, t in enumerate(self.tags)}
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(n_in, len(self.tags))
        self.hparams = {"tags": self.tags, "dropout": dropout}

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """The tag set is every UPOS of the training data (``_`` left out)."""
        return {"tags": build_vocab(t for s in train for t in s.upos if t != "_"), **settings}

    def export_config(self) -> dict[str, Any]:
        return dict(self.hparams)

    def gold_ids(self, sentence: Sentence) -> list[int]:
        return [self.index.get(t, IGNORE) for t in sentence.upos]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(x))  # (batch, 1 + n, tags)

    def loss(self, x: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over words with a known gold tag; ``gold (batch, 1 + n)`` holds ``IGNORE`` elsewhere."""
        scores = self(x)  # (batch, 1 + n, tags)
        if not bool((gold != IGNORE).any()):
            return scores.sum() * 0.0
        return F.cross_entropy(scores.flatten(0, 1), gold.flatten(), ignore_index=IGNORE)

    def predict(self, x: torch.Tensor, word_mask: torch.Tensor) -> list[list[str]]:
        """Best tag of each word ``1..n`` of each sentence."""
        best = self(x).argmax(-1).masked_fill(~word_mask, 0).tolist()  # (batch, 1 + n)
        lengths = (word_mask.sum(1) - 1).tolist()  # (batch,)
        return [[self.tags[i] for i in row[1 : n + 1]] for row, n in zip(best, lengths)]
