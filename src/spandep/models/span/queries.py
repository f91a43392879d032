"""MRC queries for span linking (Gan et al., 2022, §3.4), spliced from cached word pieces.

A query marks a subtree span ``(root i, start s, end e)`` of a sentence with four added special tokens::

    w1 .. w_{s-1} <sos> w_s .. w_{i-1} <sor> w_i <eor> w_{i+1} .. w_e <eos> w_{e+1} .. w_n

ROOT's own span ``(0, 1, n)`` is marked ``<sos> <sor> <eor> w1 .. wn <eos>`` (ROOT sits before word 1, inside its
span, and has no pieces of its own).

Each sentence is tokenised **once** (``QueryBuilder.sentence_pieces``); every query is then built with numpy by
inserting the four marker ids into the cached piece array; no tokenizer call happens per query.

Formats:

* ``paired`` (the paper's): ``[CLS] marked-sentence [SEP] sentence [SEP]``, using the tokenizer's own pair template
  (for RoBERTa-like tokenizers ``<s> A </s></s> B </s>``). The first special token after the marked part (``[SEP]``)
  stands for ROOT as a candidate answer; answers are read in the plain context copy. Token types follow the
  tokenizer's template (BERT: 0 for ``[CLS]``, the marked part and the first ``[SEP]``, 1 for the context and the
  final ``[SEP]``; all 0 for tokenizers that do not use token types).
* ``inline`` (half the length): ``[CLS] marked-sentence [SEP]``; answers are read at the word positions of the marked
  copy itself and ROOT is the ``[CLS]`` position (0), the same position the word encoder uses for ROOT.

Positions returned per query (word index → sequence position, first piece of each word):

* ``context_word_pos (1 + n,)``: where answers are read; index 0 is ROOT.
* ``marker_pos (4,)``: positions of ``<sos> <sor> <eor> <eos>``.

UPOS ids aligned to pieces (optional): every piece carries its word's tag id ``UPOS_OFFSET + index in upos_vocab``;
markers carry ``UPOS_MARKER``; special tokens, padding and unknown tags carry ``UPOS_NONE``. An embedding for them
needs ``QueryBuilder.n_upos`` rows.

A query longer than ``max_len`` raises ``QueryTooLongError`` (all queries of a sentence have the same length, so
``QueryBuilder.query_length``/``fits`` let a caller route the sentence to a counted fallback up front). Nothing is
ever truncated.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = [
    "MARKERS",
    "QUERY_FORMATS",
    "UPOS_MARKER",
    "UPOS_NONE",
    "UPOS_OFFSET",
    "Query",
    "QueryBuilder",
    "QueryTooLongError",
    "SentencePieces",
    "add_marker_tokens",
]

MARKERS: tuple[str, str, str, str] = ("<sos>", "<sor>", "<eor>", "<eos>")
QUERY_FORMATS = ("paired", "inline")
UPOS_NONE = 0
UPOS_MARKER = 1
UPOS_OFFSET = 2

_EXTRA_KEYS = ("additional_special_tokens", "extra_special_tokens")


class QueryTooLongError(ValueError):
    """A query would exceed the encoder's length limit; the caller must take (and count) a fallback path."""

    def __init__(self, length: int, max_len: int) -> None:
        self.length = length
        self.max_len = max_len
        super().__init__(f"query of {length} pieces exceeds the limit of {max_len}")

    def __reduce__(self):  # picklable with the 2-argument constructor (multiprocessing data loaders)
        return (type(self), (self.length, self.max_len))


# ----------------------------------------------------------------------------------------- marker tokens
def _named_special_tokens(tokenizer: Any) -> set[str]:
    """The tokenizer's named special tokens (``[CLS]``, ``</s>``, ...), not the extra/additional ones."""
    named: set[str] = set()
    for key, value in tokenizer.special_tokens_map.items():
        if key in _EXTRA_KEYS:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            named.add(str(v))
    return named


