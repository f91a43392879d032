"""Calibration of confidences: expected calibration error, reliability bins, and the mapping fitted on dev.

A confidence ``p`` is calibrated when, among the words given ``p``, a share ``p`` is right. Words are put in
``BINS`` equal-width bins of confidence; ``ECE = Σ_b (n_b / N) · |accuracy_b − mean confidence_b|`` (Guo et al.,
2017). The head probabilities' mapping (``models/confidence.Calibration``) is fitted on dev over the raw
probability's logit read in log space, so that it keeps the words' ranking and never saturates: Platt scaling of the
logit (``logit-platt``) or centred isotonic regression (``logit-isotonic``), whichever has the lower log loss fitted
on one half of dev's sentences and measured on the other (:func:`choose_kind`); decoding does not depend on it, so
one parse serves the fit. docs/heads.md ("Confidence") says why.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from spandep.data.sentence import Sentence
from spandep.data.writers import DIGITS
from spandep.models.base import Parse
from spandep.models.confidence import LOGIT_ISOTONIC, LOGIT_PLATT, Calibration, sigmoid

__all__ = [
    "BINS", "FITS", "Choice", "Reliability", "WordScores", "choose_kind", "distinct_per_thousand", "ece_floor", "expected_calibration_error", "fit_isotonic",
    "fit_logit_platt", "fit_pooled", "held_out", "log_loss", "plot_reliability", "reliability", "shrunk_targets",
]

BINS = 10
NEWTON_STEPS = 100
RIDGE = 1e-3
LOSS_EPS = 1e-6  # log loss clipping
MIN_SCALE = 1e-3  # the smallest logit-platt scale: the mapping stays increasing
VALUE_EPS = 1e-3  # the lowest and highest probability an isotonic mapping gives
FIT_LOGIT = 50.0  # logit-platt: a finite logit beyond ±this counts at ±this in the fit (σ(50) is 1 in float64)


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


@dataclass(frozen=True)
class WordScores:
    """The words of a parsed gold file that have scores, in order (``N`` words): the raw head probability ``raw`` and
    its logit ``z`` (log space), the probability ``saved`` of the model's own calibration, the label probability
    ``label``, whether the head and the head and label are right, and each word's ``sentence`` number; ``skipped``:
    the sentences parsed without scores."""

    raw: np.ndarray  # (N,)
    z: np.ndarray  # (N,)
    saved: np.ndarray  # (N,)
    label: np.ndarray  # (N,)
    head_right: np.ndarray  # (N,)
    label_right: np.ndarray  # (N,)
    sentence: np.ndarray  # (N,)
    skipped: int

    @classmethod
    def read(cls, gold: Sequence[Sentence], parses: Sequence[Parse], calibration: Calibration) -> WordScores:
        """The scores of ``parses`` of the ``gold`` sentences, with the model's ``calibration``."""
        kept = [(i, g, p, np.asarray(p.heads, dtype=np.int64)) for i, (g, p) in enumerate(zip(gold, parses)) if p.scores is not None and p.heads]
        head_right = [h == np.asarray(g.heads) for _, g, _, h in kept]  # (n,) each
        return cls(
            raw=np.concatenate([p.scores.head_probs(h) for _, _, p, h in kept]),  # type: ignore[union-attr]  # (N,)
            z=np.concatenate([p.scores.head_logits(h) for _, _, p, h in kept]),  # type: ignore[union-attr]  # (N,)
            saved=np.concatenate([calibration.head_probs_at(p.scores, h) for _, _, p, h in kept]),  # type: ignore[arg-type]  # (N,)
            label=np.concatenate([p.scores.label_probs for _, _, p, _ in kept]),  # type: ignore[union-attr]  # (N,)
            head_right=np.concatenate(head_right),  # (N,)
            label_right=np.concatenate([r & np.equal(p.labels, g.deprels) for r, (_, g, p, _) in zip(head_right, kept)]),  # (N,)
            sentence=np.concatenate([np.full(len(h), i) for i, _, _, h in kept]),  # (N,)
            skipped=len(gold) - len(kept),
        )

    def report(self, head: np.ndarray | None = None) -> dict[str, float]:
        """The figures of these words, in %: UAS, the head ECE of the raw probabilities and of ``head (N,)`` (the
        saved calibration's when ``None``), the fewest distinct values among 1,000 consecutive words of each, the
        ECE of label probabilities (words with the right head) and of head × label probability against LAS."""
        head = self.saved if head is None else head
        right = self.head_right
        return {
            "words": int(right.size), "sentences_without_scores": self.skipped, "uas": round(100 * float(right.mean()), 2),
            "head_ece_raw": round(100 * reliability(self.raw, right).ece, 2), "head_ece": round(100 * reliability(head, right).ece, 2),
            "distinct_per_1000_raw": distinct_per_thousand(self.raw), "distinct_per_1000": distinct_per_thousand(head),
            "label_ece": round(100 * reliability(self.label[right], self.label_right[right]).ece, 2),
            "las_ece": round(100 * reliability(head * self.label, self.label_right).ece, 2),
        }


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


