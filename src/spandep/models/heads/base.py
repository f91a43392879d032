"""The interface of an output head (a per-word predictor over the parser's word vectors) and the classifier every
head so far is: a class per word from a vocabulary of strings, with optional casing and suffix features.

The casing feature exists because the shipped encoder (all-MiniLM-L6-v2) is uncased: its vectors for ``Apple`` and
``apple`` are the same, so a head that must tell NNP from NN or keep a lemma's capital needs the form's casing from
elsewhere. :func:`word_shape` gives each word one of ``N_SHAPES`` casing classes; a head with ``casing = D``
embeds it in ``D`` dimensions beside the word vector. The suffix feature gives the characters a word piece hides
(``running`` is one piece; its lemma script cuts ``ning``): the lower-cased form's last 1 to ``SUFFIX_CHARS``
characters, each hashed into ``SUFFIX_BUCKETS`` buckets, their embeddings summed (``suffix = D`` dimensions).
docs/design.md, "Output heads", has the measurements.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import zlib

import torch
import torch.nn.functional as F
from torch import nn

from spandep.data.sentence import Sentence
from spandep.data.vocab import build_vocab, kept_first
from spandep.models.heads.context import SentenceContext, WordChars, head_char_vocabulary
from spandep.models.layers import MLP
from spandep.models.treebanks import restrict

IGNORE = -100  # gold id of words whose value is unknown ("_") or outside the head's classes: ignored by the loss
SHAPES = ("<pad>", "lower", "Title", "UPPER", "miXed", "uncased")  # casing classes; 0 pads ROOT and padding
N_SHAPES = len(SHAPES)
SUFFIX_CHARS = 4
SUFFIX_BUCKETS = 4096  # bucket 0 pads


def word_shape(form: str) -> int:
    """The casing class of a form (an index into ``SHAPES``): no cased letter, all lower, first upper and the rest
    lower, all upper (two letters or more), or mixed."""
    cased = [c for c in form if c.islower() or c.isupper()]
    if not cased:
        return 5
    if all(c.islower() for c in cased):
        return 1
    if cased[0].isupper() and all(c.islower() for c in cased[1:]):
        return 2
    return 3 if all(c.isupper() for c in cased) else 4


def word_suffixes(form: str) -> list[int]:
    """Hash buckets ``1..SUFFIX_BUCKETS - 1`` of the lower-cased form's last 1..``SUFFIX_CHARS`` characters (0 where
    the form is shorter); a stable hash, the same in every process."""
    low = form.lower()
    return [1 + zlib.crc32(f"{k}:{low[-k:]}".encode()) % (SUFFIX_BUCKETS - 1) if k <= len(low) else 0 for k in range(1, SUFFIX_CHARS + 1)]


@dataclass(frozen=True)
class HeadInput:
    """What a head reads for a batch: the word vectors, which positions are words (ROOT included), the forms of
    words ``1..n`` of each sentence and, from them, the words' casing classes and suffix buckets (0 at ROOT and
    padding); ``columns``: other heads' columns of words ``1..n`` (``{"upos": [[...], ...]}``) for a head conditioned
    on them (:attr:`ClassifierHead.reads`): the gold values in training, the predicted ones at inference."""

    vectors: torch.Tensor  # (batch, 1 + n, d)
    word_mask: torch.Tensor  # (batch, 1 + n)
    forms: Sequence[Sequence[str]]
    shapes: torch.Tensor  # (batch, 1 + n)
    suffixes: torch.Tensor  # (batch, 1 + n, SUFFIX_CHARS)
    columns: Mapping[str, Sequence[Sequence[str]]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, vectors: torch.Tensor, word_mask: torch.Tensor, forms: Sequence[Sequence[str]],
        columns: Mapping[str, Sequence[Sequence[str]]] | None = None,
    ) -> HeadInput:
        """The input of a batch of sentences with these forms (and these other columns)."""
        shapes = torch.zeros(word_mask.shape, dtype=torch.long)  # (batch, 1 + n)
        suffixes = torch.zeros(*word_mask.shape, SUFFIX_CHARS, dtype=torch.long)  # (batch, 1 + n, SUFFIX_CHARS)
        for b, words in enumerate(forms):
            shapes[b, 1 : len(words) + 1] = torch.tensor([word_shape(f) for f in words], dtype=torch.long)  # (n,)
            suffixes[b, 1 : len(words) + 1] = torch.tensor([word_suffixes(f) for f in words], dtype=torch.long).view(-1, SUFFIX_CHARS)  # (n, SUFFIX_CHARS)
        return cls(vectors, word_mask, forms, shapes.to(vectors.device), suffixes.to(vectors.device), dict(columns or {}))


class ColumnEmbedding(nn.Module):
    """An embedding of another column's value per word (``vocab``: the values seen in training; an unseen one, and
    ROOT and padding, share id 0)."""

    def __init__(self, vocab: Sequence[str], dim: int) -> None:
        super().__init__()
        self.index = {v: i + 1 for i, v in enumerate(vocab)}
        self.embed = nn.Embedding(len(self.index) + 1, dim)

    def forward(self, values: Sequence[Sequence[str]], word_mask: torch.Tensor) -> torch.Tensor:
        """The embeddings of ``values`` (words ``1..n`` of each sentence) at their positions → ``(batch, 1 + n, dim)``."""
        ids = torch.zeros(word_mask.shape, dtype=torch.long)  # (batch, 1 + n)
        for b, row in enumerate(values):
            ids[b, 1 : len(row) + 1] = torch.tensor([self.index.get(v, 0) for v in row], dtype=torch.long)  # (n,)
        return self.embed(ids.to(word_mask.device))  # (batch, 1 + n, dim)


class OutputHead(nn.Module):
    """Subclasses declare ``name`` (registry name and ``[heads.NAME]`` table), ``column`` (the CoNLL-U column,
    a :class:`~spandep.data.sentence.Token` attribute, that they fill) and ``config_defaults``, and implement the
    methods below. Position 0 of every tensor is ROOT and is never scored. ``weight`` scales the head's loss in the
    joint training loss."""

    name: ClassVar[str]
    column: ClassVar[str]
    config_defaults: ClassVar[dict[str, Any]] = {}
    weight: float = 1.0
    layer: int = 0  # a transformer layer whose output the head reads beside the word vectors (0: none; Parser.head_vectors)
    stored_apart: ClassVar[tuple[str, ...]] = ()  # its settings a model folder keeps compressed, apart from config.json (storage/model_io.py)
    class_rows: tuple[str, ...] = ()  # its tensors whose rows are its classes (class_names order) where no other weight depends on them (training/init.py)

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence], first: Sequence[str] = ()) -> dict[str, Any]:
        """Constructor arguments from the ``[heads.NAME]`` settings (defaults filled) and the training data; the
        classes of ``first`` the data has are numbered first, in its order (``data.vocab.kept_first``)."""
        raise NotImplementedError

    @classmethod
    def from_config(cls, n_in: int, config: dict[str, Any]) -> OutputHead:
        """Build over word vectors of width ``n_in`` from a config (``config_from_data`` or ``export_config``)."""
        return cls(n_in, **config)

    @classmethod
    def columns_read(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The other heads' columns a head with these ``[heads.NAME]`` settings is conditioned on (:attr:`reads`)."""
        return ()

    @classmethod
    def classes(cls, train: Sequence[Sentence]) -> set[str]:
        """The classes the sentences ``train`` have (one treebank's, for its mask: ``models/treebanks.py``)."""
        raise NotImplementedError

    @classmethod
    def class_names(cls, config: dict[str, Any]) -> list[str]:
        """The classes of a head built from ``config``, in id order."""
        raise NotImplementedError

    def export_config(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def reads(self) -> tuple[str, ...]:
        """The other heads' columns this head is conditioned on (given in ``HeadInput.columns``); none here."""
        return ()

    def gold_ids(self, sentence: Sentence) -> list[int]:
        """Gold class id of each word (``IGNORE`` where unknown)."""
        raise NotImplementedError

    def loss(self, inputs: HeadInput, gold: torch.Tensor) -> torch.Tensor:
        """Training loss from a batch's inputs and gold ids ``(batch, 1 + n)``."""
        raise NotImplementedError

    def predict(self, inputs: HeadInput, allowed: torch.Tensor | None = None) -> list[list[str]]:
        """The column's value for each word ``1..n`` of each sentence, from the classes ``allowed (classes,)``
        (``None``: all)."""
        raise NotImplementedError

    @classmethod
    def treebank_config(cls, config: dict[str, Any], trains: Mapping[str, Sequence[Sentence]]) -> dict[str, Any]:
        """The config of this head in a model of several treebanks, from its ``config`` over all of them and each
        treebank's training sentences (``trains``); by default the same."""
        return config

    def refine(
        self, values: list[list[str]], forms: Sequence[Sequence[str]], columns: dict[str, list[list[str]]], treebank: str | None = None,
    ) -> list[list[str]]:
        """A second look at this head's predicted ``values`` once every head has predicted (``columns``: each head's
        values by column name, this one's included; ``treebank``: the one parsed as, in a model of several); by
        default they stand."""
        return values


class ClassifierHead(OutputHead):
    """One class per word from ``tags`` (strings taken from the training data): dropout, the casing and suffix
    embeddings (``casing`` and ``suffix`` dimensions, 0 = none) and the character vector and sentence context
    (``chars``, ``context``: ``models/heads/context.py``) beside the word vector, an optional hidden layer
    (``hidden`` units, 0 = none) and a linear layer; cross-entropy against the gold class.

    Subclasses say which string is a word's class (:meth:`gold_class`, ``"_"`` = unknown) and how a class becomes the
    column's value for a form (:meth:`value`); both default to the column itself. ``conditions``: other columns
    whose value per word is embedded beside the word vector (``{column: (values seen in training, dimension)}``;
    :attr:`reads` names them; a subclass offers them as settings)."""

    config_defaults = {"dropout": 0.33, "weight": 1.0, "casing": 0, "suffix": 0, "hidden": 0, "chars": 0, "context": 0, "layer": 0}
    class_rows = ("out.weight", "out.bias")

    def __init__(
        self, n_in: int, tags: Sequence[str], dropout: float = 0.33, weight: float = 1.0, casing: int = 0, suffix: int = 0, hidden: int = 0,
        conditions: Mapping[str, tuple[Sequence[str], int]] | None = None, chars: int = 0, context: int = 0, char_vocab: Sequence[str] = (),
        layer: int = 0,
    ) -> None:
        super().__init__()
        self.tags = list(tags)
        self.index = {t: i for i, t in enumerate(self.tags)}
        self.weight = weight
        self.layer = layer  # n_in includes the layer's output (Parser.attach_heads)
        self.hparams: dict[str, Any] = {
            "tags": self.tags, "dropout": dropout, "weight": weight, "casing": casing, "suffix": suffix, "hidden": hidden,
        } | ({"layer": layer} if layer else {})
        self.dropout = nn.Dropout(dropout)
        self.shape_embed = nn.Embedding(N_SHAPES, casing) if casing else None
        self.suffix_embed = nn.EmbeddingBag(SUFFIX_BUCKETS, suffix, mode="sum", padding_idx=0) if suffix else None
        self.conditions = nn.ModuleDict({column: ColumnEmbedding(vocab, dim) for column, (vocab, dim) in (conditions or {}).items()})
        self.chars = WordChars(char_vocab, chars) if chars else None
        width = n_in + casing + suffix + chars + sum(dim for _, dim in (conditions or {}).values())
        self.context = SentenceContext(width, context) if context else None
        width += 2 * context
        if chars or context:
            self.hparams |= {"chars": chars, "context": context} | ({"char_vocab": list(char_vocab)} if chars else {})
        self.hidden = MLP(width, hidden, dropout) if hidden else None
        self.out = nn.Linear(hidden or width, len(self.tags))

    @classmethod
    def gold_class(cls, form: str, value: str) -> str:
        """A word's class from its form and its gold value in the column (``"_"``: unknown, ignored)."""
        return value

    def value(self, tag: str, form: str) -> str:
        """The column's value for ``form`` given its predicted class ``tag``."""
        return tag

    @classmethod
    def _known(cls, train: Sequence[Sentence]) -> Iterator[str]:
        """The class of every word of ``train`` whose class is known."""
        return (c for s in train for w in s.words if (c := cls.gold_class(w.form, getattr(w, cls.column))) != "_")

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence], first: Sequence[str] = ()) -> dict[str, Any]:
        """The classes are every known class of the training data; ``ValueError`` when it has none."""
        tags = kept_first(build_vocab(cls._known(train)), first)
        if not tags:
            raise ValueError(
                f"the training data has no {cls.column.upper()} column: leave out [heads.{cls.name}] "
                f"(or set {cls.name} = false under [heads])"
            )
        return {"tags": tags, **settings} | ({"char_vocab": head_char_vocabulary(train)} if settings.get("chars") else {})

    @classmethod
    def classes(cls, train: Sequence[Sentence]) -> set[str]:
        return set(cls._known(train))

    @classmethod
    def class_names(cls, config: dict[str, Any]) -> list[str]:
        return list(config["tags"])

    def export_config(self) -> dict[str, Any]:
        return dict(self.hparams)

    def gold_ids(self, sentence: Sentence) -> list[int]:
        return [self.index.get(self.gold_class(w.form, getattr(w, self.column)), IGNORE) for w in sentence.words]

    @property
    def reads(self) -> tuple[str, ...]:
        """The columns of :attr:`conditions`."""
        return tuple(self.conditions)

    def represent(self, inputs: HeadInput) -> torch.Tensor:
        """The vectors the output layer reads: word vector, casing, suffixes, characters and conditioning columns
        through dropout (then the sentence context beside them) and the hidden layer → ``(batch, 1 + n, hidden or
        width)``."""
        parts = [inputs.vectors]  # (batch, 1 + n, d)
        if self.shape_embed is not None:
            parts.append(self.shape_embed(inputs.shapes))  # (batch, 1 + n, casing)
        if self.suffix_embed is not None:
            flat = self.suffix_embed(inputs.suffixes.flatten(0, 1))  # (batch · (1 + n), suffix)
            parts.append(flat.view(*inputs.suffixes.shape[:2], -1))  # (batch, 1 + n, suffix)
        if self.chars is not None:
            parts.append(self.chars(inputs.forms, inputs.word_mask))  # (batch, 1 + n, chars)
        parts.extend(embed(inputs.columns[column], inputs.word_mask) for column, embed in self.conditions.items())  # each (batch, 1 + n, dim)
        x = self.dropout(torch.cat(parts, -1) if len(parts) > 1 else parts[0])  # (batch, 1 + n, width)
        if self.context is not None:
            x = torch.cat([x, self.dropout(self.context(x, inputs.word_mask))], -1)  # (batch, 1 + n, width + 2 · context)
        return self.hidden(x) if self.hidden is not None else x  # (batch, 1 + n, hidden or width)

    def forward(self, inputs: HeadInput) -> torch.Tensor:
        return self.out(self.represent(inputs))  # (batch, 1 + n, tags)

    def loss(self, inputs: HeadInput, gold: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over words with a known gold class; ``gold (batch, 1 + n)`` holds ``IGNORE`` elsewhere."""
        scores = self(inputs)  # (batch, 1 + n, tags)
        if not bool((gold != IGNORE).any()):
            return scores.sum() * 0.0
        return F.cross_entropy(scores.flatten(0, 1), gold.flatten(), ignore_index=IGNORE)

    def predict(self, inputs: HeadInput, allowed: torch.Tensor | None = None) -> list[list[str]]:
        """Best class (of those ``allowed``) of each word ``1..n`` of each sentence, as the column's value for its form."""
        best = restrict(self(inputs), allowed).argmax(-1).masked_fill(~inputs.word_mask, 0).tolist()  # (batch, 1 + n)
        return [[self.value(self.tags[i], form) for i, form in zip(row[1:], forms)] for row, forms in zip(best, inputs.forms)]
