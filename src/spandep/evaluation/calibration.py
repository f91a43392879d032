"""Calibration of confidences: expected calibration error, reliability bins, and the mapping fitted on dev.

A confidence ``p`` is calibrated when, among the words given ``p``, a share ``p`` is right. Words are put in
``BINS`` equal-width bins of confidence; ``ECE = Σ_b (n_b / N) · |accuracy_b − mean confidence_b|`` (Guo et al.,
2017). The head probabilities' mapping (``models/confidence.Calibration``, Platt scaling) is fitted on dev: the
logistic regression of "the chosen head is right" on the raw probability's logit (Newton's method; decoding does not
depend on it, so one parse serves the fit).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spandep.models.confidence import Calibration, logit, sigmoid

__all__ = ["BINS", "Reliability", "expected_calibration_error", "fit_platt", "plot_reliability", "reliability"]

BINS = 10
NEWTON_STEPS = 100
RIDGE = 1e-3


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


def fit_platt(raw: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray) -> Calibration:
    """The Platt scaling ``σ(a · logit(p) + b)`` of raw probabilities with the lowest log loss against ``correct``:
    Newton's method from the identity, each step halved until the loss falls, with a small ridge so that separable
    data stays finite."""
    x = logit(np.asarray(raw, dtype=np.float64))  # (N,)
    y = np.asarray(correct, dtype=np.float64)  # (N,)
    design = np.stack([x, np.ones_like(x)], 1)  # (N, 2)

    def loss(w: np.ndarray) -> float:
        z = design @ w  # (N,)
        return float((np.logaddexp(0.0, z) - y * z).sum() + RIDGE / 2 * w @ w)

    w = np.array([1.0, 0.0])  # (2,)
    for _ in range(NEWTON_STEPS):
        p = sigmoid(design @ w)  # (N,)
        gradient = design.T @ (p - y) + RIDGE * w  # (2,)
        hessian = (design * (p * (1 - p))[:, None]).T @ design + RIDGE * np.eye(2)  # (2, 2)
        step = np.linalg.solve(hessian, gradient)  # (2,)
        before = loss(w)
        while loss(w - step) > before and np.abs(step).max() > 1e-12:
            step = step / 2
        w = w - step
        if np.abs(step).max() < 1e-10:
            break
    return Calibration(head_scale=float(w[0]), head_shift=float(w[1]))


def plot_reliability(curves: dict[str, Reliability], title: str) -> bytes:
    """A reliability diagram (accuracy against mean confidence per bin, one line per curve, the diagonal for
    reference): the bytes of a PNG; needs matplotlib."""
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
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    return png.getvalue()