def ece_floor(confidence: np.ndarray, draws: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The ECE (%) that perfectly calibrated confidences ``(N,)`` would show on these ``N`` words by chance: each word
    drawn right with exactly its confidence, ``draws`` times (seeded); the mean and the 95th percentile. On a few
    hundred words it is several per cent: a test ECE near it says nothing of the mapping."""
    p = np.asarray(confidence, dtype=np.float64)  # (N,)
    rng = np.random.default_rng(seed)
    eces = [reliability(p, rng.random(p.size) < p).ece for _ in range(draws)]
    return round(100 * float(np.mean(eces)), 2), round(100 * float(np.percentile(eces, 95)), 2)


def log_loss(confidence: np.ndarray, correct: np.ndarray) -> float:
    """The mean negative log-likelihood of ``correct (N,)`` under ``confidence (N,)``, clipped to ``[LOSS_EPS, 1 −
    LOSS_EPS]`` so that one confident mistake costs much but not infinitely."""
    p = np.clip(confidence, LOSS_EPS, 1 - LOSS_EPS)  # (N,)
    return float(-np.mean(np.where(correct, np.log(p), np.log1p(-p))))


def distinct_per_thousand(confidence: np.ndarray, digits: int = DIGITS) -> float:
    """The fewest distinct values, rounded to ``digits`` decimals as written out, among any 1,000 consecutive words
    (chunks of 1,000 from the first; all of them when there are fewer)."""
    rounded = np.round(np.asarray(confidence, dtype=np.float64), digits)  # (N,)
    chunks = [rounded[i : i + 1000] for i in range(0, max(len(rounded) - 999, 1), 1000)]
    return float(min(len(np.unique(c)) for c in chunks))


def fit_logit_platt(z: np.ndarray, correct: np.ndarray, weights: np.ndarray | None = None) -> Calibration:
    """The ``logit-platt`` mapping ``σ(a · z + b)`` of raw logits ``z (N,)`` with the lowest log loss against
    ``correct (N,)`` (0/1, or soft targets in ``[0, 1]``; each word counted ``weights (N,)`` times, once by default)
    over the words of finite ``z`` (an infinite logit carries no rank among its kind: it gets the limit; one past
    ``±FIT_LOGIT``, as a masked head's ``1e9``, counts there, so that a soft target near 1 cannot pull the scale to
    nothing): Newton's
    method from the identity, each step halved until the loss falls, with a small ridge so that separable data stays
    finite; a scale under ``MIN_SCALE`` (raw scores no better than chance) becomes ``MIN_SCALE`` with the shift of the
    base rate, so the mapping stays strictly increasing."""
    finite = np.isfinite(z)  # (N,)
    x = np.clip(np.asarray(z, dtype=np.float64)[finite], -FIT_LOGIT, FIT_LOGIT)  # (M,)
    y = np.asarray(correct, dtype=np.float64)[finite]  # (M,)
    c = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)[finite]  # (M,)
    design = np.stack([x, np.ones_like(x)], 1)  # (M, 2)

    def loss(w: np.ndarray) -> float:
        s = design @ w  # (M,)
        return float((c * (np.logaddexp(0.0, s) - y * s)).sum() + RIDGE / 2 * w @ w)

    w = np.array([1.0, 0.0])  # (2,)
    for _ in range(NEWTON_STEPS):
        p = sigmoid(design @ w)  # (M,)
        gradient = design.T @ (c * (p - y)) + RIDGE * w  # (2,)
        hessian = (design * (c * p * (1 - p))[:, None]).T @ design + RIDGE * np.eye(2)  # (2, 2)
        step = np.linalg.solve(hessian, gradient)  # (2,)
        before = loss(w)
        while loss(w - step) > before and np.abs(step).max() > 1e-12:
            step = step / 2
        w = w - step
        if np.abs(step).max() < 1e-10:
            break
    if w[0] < MIN_SCALE:  # scores no better than chance: nearly the base rate, still increasing
        base = np.clip(np.average(y, weights=c) if c.sum() > 0 else 0.5, LOSS_EPS, 1 - LOSS_EPS)
        w = np.array([MIN_SCALE, np.log(base) - np.log1p(-base) - MIN_SCALE * (np.average(x, weights=c) if c.sum() > 0 else 0.0)])  # (2,)
    return Calibration(head_scale=float(w[0]), head_shift=float(w[1]), kind=LOGIT_PLATT)


def fit_isotonic(z: np.ndarray, correct: np.ndarray, weights: np.ndarray | None = None) -> Calibration:
    """The ``logit-isotonic`` mapping of raw logits ``z (N,)`` against ``correct (N,)`` (0/1 or soft targets, each
    word counted ``weights (N,)`` times, once by default): centred isotonic regression (Oron and Flournoy, 2017): the
    pool-adjacent-violators blocks over ``z`` sorted (equal ``z`` pooled first), one knot per block at its mean ``z``
    (infinite ones counted at the finite ends) with its accuracy, kept only where both rise strictly, the values
    clipped to ``[VALUE_EPS, 1 − VALUE_EPS]``."""
    z = np.asarray(z, dtype=np.float64)  # (N,)
    c = np.ones_like(z) if weights is None else np.asarray(weights, dtype=np.float64)  # (N,)
    finite = z[np.isfinite(z)]  # (M,)
    ends = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
    at, where = np.unique(np.clip(z, *ends), return_inverse=True)  # (U,), (N,): equal logits pooled
    weight = np.bincount(where, weights=c, minlength=len(at))  # (U,)
    right = np.bincount(where, weights=c * np.asarray(correct, dtype=np.float64), minlength=len(at))  # (U,)
    blocks: list[list[float]] = []  # [weight, right, Σ weight · z] per block, accuracies strictly increasing
    for w, r, x in zip(weight.tolist(), right.tolist(), at.tolist()):
        blocks.append([w, r, w * x])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] >= blocks[-1][1] / blocks[-1][0]:
            last = blocks.pop()
            blocks[-1] = [a + b for a, b in zip(blocks[-1], last)]
    knots, values = [], []
    for w, r, wx in blocks:
        knot, value = wx / w, float(np.clip(r / w, VALUE_EPS, 1 - VALUE_EPS))
        if not knots or (knot > knots[-1] and value > values[-1]):
            knots.append(knot)
            values.append(value)
    return Calibration(kind=LOGIT_ISOTONIC, knots=tuple(knots), values=tuple(values))


FITS = {LOGIT_PLATT: fit_logit_platt, LOGIT_ISOTONIC: fit_isotonic}  # the kinds spandep calibrate chooses among


def shrunk_targets(z: np.ndarray, correct: np.ndarray, prior: Calibration | None, prior_words: float) -> np.ndarray:
    """``(N,)`` each word's target for a fit shrunk towards the ``prior`` mapping: its correctness blended with the
    prior's probability at its logit ``z``, as if ``prior_words`` more words like these were labelled by the prior,
    ``(N · correct + λ · prior(z)) / (N + λ)``: a small dev leans on the prior, a large one barely moves."""
    y = np.asarray(correct, dtype=np.float64)  # (N,)
    if prior is None or prior_words <= 0 or not y.size:
        return y
    share = prior_words / (y.size + prior_words)
    return (1 - share) * y + share * prior.from_logits(np.asarray(z, dtype=np.float64))  # (N,)


def fit_pooled(kind: str, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> Calibration:
    """The mapping of ``kind`` fitted on the words ``(z (N_t,), correct (N_t,))`` of several treebanks at once, each
    treebank weighing the same (its words ``1 / N_t`` each, scaled so that the weights sum to the words): the mapping
    of a typical treebank, the prior of each one's own."""
    kept = [(z, c) for z, c in parts if len(z)]
    weights = np.concatenate([np.full(len(z), 1.0 / len(z)) for z, _ in kept])  # (N,)
    z, correct = np.concatenate([z for z, _ in kept]), np.concatenate([c for _, c in kept])  # (N,) each
    return FITS[kind](z, correct, weights * len(z) / len(kept))


@dataclass(frozen=True)
class Choice:
    """The kind chosen on dev, by the lowest log loss of a mapping fitted on one half of dev's sentences and
    measured on the other (both ways round, summed), and each kind's ``held_out`` figures (log loss, ECE %)."""

    kind: str
    held_out: dict[str, dict[str, float]]


def held_out(
    fit: Callable[[np.ndarray, np.ndarray], Calibration], z: np.ndarray, correct: np.ndarray, sentence: np.ndarray,
    prior: Calibration | None = None, prior_words: float = 0.0,
) -> tuple[float, float]:
    """The log loss and ECE (%) of a mapping ``fit`` (``z``, targets) → :class:`Calibration` fitted on the even
    sentences and measured on the odd ones and the other way round, per word of both (``z``, ``correct``,
    ``sentence``: ``(N,)`` each); each half's fit shrunk towards ``prior`` by ``prior_words`` (:func:`shrunk_targets`)."""
    half = sentence % 2 == 0  # (N,)
    loss = ece = 0.0
    for train in (half, ~half):
        mapped = fit(z[train], shrunk_targets(z[train], correct[train], prior, prior_words)).from_logits(z[~train])  # (N - |train|,)
        loss += log_loss(mapped, correct[~train]) * (~train).sum()
        ece += reliability(mapped, correct[~train]).ece * (~train).sum()
    return float(loss) / len(z), 100 * float(ece) / len(z)


def choose_kind(z: np.ndarray, correct: np.ndarray, sentence: np.ndarray, prior: Calibration | None = None, prior_words: float = 0.0) -> Choice:
    """Choose among :data:`FITS` for raw logits ``z (N,)``, ``correct (N,)`` and each word's sentence number
    ``sentence (N,)`` by their :func:`held_out` log loss (the halves: even and odd sentences), each half's fit shrunk
    towards ``prior`` by ``prior_words``."""
    figures = {kind: held_out(fit, z, correct, sentence, prior, prior_words) for kind, fit in FITS.items()}
    scores = {kind: {"log_loss": round(loss, 5), "ece": round(ece, 2)} for kind, (loss, ece) in figures.items()}
    return Choice(min(scores, key=lambda k: scores[k]["log_loss"]), scores)


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
    ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    return png.getvalue()
