"""The character-level network of a trained tokenizer: characters in, three probabilities per character out.

Each character is the sum of an embedding of the character itself (the training file's characters seen at least
``min_count`` times; others share one id) and of its class (its Unicode general category, or ``space`` for every
whitespace character), so an unseen character still looks like a letter, a digit or a punctuation mark; opt-in
(``ngram_buckets``, ``lexicon_lengths``), the sum also holds the embeddings of the hashed character n-grams around
it and a projection of its lexicon flags (:mod:`.features`); opt-in (``encoder``), a projection of the hidden state
of the base encoder's word piece that covers it (:mod:`.encoder_features`). A bidirectional LSTM reads the sequence
and a linear layer gives, for every character, the logits of

- ``token``: a token ends at this character;
- ``sentence``: a sentence ends at this character (read where a token ends);
- ``mwt``: the token ending here is a multiword token (read where a token ends).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from spandep.tokenization.features import CharFeatures

__all__ = ["HEADS", "CharTagger", "CharVocab", "NetConfig"]

HEADS = ("token", "sentence", "mwt")
PAD, UNKNOWN, SPACE = 0, 1, 2
CLASSES = ("<pad>", "space") + tuple(
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn".split()
)
_CLASS_ID = {name: i for i, name in enumerate(CLASSES)}


@dataclass(frozen=True)
class NetConfig:
    """Sizes of :class:`CharTagger`; ``ngram_buckets`` and ``lexicon_lengths`` 0, ``encoder`` empty: no such
    features (as every tokenizer saved before them). ``encoder`` names the base encoder whose first
    ``encoder_layers`` layers give the encoder features (:mod:`.encoder_features`); ``dictionary``: the lexicon
    flags are followed by a dictionary's (:mod:`.features`)."""

    embedding: int = 32
    hidden: int = 64
    layers: int = 2
    dropout: float = 0.2
    ngram_buckets: int = 0
    lexicon_lengths: int = 0
    encoder: str = ""
    encoder_layers: int = 0
    dictionary: bool = False

    @property
    def lexicon_columns(self) -> int:
        """How many lexicon (and dictionary) flag columns end each character's ids."""
        return 3 * self.lexicon_lengths * (2 if self.dictionary else 1)


class CharVocab:
    """Character → (character id, class id), cached per character, then the columns of its ``features``."""

    def __init__(self, chars: list[str], features: CharFeatures | None = None) -> None:
        self.chars = list(chars)
        self.features = features
        self._ids: dict[str, tuple[int, int]] = {}
        self._known = {c: i + 3 for i, c in enumerate(self.chars)}

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int, features: CharFeatures | None = None) -> "CharVocab":
        counts = Counter(c for text in texts for c in text if not c.isspace())
        return cls(sorted(c for c, n in counts.items() if n >= min_count), features)

    def __len__(self) -> int:
        return len(self.chars) + 3

    def _lookup(self, ch: str) -> tuple[int, int]:
        if ch.isspace():
            pair = (SPACE, _CLASS_ID["space"])
        else:
            pair = (self._known.get(ch, UNKNOWN), _CLASS_ID[unicodedata.category(ch)])
        self._ids[ch] = pair
        return pair

    def encode(self, text: str) -> np.ndarray:
        """``(len(text), 2 + features)`` int64: character id and class id of every character, then the columns of
        its features (:meth:`.features.CharFeatures.encode`)."""
        ids = self._ids
        pairs = [ids.get(c) or self._lookup(c) for c in text]
        out = np.array(pairs, dtype=np.int64).reshape(len(text), 2)  # (n_chars, 2)
        if self.features is None or not self.features.columns:
            return out
        return np.concatenate([out, self.features.encode(text)], axis=1)  # (n_chars, 2 + columns)


