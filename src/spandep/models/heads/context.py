"""What an output head may read beside the parser's word vector (issue 45, docs/heads.md "Morphology heads"): the
word's characters and the sentence around it.

- ``chars = D``: a character BiLSTM over each word's form (``encoders.chars.CharLSTM``, ``CHAR_DIM``-dimensional
  character embeddings, the characters of the training forms; an unseen one is ``<unk>``), ``D`` dimensions per
  word, run once per distinct form of a batch. The word pieces of a multilingual encoder carry little of a word's
  inflection; the characters carry it (UDPipe 2 adds character embeddings to BERT's vectors for the same reason).
- ``context = H``: a one-layer BiLSTM of ``H`` units per direction over the sentence's words (their vector, casing,
  suffixes and characters), its output beside the word's own input: the agreement and government a word's case and
  gender follow from are in its neighbours.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from spandep.data.sentence import Sentence
from spandep.encoders.chars import UNK_ID, CharLSTM, char_vocabulary

CHAR_DIM = 64  # each character's embedding
MAX_CHARS = 30  # the first characters of a form that are read


def head_char_vocabulary(train: Sequence[Sentence]) -> list[str]:
    """The character vocabulary of a head reading characters: every character of the training forms."""
    return char_vocabulary(Counter(form for s in train for form in s.forms))


class WordChars(nn.Module):
    """A vector per word from its characters: ``(batch, 1 + n, dim)``, zero at ROOT and padding."""

    def __init__(self, vocab: Sequence[str], dim: int) -> None:
        super().__init__()
        self.index = {c: i for i, c in enumerate(vocab)}
        self.dim = dim
        self.lstm = CharLSTM(len(self.index), CHAR_DIM, dim)

    def forward(self, forms: Sequence[Sequence[str]], word_mask: torch.Tensor) -> torch.Tensor:
        distinct = sorted({f for words in forms for f in words})
        where = {f: i for i, f in enumerate(distinct)}
        width = max((min(len(f), MAX_CHARS) for f in distinct), default=1) or 1
        ids = torch.zeros(len(distinct), width, dtype=torch.long)  # (types, max_chars)
        for i, form in enumerate(distinct):
            row = [self.index.get(c, UNK_ID) for c in form[:MAX_CHARS]] or [UNK_ID]
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)  # (chars,)
        out = torch.zeros(*word_mask.shape, self.dim, device=word_mask.device)  # (batch, 1 + n, dim)
        if not distinct:
            return out
        vectors = self.lstm(ids.to(word_mask.device))  # (types, dim)
        rows = torch.tensor([[b, 1 + i] for b, words in enumerate(forms) for i in range(len(words))], dtype=torch.long)  # (words, 2)
        types = torch.tensor([where[f] for words in forms for f in words], dtype=torch.long)  # (words,)
        out[rows[:, 0], rows[:, 1]] = vectors[types.to(vectors.device)].to(out.dtype)  # (batch, 1 + n, dim); bfloat16 under autocast
        return out


class SentenceContext(nn.Module):
    """A BiLSTM over each sentence's words (ROOT included): ``(batch, 1 + n, width)`` → ``(batch, 1 + n, 2 · hidden)``,
    zero at padding."""

    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(width, hidden, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, word_mask: torch.Tensor) -> torch.Tensor:
        lengths = word_mask.sum(-1).clamp(min=1).cpu()  # (batch,)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        return pad_packed_sequence(out, batch_first=True, total_length=x.size(1))[0]  # (batch, 1 + n, 2 · hidden)
