"""Confidence of a parse: the probability of each word's chosen head and label, and a score per sentence.

Every parser type gives, for each word, a score for every possible head (:class:`ArcScores`, log space); the head
probability is their softmax at a temperature fitted on dev (:class:`Calibration`, saved with the model; 1 until
then), read at the chosen head. docs/design.md ("Confidence") says how each parser type scores heads and labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ArcScores", "Calibration", "Confidence"]


@dataclass(frozen=True)
class ArcScores:
    """One sentence's ``head_scores (n, 1 + n)``: a log-space score for every head ``0..n`` of each word ``1..n``
    (``-inf`` where impossible); ``label_probs (n,)``: the probability of each word's chosen label at its head."""

    head_scores: np.ndarray
    label_probs: np.ndarray

    def head_probs(self, heads: np.ndarray, temperature: float) -> np.ndarray:
        """``(n,)`` the softmax of each word's head scores over ``temperature``, read at ``heads (n,)``."""
        scaled = self.head_scores / temperature  # (n, 1 + n)
        top = scaled.max(-1, keepdims=True)  # (n, 1)
        top = np.where(np.isfinite(top), top, 0.0)  # (n, 1): a row with no possible head gives 0
        weights = np.exp(scaled - top)  # (n, 1 + n)
        chosen = weights[np.arange(len(heads)), heads]  # (n,)
        return chosen / np.maximum(weights.sum(-1), np.finfo(np.float64).tiny)  # (n,)


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
    """The temperature of head probabilities, fitted on dev (``spandep calibrate``); saved in the model table."""

    head_temperature: float = 1.0

    @classmethod
    def from_dict(cls, table: dict[str, Any] | None) -> Calibration:
        return cls(**(table or {}))

    def to_dict(self) -> dict[str, Any]:
        return {"head_temperature": self.head_temperature}

    def confidence(self, scores: ArcScores, heads: list[int]) -> Confidence:
        """The confidence of a parse with ``heads`` (words ``1..n``) from its scores."""
        probs = scores.head_probs(np.asarray(heads, dtype=np.int64), self.head_temperature)  # (n,)
        return Confidence([float(p) for p in probs], [float(p) for p in scores.label_probs])
