"""A model trained on several treebanks at once: which treebanks, a learned embedding of each, and what each may
predict.

Each sentence's word vectors get its treebank's embedding (``dim`` dimensions, 0 = none) concatenated, so every
scorer and output head reads which treebank it parses. Labels and head classes are the union over the treebanks;
``allowed[part][treebank]`` lists the class ids of ``part`` (``labels``, or an output head's name) seen in that
treebank's training data, and a parse as that treebank scores only those (:func:`restrict`): a French parse never
gives a Chinese-only relation, and a treebank without XPOS gets no XPOS column. ``inference[treebank]`` holds the
inference settings chosen on that treebank's dev (``spandep tune --treebank``), put over the model's shared ones when
it parses as that treebank. docs/design.md, "Several treebanks".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch
from torch import nn

from spandep.data.sentence import Sentence
from spandep.options import InferenceOptions
from spandep.masking import mask_value

__all__ = ["LABELS", "Treebanks", "allowed_ids", "restrict"]

LABELS = "labels"  # the part of ``allowed`` that is the dependency labels; the others are output heads' names


def restrict(scores: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
    """``scores (..., classes)`` with the classes outside ``allowed (classes,)`` masked; unchanged for ``None``."""
    return scores if allowed is None else scores.masked_fill(~allowed.to(scores.device), mask_value(scores.dtype))  # (..., classes)


def allowed_ids(vocabulary: Sequence[str], seen: set[str]) -> list[int]:
    """The ids of the classes of ``vocabulary`` that are in ``seen``."""
    return [i for i, name in enumerate(vocabulary) if name in seen]


class Treebanks(nn.Module):
    """The treebanks of a model (``names``), the embedding of each (``dim``), and per part the class ids each
    treebank allows (``allowed``: ``{part: {treebank: [ids]}}``; ``sizes``: ``{part: number of classes}``), and the
    inference settings saved for some treebanks (``inference``: ``{treebank: {setting: value}}``)."""

    def __init__(
        self,
        names: Sequence[str],
        dim: int,
        allowed: Mapping[str, Mapping[str, Sequence[int]]],
        sizes: Mapping[str, int],
        inference: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        super().__init__()
        self.names = list(names)
        self.inference = {name: dict(values) for name, values in (inference or {}).items()}
        strangers = sorted(set(self.inference) - set(self.names))
        if strangers:
            raise ValueError(f"inference settings saved for {', '.join(strangers)}, not among this model's treebanks: {', '.join(self.names)}")
        self.dim = dim
        self.allowed = {part: {name: list(ids[name]) for name in self.names} for part, ids in allowed.items()}
        self.sizes = dict(sizes)
        self.embed = nn.Embedding(len(self.names), dim) if dim else None
        for part, ids in self.allowed.items():
            mask = torch.zeros(len(self.names), self.sizes[part], dtype=torch.bool)  # (treebanks, classes)
            for t, name in enumerate(self.names):
                mask[t, ids[name]] = True
            self.register_buffer(f"mask_{part}", mask, persistent=False)  # derived from the config, not stored

    @classmethod
    def config_from_data(
        cls, dim: int, trains: Mapping[str, Sequence[Sentence]], vocabularies: Mapping[str, Sequence[str]], seen: Mapping[str, Callable[[Sequence[Sentence]], set[str]]]
    ) -> dict[str, Any]:
        """The saved config from each treebank's training sentences (``trains``), the union vocabularies of each part
        (``vocabularies``) and, per part, a function from sentences to the classes they have (``seen``)."""
        allowed = {part: {name: allowed_ids(vocabularies[part], seen[part](train)) for name, train in trains.items()} for part in vocabularies}
        return {"names": list(trains), "dim": dim, "allowed": allowed, "sizes": {part: len(v) for part, v in vocabularies.items()}}

    def export_config(self) -> dict[str, Any]:
        config = {"names": self.names, "dim": self.dim, "allowed": self.allowed, "sizes": self.sizes}
        return {**config, "inference": self.inference} if self.inference else config

    def saved_settings(self, name: str, shared: InferenceOptions) -> InferenceOptions:
        """The model's ``shared`` settings with those saved for treebank ``name`` over them."""
        return replace(shared, **self.inference.get(name, {}))

    def named(self, name: str | None) -> str | None:
        """``name``, or for none the only treebank of a model of one (as ``spandep export --treebank`` cuts it)."""
        return self.names[0] if name is None and len(self.names) == 1 else name

    def index(self, name: str | None) -> int:
        """The id of treebank ``name`` (:meth:`named`); a ``ValueError`` naming the model's treebanks for none of
        several, or another."""
        listed = ", ".join(self.names)
        name = self.named(name)
        if name is None:
            raise ValueError(f"this model was trained on several treebanks: choose one with treebank= (spandep parse --treebank): {listed}")
        if name not in self.names:
            raise ValueError(f"treebank {name!r} is not one of this model's: {listed}")
        return self.names.index(name)

    def vectors(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Word vectors ``x (batch, 1 + n, d)`` with each sentence's treebank embedding (``ids (batch,)``) after them."""
        if self.embed is None:
            return x
        tb = self.embed(ids.to(x.device))  # (batch, dim)
        return torch.cat([x, tb.unsqueeze(1).expand(-1, x.size(1), -1).to(x.dtype)], -1)  # (batch, 1 + n, d + dim)

    def mask(self, part: str, name: str | None) -> torch.Tensor:
        """The classes of ``part`` that treebank ``name`` allows ``(classes,)``."""
        return getattr(self, f"mask_{part}")[self.index(name)]  # (classes,)
