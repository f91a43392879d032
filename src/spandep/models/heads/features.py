"""Per-feature morphology beside the whole-bundle FEATS classifier (issue 45): one classifier per feature name
(its values seen in training, and "absent"), decoded under the feature–UPOS pairs seen in training, and the rule
that chooses between its bundle and the bundle classifier's.

* **Inventory** (:class:`FeatureInventory`): every feature name of the training bundles with its values (class 0 of
  each is :data:`ABSENT`), and for each UPOS the names seen with it in training.
* **Constrained decoding** (:meth:`PerFeature.decode`): each feature's best class, except that a feature never seen
  with the word's UPOS is absent; the bundle is the present features in CoNLL-U order (names sorted without regard
  to case). Every bundle it can give is a combination of seen pairs, also one no training word had.
* **Combination**: the bundle classifier's best bundle, its log-probability plus ``joint`` times the per-feature
  log-likelihood of each bundle (:meth:`PerFeature.bundle_scores`; 0: the bundle classifier alone), kept where
  that bundle was seen at least ``min_count`` times in training, the per-feature bundle elsewhere (:func:`combine`;
  ``min_count = 0``: always the bundle). docs/heads.md, "Morphology heads".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from spandep.models.heads.base import IGNORE

ABSENT = "<absent>"  # class 0 of every feature: the word does not have it


def split_bundle(bundle: str) -> dict[str, str]:
    """``Case=Nom|Number=Sing`` → ``{"Case": "Nom", "Number": "Sing"}``; ``_`` (no features) → ``{}``."""
    return {} if bundle == "_" else dict(pair.split("=", 1) for pair in bundle.split("|") if "=" in pair)


def join_bundle(features: Mapping[str, str]) -> str:
    """The CoNLL-U bundle of ``features`` (names sorted without regard to case, as UD orders them); ``_`` if none."""
    return "|".join(f"{name}={features[name]}" for name in sorted(features, key=str.lower)) or "_"


@dataclass(frozen=True)
class FeatureInventory:
    """``values``: feature name → its classes (:data:`ABSENT` first, then the values seen in training, sorted);
    ``by_upos``: UPOS → the feature names seen with it in training."""

    values: dict[str, list[str]]
    by_upos: dict[str, list[str]]

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]]) -> FeatureInventory:
        """The inventory of ``(UPOS, FEATS bundle)`` pairs (training words)."""
        values: dict[str, set[str]] = {}
        by_upos: dict[str, set[str]] = {}
        for upos, bundle in pairs:
            for name, value in split_bundle(bundle).items():
                values.setdefault(name, set()).add(value)
                by_upos.setdefault(upos, set()).add(name)
        return cls({n: [ABSENT, *sorted(v)] for n, v in sorted(values.items())}, {u: sorted(n) for u, n in sorted(by_upos.items())})

    @property
    def names(self) -> list[str]:
        return list(self.values)

    def targets(self, bundle: str) -> list[int]:
        """The class id of each feature (:attr:`names` order) in ``bundle``; ``IGNORE`` for a value not in the
        inventory (a bundle outside training: the feature is then not trained on that word)."""
        given = split_bundle(bundle)
        return [self.values[n].index(v) if (v := given.get(n, ABSENT)) in self.values[n] else IGNORE for n in self.names]

    def allowed(self, upos: str) -> list[bool]:
        """Which features (:attr:`names` order) a word of ``upos`` may have: those seen with it in training."""
        seen = set(self.by_upos.get(upos, ()))
        return [n in seen for n in self.names]


class PerFeature(nn.Module):
    """One linear classifier per feature of ``inventory`` over ``n_in``-wide vectors (one layer, its outputs split
    by feature)."""

    def __init__(self, n_in: int, inventory: FeatureInventory) -> None:
        super().__init__()
        self.inventory = inventory
        self.sizes = [len(v) for v in inventory.values.values()]
        self.out = nn.Linear(n_in, sum(self.sizes))

    def scores(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Each feature's class scores from vectors ``(batch, 1 + n, n_in)``: a list of ``(batch, 1 + n, values)``."""
        return list(self.out(x).split(self.sizes, dim=-1))  # each (batch, 1 + n, values of the feature)

    def loss(self, x: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """The mean over features of each one's cross-entropy; ``gold (batch, 1 + n, features)`` holds ``IGNORE``
        where a word's class is unknown."""
        losses = [
            F.cross_entropy(s.flatten(0, 1), gold[..., f].flatten(), ignore_index=IGNORE)  # (,)
            for f, s in enumerate(self.scores(x)) if bool((gold[..., f] != IGNORE).any())
        ]
        return torch.stack(losses).mean() if losses else x.sum() * 0.0

    def bundle_scores(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The per-feature log-likelihood of each bundle, ``Σ_f log p_f(its value of f)``, from vectors
        ``(batch, 1 + n, n_in)`` and the bundles' classes ``targets (bundles, features)`` → ``(batch, 1 + n, bundles)``."""
        total = torch.zeros(*x.shape[:-1], targets.size(0), dtype=x.dtype, device=x.device)  # (batch, 1 + n, bundles)
        for f, s in enumerate(self.scores(x)):
            total = total + s.log_softmax(-1)[..., targets[:, f]]  # (batch, 1 + n, bundles)
        return total

    def decode(self, x: torch.Tensor, upos: Sequence[Sequence[str]]) -> list[list[str]]:
        """The bundle of each word ``1..n`` of each sentence (``upos``: each word's UPOS, predicted at inference):
        each feature's best class, absent where the feature was never seen with the word's UPOS."""
        if not self.sizes:  # training had no features
            return [["_"] * len(tags) for tags in upos]
        best = torch.stack([s.argmax(-1) for s in self.scores(x)], -1).tolist()  # (batch, 1 + n, features)
        names = self.inventory.names
        out = []
        for row, tags in zip(best, upos):
            words = []
            for ids, tag in zip(row[1:], tags):
                chosen = {n: self.inventory.values[n][i] for n, i, ok in zip(names, ids, self.inventory.allowed(tag)) if ok and i}
                words.append(join_bundle(chosen))
            out.append(words)
        return out


def combine(bundles: Sequence[Sequence[str]], per_feature: Sequence[Sequence[str]], counts: Mapping[str, int], min_count: int) -> list[list[str]]:
    """Per word: the bundle classifier's ``bundles`` where that bundle was seen at least ``min_count`` times in
    training (``counts``), else the per-feature bundle."""
    return [[b if counts.get(b, 0) >= min_count else p for b, p in zip(row_b, row_p)] for row_b, row_p in zip(bundles, per_feature)]