def _marker_names(marker: str) -> tuple[str, str]:
    """The preferred name and a namespaced alternative used when the preferred one is already taken."""
    return marker, f"<spandep_{marker[1:-1]}>"


def add_marker_tokens(tokenizer: Any) -> dict[str, int]:
    """Add ``<sos> <sor> <eor> <eos>`` as extra special tokens (idempotent) and return ``{marker: id}``.

    A name that is already a named special token (e.g. a tokenizer whose EOS is ``<eos>``) or an ordinary vocabulary
    entry is replaced by ``<spandep_sos>`` etc., so the four ids are always new and distinct from every existing
    special token. Calling again (or on a tokenizer saved after the call) finds the same tokens and adds nothing.
    The model never grows its word-piece matrix for them: the linker embeds the markers itself (``faithful.py``).
    """
    named = _named_special_tokens(tokenizer)
    added = tokenizer.get_added_vocab()  # str -> id, tokens added on top of the base vocabulary
    vocab = tokenizer.get_vocab()
    chosen: dict[str, str] = {}
    for marker in MARKERS:
        names = _marker_names(marker)
        reuse = [name for name in names if name in added and name not in named]
        if reuse:
            chosen[marker] = reuse[0]
            continue
        free = [name for name in names if name not in vocab and name not in named]
        if not free:
            raise ValueError(f"no free name for the marker {marker}: {names} are all taken")
        chosen[marker] = free[0]
    new = [name for name in chosen.values() if name not in added]
    if new:
        if "replace_extra_special_tokens" in inspect.signature(tokenizer.add_special_tokens).parameters:
            tokenizer.add_special_tokens({"extra_special_tokens": new}, replace_extra_special_tokens=False)
        else:  # transformers 4.x
            tokenizer.add_special_tokens({"additional_special_tokens": new}, replace_additional_special_tokens=False)
    ids = {marker: int(tokenizer.convert_tokens_to_ids(name)) for marker, name in chosen.items()}
    if len(set(ids.values())) != len(MARKERS):
        raise ValueError(f"marker tokens are not distinct: {ids}")
    return ids


# ----------------------------------------------------------------------------------------- data types
@dataclass(frozen=True)
class SentencePieces:
    """One sentence tokenised once: its pieces and where each word's pieces lie."""

    pieces: np.ndarray  # (P,) int64 piece ids, no special tokens
    offsets: np.ndarray  # (n + 1,) int64; word w (1-based) owns pieces[offsets[w - 1] : offsets[w]]
    upos: np.ndarray | None = None  # (n,) int64 word tag ids (UPOS_OFFSET + index, or UPOS_NONE)

    @property
    def n_words(self) -> int:
        return len(self.offsets) - 1


@dataclass(frozen=True)
class Query:
    """One encoder input for the span-linking model (plain numpy; ``QueryBuilder.collate`` batches them)."""

    input_ids: np.ndarray  # (L,)
    token_type_ids: np.ndarray  # (L,)
    attention_mask: np.ndarray  # (L,) all ones
    context_word_pos: np.ndarray  # (1 + n,) answer positions; 0 = ROOT
    marker_pos: np.ndarray  # (4,) positions of <sos> <sor> <eor> <eos>
    span: tuple[int, int, int]  # (root, start, end) of the queried span
    upos: np.ndarray | None = None  # (L,) tag id per position

    @property
    def n_words(self) -> int:
        return len(self.context_word_pos) - 1

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass(frozen=True)
class _Template:
    """Special tokens around one or two sequences, with their token types."""

    prefix: np.ndarray
    prefix_types: np.ndarray
    middle: np.ndarray
    middle_types: np.ndarray
    suffix: np.ndarray
    suffix_types: np.ndarray
    type_a: int
    type_b: int


