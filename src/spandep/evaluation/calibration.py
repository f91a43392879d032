"""Calibration of confidences: expected calibration error, reliability bins, and the temperature fitted on dev.

A confidence ``p`` is calibrated when, among the words given ``p``, a share ``p`` is right. Words are put in
``BINS`` equal-width bins of confidence; ``ECE = Σ_b (n_b / N) · |accuracy_b − mean confidence_b|`` (Guo et al.,
2017). The temperature ``T`` of head probabilities (``models/confidence.py``) is chosen on dev from a grid: the one
with the lowest log loss of "the chosen head is right" under its head probability (decoding does not depend on ``T``,
so one parse serves the whole grid).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spandep.models.confidence import ArcScores

__all__ = ["BINS", "Reliability", "TEMPERATURES", "expected_calibration_error", "fit_temperature", "reliability"]

BINS = 10
TEMPERATURES = tuple(float(t) for t in np.round(np.exp(np.linspace(np.log(0.25), np.log(8.0), 61)), 4))  # the grid
EPS = 1e-6


@dataclass(frozen=True)
class Reliability:
    """Per confidence bin ``[b / bins, (b + 1) / bins)`` (the last one closed): how many words, their mean
    confidence and their accuracy (``nan`` for an empty bin)."""

    counts: np.ndarray  # (bins,)
    confidence: np.ndarray  # (bins,)
    accuracy: np.ndarray  # (bins,)

    @property
    def ece(self) -> float:
        """The expected calibration error of these bins."""
        used = self.counts > 0  # (bins,)
        gaps = np.abs(self.accuracy[used] - self.confidence[used])  # (used bins,)
        return float((self.counts[used] * gaps).sum() / max(int(self.counts.sum()), 1))


def reliability(confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray, bins: int = BINS) -> Reliability:
    """The reliability bins of confidences in ``[0, 1]`` and whether each prediction was right."""
    p = np.asarray(confidence, dtype=np.float64)  # (N,)
    y = np.asarray(correct, dtype=np.float64)  # (N,)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)  # (N,): 1.0 falls in the last bin
    counts = np.bincount(which, minlength=bins)  # (bins,)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(which, weights=p, minlength=bins) / counts  # (bins,)
        accuracy = np.bincount(which, weights=y, minlength=bins) / counts  # (bins,)
    return Reliability(counts, mean_p, accuracy)


def expected_calibration_error(confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray, bins: int = BINS) -> float:
    return reliability(confidence, correct, bins).ece


def fit_temperature(
    scores: Sequence[ArcScores], heads: Sequence[np.ndarray], gold: Sequence[np.ndarray], grid: Sequence[float] = TEMPERATURES
) -> float:
    """The temperature of ``grid`` with the lowest log loss of the chosen ``heads`` being the ``gold`` ones, under
    each sentence's head probabilities (``scores``; one entry per sentence, words ``1..n``)."""
    right = np.concatenate([h == g for h, g in zip(heads, gold)]).astype(np.float64)  # (N,)

    def log_loss(t: float) -> float:
        p = np.clip(np.concatenate([s.head_probs(h, t) for s, h in zip(scores, heads)]), EPS, 1 - EPS)  # (N,)
        return float(-(right * np.log(p) + (1 - right) * np.log(1 - p)).mean())

    return min(grid, key=log_loss)


def plot_reliability(curves: dict[str, Reliability], path: str, title: str) -> None:
    """A reliability diagram (accuracy against mean confidence per bin, one line per curve, the diagonal for
    reference) as a PNG; needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("the reliability diagram needs matplotlib: pip install matplotlib") from exc
    fig, ax = plt.subplots(figsize=(4.8, 4.8), dpi=120)
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="calibrated")
    for name, r in curves.items():
        used = r.counts > 0  # (bins,)
        ax.plot(r.confidence[used], r.accuracy[used], marker="o", label=f"{name} (ECE {100 * r.ece:.2f} %)")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean confidence in bin", ylabel="accuracy in bin", title=title)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
