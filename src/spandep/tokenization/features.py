"""Opt-in character features of the tokenizer's network beyond the character and its class (issue 47), for scripts
that write words without spaces between them:

- **hashed character n-grams**: for every character, the bigram and the trigram ending at it and starting at it
  (four strings; a string running past the text's edge is shorter, and is hashed as it is), each hashed with
  CRC-32 (stable across runs and machines) into one of ``buckets`` ids (1 .. buckets; 0 is padding); the network sums their
  embeddings, the standard lever of Chinese word segmentation;
- **a lexicon of training words**: for every character and every length bucket ``L`` of ``1 .. lengths`` (a word
  of ``lengths`` characters or more falls in the last bucket), three flags: a lexicon word of that length starts
  here, ends here, or goes on through here (neither its first nor its last character), as lexicon-augmented
  segmenters read a dictionary. The lexicon is the training file's tokens seen at least twice (a word seen once
  stands in for the words a test text has that training did not: with every training word in it, the network
  would learn to trust the lexicon fully), of at most :data:`LEXICON_WORD_CHARS` characters;
- **a dictionary of the language** (opt-in, beside the lexicon, with its own flags of the same shape): a word list
  from outside the treebank (``spandep train-tokenizer --dictionary``), which knows words that training never saw;
  it follows its own conventions, so the network learns how far to trust it, apart from the training words.

Both are columns after the character and class ids of :meth:`~.model.CharVocab.encode`, so every reader of those
arrays pads and batches them unchanged: ``4`` n-gram ids, then ``3 * lengths`` flags (the dictionary's ``3 * lengths``
after them).
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable

import numpy as np

__all__ = ["LEXICON_MIN_COUNT", "LEXICON_WORD_CHARS", "CharFeatures"]

LEXICON_MIN_COUNT = 2
LEXICON_WORD_CHARS = 32
_ROLES = ("2<", "2>", "3<", "3>")  # bigram ending / starting here, trigram ending / starting here


class CharFeatures:
    """The n-gram ids, lexicon flags and dictionary flags of every character of a text (module docstring);
    ``dictionary`` ``None``: no dictionary flags (as every tokenizer saved before them)."""

    def __init__(self, buckets: int, lengths: int, words: Iterable[str] = (), dictionary: Iterable[str] | None = None) -> None:
        self.buckets, self.lengths = buckets, lengths
        self.words = _word_list(words) if lengths else []
        self.dictionary = _word_list(dictionary) if lengths and dictionary is not None else None
        self._tables = [_by_length(self.words)] + ([_by_length(self.dictionary)] if self.dictionary is not None else [])
        self._ids: dict[str, int] = {}

    @classmethod
    def learn(cls, buckets: int, lengths: int, tokens: Iterable[str], dictionary: Iterable[str] | None = None) -> "CharFeatures":
        """Features whose lexicon holds the ``tokens`` seen at least :data:`LEXICON_MIN_COUNT` times."""
        counts = Counter(tokens) if lengths else Counter()
        return cls(buckets, lengths, (w for w, n in counts.items() if n >= LEXICON_MIN_COUNT), dictionary)

    @property
    def columns(self) -> int:
        """How many columns :meth:`encode` gives."""
        return (len(_ROLES) if self.buckets else 0) + 3 * self.lengths * len(self._tables)

    def _id(self, key: str) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = zlib.crc32(key.encode("utf-8")) % self.buckets + 1
        return found

    def ngrams(self, text: str) -> np.ndarray:
        """``(len(text), 4)`` int64 bucket ids of the n-grams of :data:`_ROLES` at each character."""
        ids = [
            (self._id("2<" + text[max(0, i - 1) : i + 1]), self._id("2>" + text[i : i + 2]),
             self._id("3<" + text[max(0, i - 2) : i + 1]), self._id("3>" + text[i : i + 3]))
            for i in range(len(text))
        ]
        return np.array(ids, dtype=np.int64).reshape(len(text), len(_ROLES))  # (n_chars, 4)

    def lexicon(self, text: str) -> np.ndarray:
        """``(len(text), 3 * lengths)`` int64 flags per word list (the lexicon's, then the dictionary's): starts,
        ends, goes on through, per length bucket."""
        parts = []
        for table in self._tables:
            flags = np.zeros((len(text), 3, self.lengths), dtype=np.int64)  # (n_chars, 3, lengths)
            for length, words in table.items():
                bucket = min(length, self.lengths) - 1
                for i in range(len(text) - length + 1):
                    if text[i : i + length] in words:
                        flags[i, 0, bucket] = 1
                        flags[i + length - 1, 1, bucket] = 1
                        flags[i + 1 : i + length - 1, 2, bucket] = 1
            parts.append(flags.reshape(len(text), 3 * self.lengths))  # (n_chars, 3 * lengths)
        return np.concatenate(parts, axis=1)  # (n_chars, 3 * lengths * word lists)

    def encode(self, text: str) -> np.ndarray:
        """``(len(text), columns)`` int64: the n-gram ids, then the lexicon flags."""
        parts = ([self.ngrams(text)] if self.buckets else []) + ([self.lexicon(text)] if self.lengths else [])
        return np.concatenate(parts, axis=1) if parts else np.zeros((len(text), 0), dtype=np.int64)  # (n_chars, columns)


def _word_list(words: Iterable[str]) -> list[str]:
    """The distinct words of at most :data:`LEXICON_WORD_CHARS` characters, sorted."""
    return sorted({w for w in words if 0 < len(w) <= LEXICON_WORD_CHARS})


def _by_length(words: list[str]) -> dict[int, set[str]]:
    """Word length → the words of that length (what :meth:`CharFeatures.lexicon` looks up)."""
    table: dict[int, set[str]] = {}
    for w in words:
        table.setdefault(len(w), set()).add(w)
    return table
