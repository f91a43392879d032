"""The interface of an output head: a per-word classifier over the parser's word vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import torch
from torch import nn

from spandep.data.sentence import Sentence

IGNORE = -100  # gold id of words whose value is unknown ("_") or outside the head's classes: ignored by the loss


class OutputHead(nn.Module):
    """Subclasses declare ``name`` (registry name and ``[heads.NAME]`` table), ``column`` (the CoNLL-U column,
    a :class:`~spandep.data.sentence.Token` attribute, that they fill) and ``config_defaults``, and implement the
    methods below. Position 0 of every tensor is ROOT and is never scored."""

    name: ClassVar[str]
    column: ClassVar[str]
    config_defaults: ClassVar[dict[str, Any]] = {}

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """Constructor arguments from the ``[heads.NAME]`` settings (defaults filled) and the training data."""
        raise NotImplementedError

    @classmethod
    def from_config(cls, n_in: int, config: dict[str, Any]) -> OutputHead:
        """Build over word vectors of width ``n_in`` from a config (``config_from_data`` or ``export_config``)."""
        return cls(n_in, **config)

    def export_config(self) -> dict[str, Any]:
        raise NotImplementedError

    def gold_ids(self, sentence: Sentence) -> list[int]:
        """Gold class id of each word (``IGNORE`` where unknown)."""
        raise NotImplementedError

    def loss(self, x: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """Training loss from word vectors ``(batch, 1 + n, n_in)`` and gold ids ``(batch, 1 + n)``."""
        raise NotImplementedError

    def predict(self, x: torch.Tensor, word_mask: torch.Tensor) -> list[list[str]]:
        """The column's value for each word ``1..n`` of each sentence."""
        raise NotImplementedError
