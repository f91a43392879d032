"""From-scratch word encoder: word + character (+ optional UPOS) embeddings fed to a deep BiLSTM.

This is the paper's "without pretrained models" setting and mirrors SuPar's ``biaffine-dep``
with ``--feat char`` (Dozat & Manning 2017 style):

* **words**: a trainable embedding over the training words seen at least ``min_freq`` times
  (lowercased by default); everything else maps to ``<unk>``; ROOT uses ``<root>``.
* **characters**: a character BiLSTM per word (SuPar's ``CharLSTM``): char embeddings of size
  ``char_dim`` run through a 1-layer BiLSTM with ``char_out // 2`` units per direction, and the
  final forward/backward states are concatenated into a ``char_out`` vector (the concatenation
  already has the requested size, so a projection is only added when ``char_out`` is odd).
  We keep the LSTM rather than a char CNN because it is what the SuPar baseline uses (so the
  comparison stays like for like) and, with the two speed measures below, it costs only a small
  fraction of the 3-layer word BiLSTM. Speed measures: each word is cut to its first
  ``max_chars`` (default 20, SuPar's ``fix_len``) characters -- over 99% of UD tokens are shorter,
  the longer ones are mostly URLs, numbers and long compounds whose prefix carries the signal --
  and the character LSTM is run once per *distinct* word type of the batch, not once per token.
  The case of characters is kept; unknown characters map to ``<unk>``; ROOT gets a dedicated
  one-character sequence made of the ``<root>`` character.
* **UPOS** (optional): an embedding of the gold/predicted UPOS tag, when ``upos_vocab`` is given.
* **dropout** (SuPar style when ``variational=True``): the embeddings of a token are dropped
  independently as whole vectors and the survivors rescaled ("independent dropout"); the input of
  every LSTM layer after the first and the encoder output use one dropout mask per sentence shared
  across time steps ("shared/variational dropout"). With ``variational=False`` plain element-wise
  dropout is used in the same places. ``out_dropout`` (default = ``dropout``) is SuPar's
  ``encoder_dropout``; set it to 0 if the scoring head applies its own input dropout.

Sequences are packed, so padding never influences the vectors of real words: a sentence encodes to
the same vectors alone or inside a padded batch (eval mode, up to float rounding).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from spandep.data.sentence import Sentence
from spandep.encoders.base import WordEncoder
from spandep.encoders.chars import SPECIALS, UNK_ID, CharLSTM, char_ids, char_vectors, char_vocabulary, pad_chars

PAD, UNK, ROOT = SPECIALS
PAD_ID, ROOT_ID = 0, 2  # UNK_ID = 1 (encoders.chars): words and characters share the specials


def _with_specials(vocab: Iterable[str], specials: tuple[str, ...]) -> list[str]:
    """``specials`` first (in that order), then the other entries of ``vocab`` without duplicates."""
    out = list(specials)
    seen = set(specials)
    for item in vocab:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


class IndependentDropout(nn.Module):
    """Drop whole embedding vectors per token, independently for each input, rescaling survivors.

    For a token, if k of the n inputs survive they are scaled by n / k (SuPar's ``IndependentDropout``),
    so a token rarely loses all of its information at once.
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, *items: torch.Tensor) -> list[torch.Tensor]:
        if not self.training or self.p <= 0:
            return list(items)
        masks = [x.new_empty(x.shape[:2]).bernoulli_(1 - self.p) for x in items]  # (batch, n_words) each
        total = torch.stack(masks).sum(0)  # (batch, n_words)
        scale = len(items) / total.clamp(min=1)  # (batch, n_words)
        return [x * (m * scale).unsqueeze(-1) for x, m in zip(items, masks)]  # (batch, n_words, dim) each


