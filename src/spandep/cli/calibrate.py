"""``spandep calibrate MODEL DEV``: measure how well a model's confidences are calibrated on dev, fit the mapping of
its head probabilities (the kind chosen on dev: ``evaluation/calibration.py``), and (``--write``) save it with the
model; for a model of several treebanks, the mapping of the treebank ``--treebank`` names (DEV is its dev)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import THREADS, bound, check_input, check_model_options, check_options, handle_errors
from spandep.errors import OptionError

AUTO = "auto"


def calibrate(
    model: Path = typer.Argument(..., help="Model folder."),
    dev: Path = typer.Argument(..., help="Dev CoNLL-U file with gold trees (never the test split)."),
    threads: int = THREADS,
    treebank: Optional[str] = typer.Option(
        None, "--treebank", help="Model of several treebanks: the one DEV belongs to (its own calibration is fitted and saved)."
    ),
    kind: str = typer.Option(AUTO, help="The mapping: logit-isotonic, logit-platt, or auto (the lower log loss on held-out halves of DEV)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG file for the reliability diagram (needs matplotlib)."),
    write: bool = typer.Option(False, "--write", help="Save the fitted mapping as the model's own (config.json)."),
) -> None:
    """Print, as JSON: the expected calibration error (10 bins, in %) of raw head probabilities, of those mapped by
    the saved calibration and by the one fitted on DEV (each kind's held-out log loss and ECE on DEV's halves, the
    kind chosen, the fewest distinct values among 1,000 consecutive words, at 4 decimals), of label probabilities
    (words with the right head) and of the product of calibrated head and label probabilities against LAS."""
    with handle_errors():
        from spandep.api import ModelSpec
        from spandep.data.conllu import read_conllu
        from spandep.data.output import check_writable, write_bytes
        from spandep.evaluation.calibration import FITS, WordScores, choose_kind, plot_reliability, reliability
        from spandep.options import InferenceOptions
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
        spec = ModelSpec(model, InferenceOptions(treebank=treebank), threads=threads)  # a folder: its calibration may be written
        parser = spec.load_model()
        if parser.treebanks is not None and treebank is None:
            raise OptionError(
                f"MODEL is trained on several treebanks ({', '.join(parser.treebanks.names)}): name the one DEV belongs to "
                "with --treebank NAME (each treebank's calibration is fitted on its own dev)"
            )
        check_model_options(parser, spec.options)
        gold = list(read_conllu(dev))
        words = WordScores.read(gold, parse_sentences(parser, gold, spec.options), parser.calibration.for_treebank(treebank))
        choice = choose_kind(words.z, words.head_right, words.sentence)
        fitted = FITS[choice.kind if kind == AUTO else kind](words.z, words.head_right)
        calibrated = fitted.from_logits(words.z)  # (N,)
        saved, after = words.report(), words.report(calibrated)
        report = {
            "model": str(model), "dev": str(dev), "treebank": treebank, **{k: v for k, v in after.items() if k not in ("head_ece", "distinct_per_1000", "las_ece")},
            "head_ece_saved": saved["head_ece"], "distinct_per_1000_saved": saved["distinct_per_1000"],
            "held_out": choice.held_out, "chosen": choice.kind, "kind": fitted.kind, "calibration": fitted.to_dict(),
            "head_ece_fitted": after["head_ece"], "distinct_per_1000_fitted": after["distinct_per_1000"], "las_ece_fitted": after["las_ece"],
        }
        typer.echo(json.dumps(report))
        if write:
            save_calibration(model, parser.calibration.with_treebank(treebank, fitted))
            place = "" if treebank is None else f" for treebank {treebank}"
            typer.echo(f"saved the head probabilities' {fitted.kind} calibration{place} in {model / 'config.json'}")
        if plot is not None:
            right = words.head_right
            curves = {"head, raw": reliability(words.raw, right), "head, saved": reliability(words.saved, right), "head, fitted": reliability(calibrated, right)}
            write_bytes(plot_reliability(curves, f"{model.name} on {dev.name}"), plot)
