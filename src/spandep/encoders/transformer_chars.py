"""A transformer's word vectors with a character BiLSTM's vector of each word beside them (UDPipe 2 sets character
embeddings beside BERT's): the word's spelling reaches the parser and every head whole, however the transformer's
vocabulary splits it. ``[encoder] type = "transformer_chars"`` takes every ``transformer`` setting plus
``char_dim``, ``char_out`` and ``max_chars``; the character vocabulary is the training data's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import torch

from spandep.data.sentence import Sentence
from spandep.encoders.chars import SPECIALS, CharLSTM, char_ids, char_vectors, char_vocabulary, pad_chars
from spandep.encoders.transformer import TransformerEncoder


class CharTransformerEncoder(TransformerEncoder):
    """:class:`TransformerEncoder` vectors ``(…, hidden)`` concatenated with character vectors ``(…, char_out)``."""

    name = "transformer_chars"
    config_defaults = {**TransformerEncoder.config_defaults, "char_dim": 50, "char_out": 100, "max_chars": 20}

    def __init__(self, model: str, char_vocab: Sequence[str], char_dim: int = 50, char_out: int = 100, max_chars: int = 20, **settings: Any) -> None:
        super().__init__(model, **settings)
        if tuple(char_vocab[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"char_vocab must start with {list(SPECIALS)}, got {list(char_vocab[:3])}")
        self.char_vocab = list(char_vocab)
        self.char_index = {c: i for i, c in enumerate(self.char_vocab)}
        self.char_dim, self.char_out, self.max_chars = char_dim, char_out, max_chars
        self.char_lstm = CharLSTM(len(self.char_vocab), char_dim, char_out)
        self.out_dim += char_out

    def featurize(self, forms: list[str], upos: list[str] | None = None) -> dict[str, Any]:
        feats = super().featurize(forms, upos)
        feats["chars"] = char_ids(self.char_index, forms, self.char_index["<root>"], self.max_chars)  # (1 + n, longest)
        return feats

    def collate(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = super().collate(features)
        batch["chars"] = pad_chars([f["chars"] for f in features], batch["word_mask"].size(1))  # (batch, 1 + words, max_chars)
        return batch

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        words = super().forward(batch)  # (batch, 1 + words, hidden [+ upos_dim] + tap_dim)
        mask = batch["word_mask"].to(words.device)  # (batch, 1 + words)
        chars = char_vectors(self.char_lstm, batch["chars"].to(words.device), mask)  # (batch, 1 + words, char_out)
        cut = self.out_dim - self.char_out  # the tapped layers stay last
        return torch.cat([words[..., :cut], self.dropout(chars), words[..., cut:]], dim=-1)  # (batch, 1 + words, out_dim + tap_dim)

    def export_config(self) -> dict[str, Any]:
        return {**super().export_config(), "char_vocab": self.char_vocab, "char_dim": self.char_dim, "char_out": self.char_out, "max_chars": self.max_chars}

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """The transformer's config plus the training data's characters, most frequent first."""
        config = super().config_from_data(settings, train)
        config["char_vocab"] = char_vocabulary(Counter(f for s in train for f in s.forms))
        return config
