"""A morphological-features head: each word's whole FEATS bundle (``Number=Plur|Person=3``) is one class.

Bundles, not one classifier per feature: the choice was measured on EWT dev (docs/design.md, "Output heads").
A gold ``_`` in FEATS is a value (the word has no features), not an unknown: it is a class like any bundle.

Opt-in (issue 45, docs/heads.md "Morphology heads"; a config without these keys means what it always meant):
``upos_embed = D`` embeds the word's UPOS (gold in training, the UPOS head's at inference) beside its vector;
``per_feature = W`` adds one classifier per feature (``models/heads/features.py``) on the same hidden layer, its loss
times ``W`` added to the bundle's, decoded under the feature–UPOS pairs seen in training; ``joint = J`` chooses the
bundle on its log-probability plus J times its per-feature log-likelihood (0: the bundle classifier alone);
``min_count = N`` keeps that bundle where it was seen at least N times in training, the per-feature bundle elsewhere
(0: the bundle always).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import torch

from spandep.data.sentence import Sentence
from spandep.models.heads.base import IGNORE, ClassifierHead, HeadInput
from spandep.models.heads.features import FeatureInventory, PerFeature, combine
from spandep.models.treebanks import restrict

NO_FEATURES = "<none>"  # the class of a word whose FEATS is ``_``: kept apart from the "unknown" marker
UPOS = "upos"


class FeatsTagger(ClassifierHead):
    """Feature bundles as classes; optionally conditioned on the UPOS and helped by per-feature classifiers (module
    docstring). ``upos_tags``: the UPOS seen in training; ``counts``: each bundle's count in training (``tags``
    order); ``by_upos``: UPOS → the feature names seen with it."""

    name = "feats"
    column = "feats"
    config_defaults = {**ClassifierHead.config_defaults, "upos_embed": 0, "per_feature": 0.0, "min_count": 0, "joint": 0.0}

    def __init__(
        self, n_in: int, tags: Sequence[str], upos_embed: int = 0, per_feature: float = 0.0, min_count: int = 0, joint: float = 0.0,
        upos_tags: Sequence[str] = (), counts: Sequence[int] = (), by_upos: dict[str, list[str]] | None = None, **settings: Any,
    ) -> None:
        conditions = {UPOS: (list(upos_tags), upos_embed)} if upos_embed else None
        super().__init__(n_in, tags, conditions=conditions, **settings)
        extra = {"upos_embed": upos_embed, "upos_tags": list(upos_tags)} if upos_embed else {}
        self.per_feature = None
        if per_feature:
            bundles = [self.value(t, "") for t in self.tags]
            inventory = FeatureInventory(FeatureInventory.from_pairs(("", b) for b in bundles).values, by_upos or {})
            self.per_feature = PerFeature(self.out.in_features, inventory)
            self.class_rows = ()  # the per-feature classifiers' values come from the bundles too
            self.counts = dict(zip(bundles, counts))
            self.register_buffer("targets", torch.tensor([inventory.targets(b) for b in bundles], dtype=torch.long), persistent=False)  # (tags, features)
            extra |= {"per_feature": per_feature, "min_count": min_count, "joint": joint, "counts": list(counts), "by_upos": by_upos or {}}
        self.feature_weight, self.min_count, self.joint, self.upos_embed = per_feature, min_count, joint, upos_embed
        self.hparams.update(extra)

    @property
    def reads(self) -> tuple[str, ...]:
        """The UPOS column, for the embedding or the per-feature constraint; nothing otherwise."""
        return (UPOS,) if self.upos_embed or self.per_feature is not None else ()

    @classmethod
    def columns_read(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        return (UPOS,) if settings.get("upos_embed") or settings.get("per_feature") else ()

    @classmethod
    def gold_class(cls, form: str, value: str) -> str:
        return NO_FEATURES if value == "_" else value

    def value(self, tag: str, form: str) -> str:
        return "_" if tag == NO_FEATURES else tag

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence], first: Sequence[str] = ()) -> dict[str, Any]:
        """The bundles and, as the settings ask, the UPOS seen, each bundle's count and the feature–UPOS pairs."""
        config = super().config_from_data(settings, train, first)
        words = [w for s in train for w in s.words if w.upos != "_"]
        if settings["upos_embed"]:
            config["upos_tags"] = sorted({w.upos for w in words})
        if settings["per_feature"]:
            seen = Counter(cls.gold_class(w.form, w.feats) for s in train for w in s.words)
            config["counts"] = [seen[t] for t in config["tags"]]
            config["by_upos"] = FeatureInventory.from_pairs((w.upos, w.feats) for w in words).by_upos
        return config

    def loss(self, inputs: HeadInput, gold: torch.Tensor) -> torch.Tensor:
        """The bundle's cross-entropy, plus ``per_feature`` times the per-feature classifiers' mean one."""
        if self.per_feature is None:
            return super().loss(inputs, gold)
        x = self.represent(inputs)  # (batch, 1 + n, hidden or width)
        known = gold != IGNORE  # (batch, 1 + n)
        scores = self.out(x)  # (batch, 1 + n, tags)
        if not bool(known.any()):
            return scores.sum() * 0.0
        per_word = self.targets[gold.clamp(min=0)].masked_fill(~known.unsqueeze(-1), IGNORE)  # (batch, 1 + n, features)
        bundle = torch.nn.functional.cross_entropy(scores.flatten(0, 1), gold.flatten(), ignore_index=IGNORE)  # (,)
        return bundle + self.feature_weight * self.per_feature.loss(x, per_word)

    def predict(self, inputs: HeadInput, allowed: torch.Tensor | None = None) -> list[list[str]]:
        """The bundle classifier's bundles (of those ``allowed``); with per-feature classifiers, combined with theirs
        by the ``joint`` and ``min_count`` rules (module docstring)."""
        if self.per_feature is None or not (self.min_count or self.joint):
            return super().predict(inputs, allowed)
        x = self.represent(inputs)  # (batch, 1 + n, hidden or width)
        scores = restrict(self.out(x), allowed).log_softmax(-1)  # (batch, 1 + n, tags)
        if self.joint:
            scores = scores + self.joint * self.per_feature.bundle_scores(x, self.targets)  # (batch, 1 + n, tags)
        best = scores.argmax(-1).tolist()  # (batch, 1 + n)
        bundles = [[self.value(self.tags[i], "") for i in row[1 : len(forms) + 1]] for row, forms in zip(best, inputs.forms)]
        if not self.min_count:
            return bundles
        return combine(bundles, self.per_feature.decode(x, inputs.columns[UPOS]), self.counts, self.min_count)