def _probe_template(tokenizer: Any, pair: bool, cls_id: int, sep_id: int) -> _Template:
    """Read the tokenizer's own special-token template from one tiny encoding; BERT layout when unreadable."""
    try:
        enc = tokenizer(["a"], ["b"], is_split_into_words=True) if pair else tokenizer(["a"], is_split_into_words=True)
        ids = list(enc["input_ids"])
        seq = enc.sequence_ids()
        types = list(enc.get("token_type_ids") or [0] * len(ids))
        a = [t for t, s in enumerate(seq) if s == 0]
        b = [t for t, s in enumerate(seq) if s == 1]
        if not a or (pair and not b):
            raise ValueError("unreadable template")
        last = b[-1] if pair else a[-1]
        middle = list(range(a[-1] + 1, b[0])) if pair else []
        if pair and not middle:
            raise ValueError("no separator between the two sequences")
        parts = (list(range(a[0])), middle, list(range(last + 1, len(ids))))
        if any(seq[t] is not None for part in parts for t in part):
            raise ValueError("unexpected template")
        arr = lambda idx, src: np.asarray([src[t] for t in idx], dtype=np.int64)  # noqa: E731
        return _Template(
            arr(parts[0], ids), arr(parts[0], types), arr(parts[1], ids), arr(parts[1], types),
            arr(parts[2], ids), arr(parts[2], types), int(types[a[0]]), int(types[b[0]]) if pair else int(types[a[0]]),
        )
    except Exception:  # slow tokenizers without sequence_ids, or no pair template: [CLS] A [SEP] (B [SEP])
        one = lambda v: np.asarray([v], dtype=np.int64)  # noqa: E731
        zero = np.zeros(1, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        if pair:
            return _Template(one(cls_id), zero, one(sep_id), zero, one(sep_id), zero + 1, 0, 1)
        return _Template(one(cls_id), zero, empty, empty, one(sep_id), zero, 0, 0)


# ----------------------------------------------------------------------------------------- builder
class QueryBuilder:
    """Builds MRC queries by splicing marker ids into cached piece arrays.

    ``tokenizer`` gets the marker tokens added (idempotent; the linker embeds them itself).
    ``fmt`` is ``"paired"`` or ``"inline"``; ``max_len`` the encoder's limit in pieces (special tokens included);
    ``upos_vocab`` the tag strings to align to pieces (``None``: no tags).
    """

    def __init__(self, tokenizer: Any, fmt: str = "paired", max_len: int = 512, upos_vocab: Sequence[str] | None = None) -> None:
        if fmt not in QUERY_FORMATS:
            raise ValueError(f"query format must be one of {QUERY_FORMATS}, not {fmt!r}")
        self.tokenizer = tokenizer
        self.fmt = fmt
        self.max_len = max_len
        self.markers = add_marker_tokens(tokenizer)
        self.marker_ids = np.asarray([self.markers[m] for m in MARKERS], dtype=np.int64)  # (4,)
        self._marker_set = frozenset(int(i) for i in self.marker_ids)
        cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
        sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id or 0
        self.unk_id = tokenizer.unk_token_id if tokenizer.unk_token_id is not None else self.pad_id
        self.template = _probe_template(tokenizer, fmt == "paired", cls_id, sep_id)
        self.upos_vocab = list(upos_vocab) if upos_vocab is not None else None
        self._upos_index = {t: UPOS_OFFSET + k for k, t in enumerate(self.upos_vocab or [])}

    @property
    def n_upos(self) -> int:
        """Rows needed by a tag embedding over ``upos`` ids (none, marker, then the vocabulary)."""
        return UPOS_OFFSET + len(self.upos_vocab or [])

    # ------------------------------------------------------------------------------------- sentences
    def sentence_pieces(self, forms: Sequence[str], upos: Sequence[str] | None = None) -> SentencePieces:
        """Tokenise one sentence (once; cache the result). Empty words get ``[UNK]``; a word whose pieces would
        contain a marker id (the literal text ``<sos>``) is re-tokenised character by character instead."""
        if not forms:
            raise ValueError("a sentence needs at least one word")
        enc = self.tokenizer(list(forms), is_split_into_words=True, add_special_tokens=False)
        per_word: list[list[int]] = [[] for _ in forms]
        for piece, owner in zip(enc["input_ids"], enc.word_ids()):
            if owner is not None:
                per_word[owner].append(int(piece))
        for w, ids in enumerate(per_word):
            if self._marker_set.intersection(ids):
                chars = [c for c in forms[w] if not c.isspace()]
                ids = self.tokenizer(chars, is_split_into_words=True, add_special_tokens=False)["input_ids"] if chars else []
                per_word[w] = [int(p) for p in ids]
            if not per_word[w]:
                per_word[w] = [self.unk_id]
        counts = np.asarray([len(ids) for ids in per_word], dtype=np.int64)  # (n,)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)  # (n + 1,)
        pieces = np.asarray([p for ids in per_word for p in ids], dtype=np.int64)  # (P,)
        tags = None
        if self.upos_vocab is not None:
            if upos is not None and len(upos) != len(forms):
                raise ValueError(f"{len(upos)} tags for {len(forms)} words")
            given = list(upos) if upos is not None else [""] * len(forms)
            tags = np.asarray([self._upos_index.get(t, UPOS_NONE) for t in given], dtype=np.int64)  # (n,)
        return SentencePieces(pieces, offsets, tags)

    def query_length(self, cached: SentencePieces) -> int:
        """Length in pieces of every query of this sentence (the same for all spans)."""
        t = self.template
        marked = len(cached.pieces) + len(MARKERS)
        length = len(t.prefix) + marked + len(t.suffix)
        if self.fmt == "paired":
            length += len(t.middle) + len(cached.pieces)
        return length

    def fits(self, cached: SentencePieces) -> bool:
        """Whether this sentence's queries fit within ``max_len``."""
        return self.query_length(cached) <= self.max_len

    # ------------------------------------------------------------------------------------- queries
    def build(self, cached: SentencePieces, root: int, start: int, end: int) -> Query:
        """The query for span ``(root, start, end)`` (1-based words; ROOT's span is ``(0, 1, n)``).

        Raises ``QueryTooLongError`` when the query exceeds ``max_len``, ``ValueError`` for an invalid span.
        """
        n = cached.n_words
        if root == 0:
            if (start, end) != (1, n):
                raise ValueError(f"ROOT's span is (0, 1, {n}), not (0, {start}, {end})")
        elif not 1 <= start <= root <= end <= n:
            raise ValueError(f"invalid span (root={root}, start={start}, end={end}) for {n} words")
        length = self.query_length(cached)
        if length > self.max_len:
            raise QueryTooLongError(length, self.max_len)
        t, o, pieces = self.template, cached.offsets, cached.pieces
        # insertion points in piece coordinates (non-decreasing); marker k lands at at[k] + k in the marked part
        if root == 0:
            at = np.asarray([0, 0, 0, len(pieces)], dtype=np.int64)  # (4,): <sos> <sor> <eor> w1 .. wn <eos>
        else:
            at = np.asarray([o[start - 1], o[root - 1], o[root], o[end]], dtype=np.int64)  # (4,)
        marked = np.insert(pieces, at, self.marker_ids)  # (P + 4,)
        first = o[:-1]  # (n,) first piece of each word in the plain sentence
        shift = np.searchsorted(at, first, side="right")  # (n,) markers inserted before each word's first piece
        q0 = len(t.prefix)
        marked_word_pos = np.concatenate([[0], q0 + first + shift]).astype(np.int64)  # (1 + n,) words in the marked part
        marker_pos = (q0 + at + np.arange(len(MARKERS))).astype(np.int64)  # (4,)
        tags = None
        if cached.upos is not None:
            piece_tags = np.repeat(cached.upos, np.diff(o))  # (P,)
            marked_tags = np.insert(piece_tags, at, UPOS_MARKER)  # (P + 4,)
        if self.fmt == "paired":
            root_pos = q0 + len(marked)  # the first separator stands for ROOT
            c0 = root_pos + len(t.middle)
            input_ids = np.concatenate([t.prefix, marked, t.middle, pieces, t.suffix])  # (L,)
            types = np.concatenate(
                [t.prefix_types, np.full(len(marked), t.type_a), t.middle_types, np.full(len(pieces), t.type_b), t.suffix_types]
            )  # (L,)
            context_word_pos = np.concatenate([[root_pos], c0 + first]).astype(np.int64)  # (1 + n,)
            if cached.upos is not None:
                tags = np.concatenate(
                    [np.full(q0, UPOS_NONE), marked_tags, np.full(len(t.middle), UPOS_NONE), piece_tags, np.full(len(t.suffix), UPOS_NONE)]
                )  # (L,)
        else:
            input_ids = np.concatenate([t.prefix, marked, t.suffix])  # (L,)
            types = np.concatenate([t.prefix_types, np.full(len(marked), t.type_a), t.suffix_types])  # (L,)
            context_word_pos = marked_word_pos  # ROOT = position 0 ([CLS])
            if cached.upos is not None:
                tags = np.concatenate([np.full(q0, UPOS_NONE), marked_tags, np.full(len(t.suffix), UPOS_NONE)])  # (L,)
        assert len(input_ids) == length
        return Query(
            input_ids=input_ids.astype(np.int64),
            token_type_ids=types.astype(np.int64),
            attention_mask=np.ones(length, dtype=np.int64),
            context_word_pos=context_word_pos,
            marker_pos=marker_pos,
            span=(root, start, end),
            upos=None if tags is None else tags.astype(np.int64),
        )

    def collate(self, queries: Sequence[Query]) -> dict[str, torch.Tensor]:
        """Pad queries into batch tensors.

        Keys: ``input_ids``, ``token_type_ids``, ``attention_mask`` ``(batch, L)``; ``context_word_pos``,
        ``(batch, 1 + n)`` padded with 0 and ``context_word_mask`` ``(batch, 1 + n)`` (true for ROOT
        and real words); ``marker_pos (batch, 4)``; ``span (batch, 3)`` = (root, start, end); ``n_words (batch,)``;
        ``upos (batch, L)`` when every query has tags.
        """
        if not queries:
            raise ValueError("no queries to collate")
        batch = len(queries)
        max_l = max(len(q) for q in queries)
        max_w = max(q.n_words for q in queries)
        input_ids = torch.full((batch, max_l), self.pad_id, dtype=torch.long)  # (batch, L)
        token_type_ids = torch.zeros(batch, max_l, dtype=torch.long)  # (batch, L)
        attention_mask = torch.zeros(batch, max_l, dtype=torch.long)  # (batch, L)
        context_word_pos = torch.zeros(batch, max_w + 1, dtype=torch.long)  # (batch, 1 + n)
        context_word_mask = torch.zeros(batch, max_w + 1, dtype=torch.bool)  # (batch, 1 + n)
        with_tags = all(q.upos is not None for q in queries)
        upos = torch.full((batch, max_l), UPOS_NONE, dtype=torch.long) if with_tags else None  # (batch, L)
        for b, q in enumerate(queries):
            length, words = len(q), q.n_words + 1
            input_ids[b, :length] = torch.from_numpy(q.input_ids)
            token_type_ids[b, :length] = torch.from_numpy(q.token_type_ids)
            attention_mask[b, :length] = 1
            context_word_pos[b, :words] = torch.from_numpy(q.context_word_pos)
            context_word_mask[b, :words] = True
            if upos is not None:
                upos[b, :length] = torch.from_numpy(q.upos)
        out = {
            "input_ids": input_ids,
            "token_type_ids": token_type_ids,
            "attention_mask": attention_mask,
            "context_word_pos": context_word_pos,
            "context_word_mask": context_word_mask,
            "marker_pos": torch.from_numpy(np.stack([q.marker_pos for q in queries])),  # (batch, 4)
            "span": torch.tensor([q.span for q in queries], dtype=torch.long),  # (batch, 3)
            "n_words": torch.tensor([q.n_words for q in queries], dtype=torch.long),  # (batch,)
        }
        if upos is not None:
            out["upos"] = upos
        return out
