"""Confidence of a parse: the probability of each word's chosen head and label, and a score per sentence.

Every parser type gives, for each word, a score for every possible head (:class:`ArcScores`, log space); their
softmax read at the chosen head is the raw head probability, which :class:`Calibration` maps through a logistic
curve fitted on dev (Platt scaling, saved with the model; the identity until then). docs/design.md ("Confidence")
says how each parser type scores heads and labels, and why the mapping.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from spandep.errors import ModelError

__all__ = ["KINDS", "ArcScores", "Calibration", "ChosenArcScores", "Confidence"]


@dataclass(frozen=True)
class ArcScores:
    """One sentence's ``head_scores (n, 1 + n)``: a log-space score for every head ``0..n`` of each word ``1..n``
    (``-inf`` where impossible); ``label_probs (n,)``: the probability of each word's chosen label at its head."""

    head_scores: np.ndarray
    label_probs: np.ndarray

    def head_probs(self, heads: np.ndarray) -> np.ndarray:
        """``(n,)`` the softmax of each word's head scores, read at ``heads (n,)`` (the raw head probabilities)."""
        top = self.head_scores.max(-1, keepdims=True)  # (n, 1)
        top = np.where(np.isfinite(top), top, 0.0)  # (n, 1): a row with no possible head gives 0
        weights = np.exp(self.head_scores - top)  # (n, 1 + n)
        chosen = weights[np.arange(len(heads)), heads]  # (n,)
        return chosen / np.maximum(weights.sum(-1), np.finfo(np.float64).tiny)  # (n,)

    def head_logits(self, heads: np.ndarray) -> np.ndarray:
        """``(n,)`` the logits of the raw head probabilities at ``heads (n,)``, in log space: the chosen head's score
        less the log-sum-exp of the others' (``+inf`` where no other head is possible, ``-inf`` for an impossible
        chosen head), so that probabilities too close to 1 for float64 keep distinct logits."""
        rows = np.arange(len(heads))  # (n,)
        chosen = self.head_scores[rows, heads]  # (n,)
        others = self.head_scores.copy()  # (n, 1 + n)
        others[rows, heads] = -np.inf
        top = others.max(-1, keepdims=True)  # (n, 1)
        top = np.where(np.isfinite(top), top, 0.0)  # (n, 1)
        with np.errstate(divide="ignore"):
            rest = np.log(np.exp(others - top).sum(-1)) + top[:, 0]  # (n,): -inf where no other head is possible
        with np.errstate(invalid="ignore"):
            return np.where(np.isneginf(chosen), -np.inf, chosen - rest)  # (n,)


@dataclass(frozen=True)
class ChosenArcScores:
    """The scores of a parse known at its chosen arcs only (a long sentence parsed in windows, whose n × (1 + n)
    head scores are never built): ``heads (n,)``, the raw ``probs (n,)`` of those heads and ``label_probs (n,)``."""

    heads: np.ndarray
    probs: np.ndarray
    label_probs: np.ndarray

    def head_probs(self, heads: np.ndarray) -> np.ndarray:
        """``(n,)`` the raw head probabilities, for the chosen ``heads (n,)`` only (``ValueError`` for others)."""
        if not np.array_equal(heads, self.heads):
            raise ValueError("these scores hold the probabilities of the chosen heads only")
        return self.probs

    def head_logits(self, heads: np.ndarray) -> np.ndarray:
        """``(n,)`` the logits of the chosen heads' raw probabilities (``±inf`` at 0 and 1: these scores keep the
        probabilities only, so beyond float64's resolution near 1 they tie)."""
        return exact_logit(self.head_probs(heads))  # (n,)


@dataclass(frozen=True)
class Confidence:
    """Per word ``head`` (probability of its chosen head) and ``label`` (of its chosen label given the head);
    ``sentence``: their products' mean, the sentence's expected LAS."""

    head: list[float]
    label: list[float]

    @property
    def sentence(self) -> float:
        return float(np.mean(np.asarray(self.head) * np.asarray(self.label))) if self.head else 1.0


PLATT, LOGIT_PLATT, LOGIT_ISOTONIC = "platt", "logit-platt", "logit-isotonic"
KINDS = (PLATT, LOGIT_PLATT, LOGIT_ISOTONIC)
BLEND = 1e-3  # the share of σ(z) in an isotonic mapping: strictly increasing where the steps are flat


