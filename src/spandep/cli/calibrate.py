"""``spandep calibrate MODEL DEV``: measure how well a model's confidences are calibrated on dev, fit the mapping of
its head probabilities (the kind chosen on dev: ``evaluation/calibration.py``), and (``--write``) save it with the
model."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import THREADS, bound, check_input, check_one_treebank, check_options, handle_errors
from spandep.errors import OptionError

AUTO = "auto"


def calibrate(
    model: Path = typer.Argument(..., help="Model folder."),
    dev: Path = typer.Argument(..., help="Dev CoNLL-U file with gold trees (never the test split)."),
    threads: int = THREADS,
    kind: str = typer.Option(AUTO, help="The mapping: logit-isotonic, logit-platt, or auto (the lower log loss on held-out halves of DEV)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG file for the reliability diagram (needs matplotlib)."),
    write: bool = typer.Option(False, "--write", help="Save the fitted mapping as the model's own (config.json)."),
) -> None:
    """Print, as JSON: the expected calibration error (10 bins, in %) of raw head probabilities, of those mapped by
    the saved calibration and by the one fitted on DEV (each kind's held-out log loss and ECE on DEV's halves, the
    kind chosen, the fewest distinct values among 1,000 consecutive words, at 4 decimals), of label probabilities
    (words with the right head) and of the product of calibrated head and label probabilities against LAS."""
    with handle_errors():
        import numpy as np

        from spandep.api import ModelSpec
        from spandep.data.conllu import read_conllu
        from spandep.data.output import check_writable, write_bytes
        from spandep.evaluation.calibration import FITS, choose_kind, distinct_per_thousand, plot_reliability, reliability
        from spandep.pipeline.long import parse_sentences
        from spandep.storage.model_io import save_calibration

        check_options(("--threads", threads, bound("threads")))
        if kind != AUTO and kind not in FITS:
            raise OptionError(f"--kind must be {AUTO} or one of {', '.join(FITS)}, not {kind!r}")
        check_input(dev, stdin=False)
        if plot is not None:
            check_writable(plot)
            if importlib.util.find_spec("matplotlib") is None:
                raise OptionError("--plot needs matplotlib: pip install matplotlib (or the bench extra: pip install -e '.[bench]')")
        spec = ModelSpec(model, threads=threads)  # MODEL is a folder: its calibration may be written
        parser = spec.load_model()
        check_one_treebank(parser, "calibrate")
        gold = list(read_conllu(dev))
        parses = parse_sentences(parser, gold, spec.options)  # raw scores: the saved calibration is what is measured
        kept = [(i, g, p) for i, (g, p) in enumerate(zip(gold, parses)) if p.scores is not None and p.heads]
        heads = [np.asarray(p.heads, dtype=np.int64) for _, _, p in kept]
        head_right = np.concatenate([h == np.asarray(g.heads) for h, (_, g, _) in zip(heads, kept)])  # (N,)
        label_right = np.concatenate([[a == b for a, b in zip(p.labels, g.deprels)] for _, g, p in kept]) & head_right  # (N,)
        label_p = np.concatenate([p.scores.label_probs for _, _, p in kept])  # type: ignore[union-attr]  # (N,)
        raw = np.concatenate([p.scores.head_probs(h) for h, (_, _, p) in zip(heads, kept)])  # type: ignore[union-attr]  # (N,)
        z = np.concatenate([p.scores.head_logits(h) for h, (_, _, p) in zip(heads, kept)])  # type: ignore[union-attr]  # (N,)
        sentence = np.concatenate([np.full(len(h), i) for h, (i, _, _) in zip(heads, kept)])  # (N,)
        choice = choose_kind(z, head_right, sentence)
        fitted = FITS[choice.kind if kind == AUTO else kind](z, head_right)
        calibrated = fitted.from_logits(z)  # (N,)
        saved = np.concatenate([parser.calibration.head_probs_at(p.scores, h) for h, (_, _, p) in zip(heads, kept)])  # type: ignore[arg-type]  # (N,)
        before, after = reliability(raw, head_right), reliability(calibrated, head_right)
        report = {
            "model": str(model), "dev": str(dev), "words": int(head_right.size), "sentences_without_scores": len(gold) - len(kept),
            "uas": round(100 * float(head_right.mean()), 2), "head_ece_raw": round(100 * before.ece, 2),
            "head_ece_saved": round(100 * reliability(saved, head_right).ece, 2), "held_out": choice.held_out,
            "chosen": choice.kind, "kind": fitted.kind, "calibration": fitted.to_dict(), "head_ece_fitted": round(100 * after.ece, 2),
            "distinct_per_1000_raw": distinct_per_thousand(raw), "distinct_per_1000_saved": distinct_per_thousand(saved),
            "distinct_per_1000_fitted": distinct_per_thousand(calibrated),
            "label_ece": round(100 * reliability(label_p[head_right], label_right[head_right]).ece, 2),
            "las_ece_fitted": round(100 * reliability(calibrated * label_p, label_right).ece, 2),
        }
        typer.echo(json.dumps(report))
        if write:
            save_calibration(model, fitted)
            typer.echo(f"saved the head probabilities' {fitted.kind} calibration in {model / 'config.json'}")
        if plot is not None:
            curves = {"head, raw": before, "head, saved": reliability(saved, head_right), "head, fitted": after}
            write_bytes(plot_reliability(curves, f"{model.name} on {dev.name}"), plot)