def shared_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout with one mask per sequence shared over time steps; ``x`` is ``(batch, time, dim)``."""
    if not training or p <= 0:
        return x
    mask = x.new_empty(x.shape[0], 1, x.shape[2]).bernoulli_(1 - p) / (1 - p)  # (batch, 1, dim)
    return x * mask  # (batch, time, dim)


class BiLSTMEncoder(WordEncoder):
    """Word + char (+ UPOS) embeddings -> ``layers``-deep BiLSTM; ``out_dim = 2 * hidden``."""

    name = "bilstm"
    config_defaults = {
        "word_dim": 100,
        "char_dim": 50,
        "char_out": 100,
        "hidden": 400,
        "layers": 3,
        "dropout": 0.1,
        "use_upos": False,
        "upos_dim": 100,
        "min_freq": 2,
    }

    def __init__(
        self,
        word_vocab: list[str],
        char_vocab: list[str],
        word_dim: int = 100,
        char_dim: int = 50,
        char_out: int = 100,
        hidden: int = 400,
        layers: int = 3,
        dropout: float = 0.33,
        lowercase: bool = True,
        upos_vocab: list[str] | None = None,
        upos_dim: int = 100,
        max_chars: int = 20,
        out_dropout: float | None = None,
        variational: bool = True,
    ) -> None:
        super().__init__()
        if list(word_vocab[:3]) != list(SPECIALS):
            raise ValueError(f"word_vocab must start with {list(SPECIALS)}, got {list(word_vocab[:3])}")
        if list(char_vocab[:2]) != [PAD, UNK]:
            raise ValueError(f"char_vocab must start with {[PAD, UNK]}, got {list(char_vocab[:2])}")
        if max_chars < 1 or layers < 1:
            raise ValueError("max_chars and layers must be >= 1")
        self.word_vocab = list(word_vocab)
        # the ROOT character is added if the given vocabulary lacks it (build_vocab puts it at 2)
        self.char_vocab = list(char_vocab) if ROOT in char_vocab else list(char_vocab) + [ROOT]
        self.upos_vocab = _with_specials(upos_vocab, SPECIALS) if upos_vocab is not None else None
        self.word_dim, self.char_dim, self.char_out = word_dim, char_dim, char_out
        self.hidden, self.layers = hidden, layers
        self.dropout = dropout
        self.out_dropout = dropout if out_dropout is None else out_dropout
        self.lowercase, self.upos_dim, self.max_chars = lowercase, upos_dim, max_chars
        self.variational = variational
        self.out_dim = 2 * hidden

        self.word_index = {w: i for i, w in enumerate(self.word_vocab)}
        self.char_index = {c: i for i, c in enumerate(self.char_vocab)}
        self.root_char_id = self.char_index[ROOT]
        self.upos_index = {t: i for i, t in enumerate(self.upos_vocab)} if self.upos_vocab else None

        self.word_embed = nn.Embedding(len(self.word_vocab), word_dim, padding_idx=PAD_ID)
        self.char_lstm = CharLSTM(len(self.char_vocab), char_dim, char_out)
        in_dim = word_dim + char_out
        self.upos_embed: nn.Embedding | None = None
        if self.upos_vocab is not None:
            self.upos_embed = nn.Embedding(len(self.upos_vocab), upos_dim, padding_idx=PAD_ID)
            in_dim += upos_dim
        self.embed_dropout = IndependentDropout(dropout) if variational else nn.Dropout(dropout)
        # single-layer BiLSTMs stacked by hand so a shared dropout mask can sit between layers
        self.lstms = nn.ModuleList(
            nn.LSTM(in_dim if i == 0 else 2 * hidden, hidden, batch_first=True, bidirectional=True)
            for i in range(layers)
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Orthogonal LSTM weights and zero biases (as SuPar); embeddings keep N(0, 1)."""
        for lstm in [*self.lstms, self.char_lstm.lstm]:
            for name, param in lstm.named_parameters():
                if "weight" in name:
                    for chunk in param.data.chunk(4, 0):  # one block per gate
                        nn.init.orthogonal_(chunk)
                else:
                    nn.init.zeros_(param)

    # ------------------------------------------------------------------ vocabularies
    @classmethod
    def build_vocab(
        cls, sentences_forms: Iterable[list[str]], min_freq: int = 2, lowercase: bool = True
    ) -> tuple[list[str], list[str]]:
        """Word vocabulary (lowercased, count >= ``min_freq``) and char vocabulary (all chars seen).

        Returns ``(word_vocab, char_vocab)``: ``[<pad>, <unk>, <root>, words by frequency...]`` and
        ``[<pad>, <unk>, <root>, chars by frequency...]``. Ties are broken alphabetically so the
        result is deterministic.
        """
        forms: Counter[str] = Counter()
        for sentence in sentences_forms:
            forms.update(sentence)
        words: Counter[str] = Counter()
        for form, n in forms.items():
            words[form.lower() if lowercase else form] += n
        word_list = sorted((w for w, n in words.items() if n >= min_freq), key=lambda w: (-words[w], w))
        return _with_specials(word_list, SPECIALS), char_vocabulary(forms)

    # ------------------------------------------------------------------ features
    def _word_id(self, form: str) -> int:
        idx = self.word_index.get(form.lower() if self.lowercase else form, UNK_ID)
        return idx if idx > ROOT_ID else UNK_ID  # a form spelled "<pad>"/"<root>" is just unknown

    def _upos_id(self, tag: str) -> int:
        assert self.upos_index is not None
        idx = self.upos_index.get(tag, UNK_ID)
        return idx if idx > ROOT_ID else UNK_ID

    def featurize(self, forms: list[str], upos: list[str] | None = None) -> dict[str, Any]:
        """Ids for ROOT + ``forms``: ``words`` ``(1+n,)``, ``chars`` ``(1+n, longest)`` (0-padded),
        and ``upos`` ``(1+n,)`` when the encoder embeds UPOS tags (then ``upos`` is required)."""
        words = [ROOT_ID] + [self._word_id(f) for f in forms]
        chars = char_ids(self.char_index, forms, self.root_char_id, self.max_chars)  # (1+n, longest)
        feats: dict[str, Any] = {"words": np.asarray(words, dtype=np.int64), "chars": chars, "n_words": len(forms)}
        if self.upos_index is not None:
            if upos is None:
                raise ValueError("this encoder embeds UPOS tags: featurize() needs upos")
            if len(upos) != len(forms):
                raise ValueError(f"{len(upos)} UPOS tags for {len(forms)} words")
            feats["upos"] = np.asarray(
                [ROOT_ID] + [self._upos_id(t) for t in upos], dtype=np.int64
            )
        return feats

    def collate(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        """Pad to ``words`` ``(batch, 1+max_words)``, ``chars`` ``(batch, 1+max_words, max_chars)``,
        ``word_mask`` ``(batch, 1+max_words)`` bool (True for ROOT and real words), ``upos`` if used."""
        n = max(len(f["words"]) for f in features)
        words = np.zeros((len(features), n), dtype=np.int64)  # (batch, 1+max_words)
        for b, f in enumerate(features):
            words[b, : len(f["words"])] = f["words"]
        batch = {
            "words": torch.from_numpy(words),  # (batch, 1+max_words)
            "chars": pad_chars([f["chars"] for f in features], n),  # (batch, 1+max_words, max_chars)
            "word_mask": torch.from_numpy(words != PAD_ID),  # (batch, 1+max_words)
        }
        if self.upos_index is not None:
            upos = np.zeros((len(features), n), dtype=np.int64)  # (batch, 1+max_words)
            for b, f in enumerate(features):
                upos[b, : len(f["upos"])] = f["upos"]
            batch["upos"] = torch.from_numpy(upos)  # (batch, 1+max_words)
        return batch

    # ------------------------------------------------------------------ forward
    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Return ``(batch, 1 + max_words, out_dim)``; padded positions are zero."""
        device = self.word_embed.weight.device
        words = batch["words"].to(device)  # (batch, 1+max_words)
        mask = batch["word_mask"].to(device)  # (batch, 1+max_words)
        chars = batch["chars"].to(device)  # (batch, 1+max_words, max_chars)
        total = words.shape[1]
        lens = mask.sum(-1).cpu()  # (batch,)

        embeds = [self.word_embed(words), char_vectors(self.char_lstm, chars, mask)]  # (batch, 1+max_words, dim) each
        if self.upos_embed is not None:
            if "upos" not in batch:
                raise ValueError("this encoder embeds UPOS tags: the batch needs 'upos'")
            embeds.append(self.upos_embed(batch["upos"].to(device)))  # (batch, 1+max_words, upos_dim)
        if self.variational:
            embeds = self.embed_dropout(*embeds)
            x = torch.cat(embeds, dim=-1)  # (batch, 1+max_words, in_dim)
        else:
            x = self.embed_dropout(torch.cat(embeds, dim=-1))  # (batch, 1+max_words, in_dim)

        for i, lstm in enumerate(self.lstms):
            if i > 0:
                x = self._drop(x, self.dropout)  # (batch, 1+max_words, 2*hidden)
            packed = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
            out, _ = lstm(packed)
            x, _ = pad_packed_sequence(out, batch_first=True, total_length=total)
            # x: (batch, 1+max_words, 2*hidden)
        return self._drop(x, self.out_dropout)  # (batch, 1+max_words, 2*hidden)

    def _drop(self, x: torch.Tensor, p: float) -> torch.Tensor:
        if self.variational:
            return shared_dropout(x, p, self.training)  # (batch, time, dim)
        return nn.functional.dropout(x, p, self.training)  # (batch, time, dim)

    # ------------------------------------------------------------------ config
    def export_config(self) -> dict[str, Any]:
        """All constructor settings and vocabularies, with ``"type": "bilstm"`` (JSON-serialisable)."""
        return {
            "type": self.name,
            "word_vocab": list(self.word_vocab),
            "char_vocab": list(self.char_vocab),
            "word_dim": self.word_dim,
            "char_dim": self.char_dim,
            "char_out": self.char_out,
            "hidden": self.hidden,
            "layers": self.layers,
            "dropout": self.dropout,
            "lowercase": self.lowercase,
            "upos_vocab": list(self.upos_vocab) if self.upos_vocab is not None else None,
            "upos_dim": self.upos_dim,
            "max_chars": self.max_chars,
            "out_dropout": self.out_dropout,
            "variational": self.variational,
        }

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """The shared settings plus word and character vocabularies of the training data (``min_freq``)."""
        config = super().config_from_data({k: v for k, v in settings.items() if k != "min_freq"}, train)
        config["word_vocab"], config["char_vocab"] = cls.build_vocab((s.forms for s in train), min_freq=settings["min_freq"])
        return config