@dataclass(frozen=True)
class Calibration:
    """The mapping of raw head probabilities fitted on dev (``spandep calibrate``, ``evaluation/calibration.py``),
    saved in the model table; every kind is increasing, so the ranking of the words' raw scores is kept:

    - ``platt`` (models saved before the other kinds; ``config.json`` has no ``kind``): ``p → σ(head_scale ·
      logit(p) + head_shift)`` with ``p`` clipped to ``[EPS, 1 − EPS]``, so it saturates; the identity (scale 1,
      shift 0) for models saved without a calibration;
    - ``logit-platt``: ``z → σ(head_scale · z + head_shift)`` on the raw probability's logit ``z`` read in log space
      (:meth:`ArcScores.head_logits`): no clipping, so a higher raw score gives a higher probability up to float64;
    - ``logit-isotonic``: centred isotonic regression over ``z`` (``knots``, strictly increasing, and their
      ``values``, strictly increasing), linear between knots, flat past the ends, blended with ``BLEND · σ(z)`` so
      that it is strictly increasing everywhere.

    A model of several treebanks may have one per treebank (``treebanks``, fitted on each one's dev), over the
    model's own for the others (:meth:`for_treebank`)."""

    head_scale: float = 1.0
    head_shift: float = 0.0
    kind: str = PLATT
    knots: tuple[float, ...] = ()
    values: tuple[float, ...] = ()
    treebanks: dict[str, Calibration] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, table: dict[str, Any] | None) -> Calibration:
        """The calibration of a ``config.json`` entry (``None``: the identity); a ``ModelError`` for one that is not
        a calibration of a known kind."""
        table = dict(table or {})
        treebanks = table.pop("treebanks", None) or {}
        if not isinstance(treebanks, dict):
            raise ModelError("config.json: the calibration's treebanks must map each treebank to its calibration; "
                             "fit them again with spandep calibrate MODEL DEV --treebank NAME --write")
        kind = table.pop("kind", PLATT)
        fields = {PLATT: {"head_scale", "head_shift"}, LOGIT_PLATT: {"head_scale", "head_shift"}, LOGIT_ISOTONIC: {"knots", "values"}}
        if kind not in fields or not set(table) <= fields[kind]:
            raise ModelError(f"config.json: the calibration {table | {'kind': kind}} is not one of the kinds {', '.join(KINDS)}; "
                             "fit one again with spandep calibrate MODEL DEV --write")
        mine = {name: cls.from_dict(entry) for name, entry in treebanks.items()}
        calibration = cls(kind=kind, treebanks=mine, **{k: tuple(map(float, v)) if isinstance(v, list) else float(v) for k, v in table.items()})
        if kind == LOGIT_PLATT and not calibration.head_scale > 0:
            raise ModelError(f"config.json: a logit-platt calibration needs a positive head_scale, not {calibration.head_scale}; "
                             "fit one again with spandep calibrate MODEL DEV --write")
        knots, values = np.asarray(calibration.knots), np.asarray(calibration.values)  # (K,) each
        if kind == LOGIT_ISOTONIC and not (len(knots) == len(values) >= 1 and np.all(np.diff(knots) > 0) and np.all(np.diff(values) > 0)
                                          and np.all((values >= 0) & (values <= 1)) and np.all(np.isfinite(knots))):
            raise ModelError("config.json: an isotonic calibration needs as many knots as values, both strictly increasing, "
                             "values in [0, 1]; fit one again with spandep calibrate MODEL DEV --write")
        return calibration

    def to_dict(self) -> dict[str, Any]:
        mine = {"treebanks": {name: c.to_dict() for name, c in self.treebanks.items()}} if self.treebanks else {}
        if self.kind == PLATT:  # written as before the kinds, so older spandep reads it
            return {"head_scale": self.head_scale, "head_shift": self.head_shift, **mine}
        if self.kind == LOGIT_PLATT:
            return {"kind": self.kind, "head_scale": self.head_scale, "head_shift": self.head_shift, **mine}
        return {"kind": self.kind, "knots": list(self.knots), "values": list(self.values), **mine}

    def for_treebank(self, treebank: str | None) -> Calibration:
        """The calibration of a parse as ``treebank`` (``None``: a model of one): its own where it has one."""
        return self.treebanks.get(treebank, self) if treebank is not None else self

    def with_treebank(self, treebank: str | None, calibration: Calibration) -> Calibration:
        """This calibration with ``calibration`` for ``treebank`` (``None``: the model's own, its treebanks' kept)."""
        if treebank is None:
            return replace(calibration, treebanks=self.treebanks)
        return replace(self, treebanks={**self.treebanks, treebank: calibration})

    def head_probs(self, raw: np.ndarray) -> np.ndarray:
        """Calibrated head probabilities from raw ones, any shape (the other kinds read their logits, which are
        ``±inf`` at 0 and 1: use :meth:`from_logits` on :meth:`ArcScores.head_logits` for the full resolution)."""
        if self.kind != PLATT:
            return self.from_logits(exact_logit(raw))  # (...)
        if self.head_scale == 1.0 and self.head_shift == 0.0:
            return raw
        return sigmoid(self.head_scale * logit(raw) + self.head_shift)

    def from_logits(self, z: np.ndarray) -> np.ndarray:
        """Calibrated head probabilities from the raw ones' logits ``z`` (``±inf`` allowed), any shape."""
        if self.kind == PLATT:
            return self.head_probs(sigmoid(z))
        if self.kind == LOGIT_PLATT:
            return sigmoid(self.head_scale * z + self.head_shift)  # (...): a positive scale, ±inf → 1 or 0
        steps = np.interp(z, self.knots, self.values)  # (...): the ends past the knots, ±inf included
        return (1 - BLEND) * steps + BLEND * sigmoid(z)  # (...)

    def head_probs_at(self, scores: ArcScores | ChosenArcScores, heads: np.ndarray) -> np.ndarray:
        """``(n,)`` the calibrated probabilities of ``heads (n,)`` (the ``platt`` kind from the raw probabilities,
        exactly as before the other kinds; the others from the logits)."""
        if self.kind == PLATT:
            return self.head_probs(scores.head_probs(heads))
        return self.from_logits(scores.head_logits(heads))

    def confidence(self, scores: ArcScores | ChosenArcScores, heads: list[int]) -> Confidence:
        """The confidence of a parse with ``heads`` (words ``1..n``) from its scores."""
        probs = self.head_probs_at(scores, np.asarray(heads, dtype=np.int64))  # (n,)
        return Confidence([float(p) for p in probs], [float(p) for p in scores.label_probs])


EPS = 1e-6


def logit(p: np.ndarray) -> np.ndarray:
    """The logit of ``p`` clipped to ``[EPS, 1 − EPS]`` (the ``platt`` kind's input)."""
    return exact_logit(np.clip(p, EPS, 1 - EPS))  # (...)


def exact_logit(p: np.ndarray) -> np.ndarray:
    """The logit of ``p``, ``±inf`` at 1 and 0."""
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)  # (...)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))  # (...): no overflow for large |z|
