"""``spandep calibrate MODEL DEV``: measure how well a model's confidences are calibrated on dev, fit the mapping of
its head probabilities (Platt scaling), and (``--write``) save it with the model."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import THREADS, bound, check_input, check_one_treebank, check_options, handle_errors
from spandep.errors import OptionError


def calibrate(
    model: Path = typer.Argument(..., help="Model folder."),
    dev: Path = typer.Argument(..., help="Dev CoNLL-U file with gold trees (never the test split)."),
    threads: int = THREADS,
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG file for the reliability diagram (needs matplotlib)."),
    write: bool = typer.Option(False, "--write", help="Save the fitted mapping as the model's own (config.json)."),
) -> None:
    """Print, as JSON: the expected calibration error (10 bins, in %) of raw head probabilities, of those mapped by
    the Platt scaling fitted on DEV, of label probabilities (words with the right head) and of the product of
    calibrated head and label probabilities against LAS."""
    with handle_errors():
        import numpy as np

        from spandep.api import ModelSpec
        from spandep.data.conllu import read_conllu
        from spandep.data.output import check_writable, write_bytes
        from spandep.evaluation.calibration import fit_platt, plot_reliability, reliability
        from spandep.storage.model_io import save_calibration

        check_options(("--threads", threads, bound("threads")))
        check_input(dev, stdin=False)
        if plot is not None:
            check_writable(plot)
            if importlib.util.find_spec("matplotlib") is None:
                raise OptionError("--plot needs matplotlib: pip install matplotlib (or the bench extra: pip install -e '.[bench]')")
        spec = ModelSpec(model, threads=threads)  # MODEL is a folder: its calibration may be written
        parser = spec.load_model()
        check_one_treebank(parser, "calibrate")
        gold = list(read_conllu(dev))
        parses = parser.parse(gold, spec.options)  # raw scores: the saved calibration is what is measured
        kept = [(g, p) for g, p in zip(gold, parses) if p.scores is not None and p.heads]
        scores = [p.scores for _, p in kept]
        heads = [np.asarray(p.heads, dtype=np.int64) for _, p in kept]
        gold_heads = [np.asarray(g.heads, dtype=np.int64) for g, _ in kept]
        head_right = np.concatenate([h == g for h, g in zip(heads, gold_heads)])  # (N,)
        label_right = np.concatenate([[a == b for a, b in zip(p.labels, g.deprels)] for g, p in kept]) & head_right  # (N,)
        label_p = np.concatenate([s.label_probs for s in scores])  # type: ignore[union-attr]  # (N,)
        raw = np.concatenate([s.head_probs(h) for s, h in zip(scores, heads)])  # type: ignore[union-attr]  # (N,)
        fitted = fit_platt(raw, head_right)
        calibrated = fitted.head_probs(raw)  # (N,)
        before, after = reliability(raw, head_right), reliability(calibrated, head_right)
        report = {
            "model": str(model), "dev": str(dev), "words": int(head_right.size), "sentences_without_scores": len(gold) - len(kept),
            "uas": round(100 * float(head_right.mean()), 2), "head_ece_raw": round(100 * before.ece, 2),
            "head_ece_saved": round(100 * reliability(parser.calibration.head_probs(raw), head_right).ece, 2),
            **fitted.to_dict(), "head_ece_fitted": round(100 * after.ece, 2),
            "label_ece": round(100 * reliability(label_p[head_right], label_right[head_right]).ece, 2),
            "las_ece_fitted": round(100 * reliability(calibrated * label_p, label_right).ece, 2),
        }
        typer.echo(json.dumps(report))
        if write:
            save_calibration(model, fitted)
            typer.echo(f"saved the head probabilities' calibration {json.dumps(fitted.to_dict())} in {model / 'config.json'}")
        if plot is not None:
            curves = {"head, raw": before, "head, calibrated": after}
            write_bytes(plot_reliability(curves, f"{model.name} on {dev.name}"), plot)