def _reverse_within(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row of ``x`` (batch, n_chars, dim) with its first ``lengths[row]`` positions in reverse order."""
    if bool((lengths == x.shape[1]).all()):
        return x.flip(1)  # (batch, n_chars, dim)
    steps = torch.arange(x.shape[1])  # (n_chars,)
    flipped = lengths[:, None] - 1 - steps[None, :]  # (batch, n_chars)
    index = torch.where(flipped >= 0, flipped, steps[None, :])  # (batch, n_chars)
    return x.gather(1, index[:, :, None].expand_as(x))  # (batch, n_chars, dim)


class BiLSTM(nn.Module):
    """A stacked bidirectional LSTM over right-padded rows without packing: the backward direction reads each row
    reversed within its length, so padding never reaches a real position (and training needs no packed sequences,
    whose backward pass costs quadratic time on the CPU)."""

    def __init__(self, size_in: int, hidden: int, layers: int, dropout: float) -> None:
        super().__init__()
        sizes = [size_in] + [2 * hidden] * (layers - 1)
        self.forward_layers = nn.ModuleList(nn.LSTM(n, hidden, batch_first=True) for n in sizes)
        self.backward_layers = nn.ModuleList(nn.LSTM(n, hidden, batch_first=True) for n in sizes)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``x`` (batch, n_chars, size_in) → (batch, n_chars, 2 * hidden)."""
        for k, (fwd, bwd) in enumerate(zip(self.forward_layers, self.backward_layers)):
            if k:
                x = self.dropout(x)
            ahead = fwd(x)[0]  # (batch, n_chars, hidden)
            behind = _reverse_within(bwd(_reverse_within(x, lengths))[0], lengths)  # (batch, n_chars, hidden)
            x = torch.cat([ahead, behind], dim=-1)  # (batch, n_chars, 2 * hidden)
        return x


class CharTagger(nn.Module):
    """Embeddings → BiLSTM → three logits per character (module docstring); ``encoder_width``: the hidden size of
    the ``config.encoder`` (its vectors come with one more column, the piece-start flag)."""

    def __init__(self, n_chars: int, config: NetConfig, encoder_width: int = 0) -> None:
        super().__init__()
        self.config = config
        self.chars = nn.Embedding(n_chars, config.embedding, padding_idx=PAD)
        self.classes = nn.Embedding(len(CLASSES), config.embedding, padding_idx=PAD)
        if config.ngram_buckets:
            self.ngrams = nn.Embedding(config.ngram_buckets + 1, config.embedding, padding_idx=PAD)
        if config.lexicon_lengths:
            self.lexicon = nn.Linear(config.lexicon_columns, config.embedding)
        if config.encoder:
            self.pieces = nn.Linear(encoder_width + 1, config.embedding)
        self.dropout = nn.Dropout(config.dropout)
        self.lstm = BiLSTM(config.embedding, config.hidden, config.layers, config.dropout)
        self.out = nn.Linear(2 * config.hidden, len(HEADS))

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor, vectors: torch.Tensor | None = None) -> torch.Tensor:
        """``ids`` (batch, n_chars, 2 + feature columns) right-padded with 0, ``lengths`` (batch,), with an
        ``encoder`` its ``vectors`` (batch, n_chars, encoder_width + 1) → logits (batch, n_chars, 3)."""
        x = self.chars(ids[..., 0]) + self.classes(ids[..., 1])  # (batch, n_chars, embedding)
        if self.config.ngram_buckets:
            x = x + self.ngrams(ids[..., 2:6]).sum(dim=2)  # (batch, n_chars, embedding)
        if self.config.lexicon_lengths:
            x = x + self.lexicon(ids[..., -self.config.lexicon_columns :].float())  # (batch, n_chars, embedding)
        if self.config.encoder:
            x = x + self.pieces(vectors)  # (batch, n_chars, embedding)
        x = self.dropout(x)  # (batch, n_chars, embedding)
        return self.out(self.dropout(self.lstm(x, lengths)))  # (batch, n_chars, 3)

    def settings(self) -> dict[str, float | int]:
        return asdict(self.config)
