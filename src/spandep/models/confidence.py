"""Confidence of a parse: the probability of each word's chosen head and label, and a score per sentence.

Every parser type gives, for each word, a score for every possible head (:class:`ArcScores`, log space); their
softmax read at the chosen head is the raw head probability, which :class:`Calibration` maps through a logistic
curve fitted on dev (Platt scaling, saved with the model; the identity until then). docs/design.md ("Confidence")
says how each parser type scores heads and labels, and why the mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ArcScores", "Calibration", "ChosenArcScores", "Confidence"]


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


@dataclass(frozen=True)
class Confidence:
    """Per word ``head`` (probability of its chosen head) and ``label`` (of its chosen label given the head);
    ``sentence``: their products' mean, the sentence's expected LAS."""

    head: list[float]
    label: list[float]

    @property
    def sentence(self) -> float:
        return float(np.mean(np.asarray(self.head) * np.asarray(self.label))) if self.head else 1.0


@dataclass(frozen=True)
class Calibration:
    """Platt scaling of raw head probabilities, fitted on dev (``spandep calibrate``), saved in the model table:
    ``p → σ(head_scale · logit(p) + head_shift)``, with ``p`` clipped to ``[EPS, 1 − EPS]``; the identity (scale 1,
    shift 0) for models saved without one."""

    head_scale: float = 1.0
    head_shift: float = 0.0

    @classmethod
    def from_dict(cls, table: dict[str, Any] | None) -> Calibration:
        return cls(**(table or {}))

    def to_dict(self) -> dict[str, Any]:
        return {"head_scale": self.head_scale, "head_shift": self.head_shift}

    def head_probs(self, raw: np.ndarray) -> np.ndarray:
        """Calibrated head probabilities from raw ones, any shape."""
        if self.head_scale == 1.0 and self.head_shift == 0.0:
            return raw
        return sigmoid(self.head_scale * logit(raw) + self.head_shift)

    def confidence(self, scores: ArcScores | ChosenArcScores, heads: list[int]) -> Confidence:
        """The confidence of a parse with ``heads`` (words ``1..n``) from its scores."""
        probs = self.head_probs(scores.head_probs(np.asarray(heads, dtype=np.int64)))  # (n,)
        return Confidence([float(p) for p in probs], [float(p) for p in scores.label_probs])


EPS = 1e-6


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, EPS, 1 - EPS)  # (...)
    return np.log(q) - np.log1p(-q)  # (...)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))  # (...): no overflow for large |z|
