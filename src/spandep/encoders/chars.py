"""Character vectors of words: a character BiLSTM over each word's characters, run once per distinct word in a batch.

The BiLSTM encoder sets them beside its word embeddings; the ``transformer_chars`` encoder beside a transformer's word
vectors (as UDPipe 2 adds character embeddings to BERT's). Character vocabularies start with ``<pad>`` (id 0) and
``<unk>`` (id 1); ROOT is a character of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

PAD_ID, UNK_ID = 0, 1
SPECIALS = ("<pad>", "<unk>", "<root>")  # ids 0, 1, 2 of every character vocabulary (the BiLSTM's word vocabulary too)


class CharLSTM(nn.Module):
    """Character BiLSTM: one vector per word from the final forward and backward states."""

    def __init__(self, n_chars: int, char_dim: int, char_out: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=PAD_ID)
        self.hidden = (char_out + 1) // 2
        self.lstm = nn.LSTM(char_dim, self.hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * self.hidden, char_out) if 2 * self.hidden != char_out else None

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """``chars`` ``(n, max_chars)`` padded with 0, every row non-empty -> ``(n, char_out)``."""
        lens = chars.ne(PAD_ID).sum(-1)  # (n,)
        emb = self.embed(chars)  # (n, max_chars, char_dim)
        packed = pack_padded_sequence(emb, lens.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)  # h: (2, n, hidden), already in the input order
        out = torch.cat([h[0], h[1]], dim=-1)  # (n, 2 * hidden)
        if self.proj is not None:
            out = self.proj(out)  # (n, char_out)
        return out


def chars_by_frequency(forms: Mapping[str, int]) -> list[str]:
    """Every character of ``forms`` (form: count), most frequent first, ties alphabetical (deterministic)."""
    counts: Counter[str] = Counter()
    for form, n in forms.items():
        for c in form:
            counts[c] += n
    return sorted(counts, key=lambda c: (-counts[c], c))


def char_vocabulary(forms: Mapping[str, int]) -> list[str]:
    """:data:`SPECIALS`, then the characters of ``forms`` (form: count) by :func:`chars_by_frequency`."""
    return [*SPECIALS, *(c for c in chars_by_frequency(forms) if c not in SPECIALS)]


def char_ids(index: Mapping[str, int], forms: Sequence[str], root_id: int, max_chars: int) -> np.ndarray:
    """ROOT and each form as character ids (the first ``max_chars``; an empty form is ``<unk>``), 0-padded:
    ``(1 + n, longest)``."""
    rows = [[root_id]] + [[index.get(c, UNK_ID) for c in form[:max_chars]] or [UNK_ID] for form in forms]
    out = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)  # (1 + n, longest)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def pad_chars(rows: Sequence[np.ndarray], n_words: int) -> torch.Tensor:
    """Sentences' :func:`char_ids` stacked into ``(batch, n_words, max_chars)`` (``n_words`` counts ROOT)."""
    width = max(r.shape[1] for r in rows)
    out = np.zeros((len(rows), n_words, width), dtype=np.int64)  # (batch, 1 + max_words, max_chars)
    for b, r in enumerate(rows):
        out[b, : r.shape[0], : r.shape[1]] = r
    return torch.from_numpy(out)


def char_vectors(lstm: CharLSTM, chars: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``lstm``'s vector of every word of ``chars`` ``(batch, 1 + max_words, max_chars)`` where ``mask``, zero
    elsewhere: ``(batch, 1 + max_words, char_out)``; each distinct character sequence is run once."""
    rows = chars[mask]  # (n_tokens, max_chars)
    types, inverse = torch.unique(rows, dim=0, return_inverse=True)  # (n_types, max_chars), (n_tokens,)
    type_vecs = lstm(types)  # (n_types, char_out)
    out = type_vecs.new_zeros(*mask.shape, type_vecs.shape[-1])  # (batch, 1 + max_words, char_out)
    out[mask] = type_vecs[inverse]  # (batch, 1 + max_words, char_out)
    return out
