"""``spandep calibrate MODEL DEV...``: measure how well a model's confidences are calibrated on dev, fit the mapping of
its head probabilities (the kind chosen on dev: ``evaluation/calibration.py``), and (``--write``) save it with the
model. For a model of several treebanks, each DEV is the dev split of the treebank its ``--treebank`` names (in the same
order): each treebank gets a mapping of its own, shrunk towards the model's own mapping (``--prior-words``); with
several, the model's own is first fitted on all of them pooled, each treebank weighing the same."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import THREADS, bound, check_input, check_model_options, check_options, handle_errors
from spandep.errors import OptionError

AUTO = "auto"
POOLED_KIND = "logit-platt"  # a model of several treebanks: the kind of its own mapping, fitted on their devs pooled
PRIOR_WORDS = 1000.0  # how many words that mapping weighs in each treebank's own (chosen on dev: docs/heads.md)


def calibrate(
    model: Path = typer.Argument(..., help="Model folder."),
    dev: list[Path] = typer.Argument(..., help="Dev CoNLL-U file(s) with gold trees (never the test split); several are read as one dev set, "
                                                "or, for a model of several treebanks, one per --treebank in the same order."),
    threads: int = THREADS,
    treebank: Optional[list[str]] = typer.Option(
        None, "--treebank", help="Model of several treebanks: the one DEV belongs to (its own calibration is fitted and saved); once per DEV."
    ),
    kind: str = typer.Option(AUTO, help="The mapping: logit-isotonic, logit-platt, or auto (the lower log loss on held-out halves of DEV)."),
    prior_words: float = typer.Option(
        PRIOR_WORDS, "--prior-words", help="Model of several treebanks: how many words the model's own mapping weighs in each treebank's "
                                           "(0: each fitted on its dev alone; chosen on dev, docs/heads.md)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG file for the reliability diagram of the first DEV (needs matplotlib)."),
    write: bool = typer.Option(False, "--write", help="Save the fitted mappings as the model's own (config.json)."),
) -> None:
    """Print, as JSON, one line per treebank (one for a model of one): the expected calibration error (10 bins, in
    %) of raw head probabilities, of those mapped by the saved calibration and by the one fitted on DEV (each kind's
    held-out log loss and ECE on DEV's halves, the kind chosen, the fewest distinct values among 1,000 consecutive
    words, at 4 decimals), of label probabilities (words with the right head) and of the product of calibrated head
    and label probabilities against LAS; with several treebanks, then a line for the model's own mapping fitted on
    them pooled."""
    with handle_errors():
        from spandep.api import ModelSpec
        from spandep.data.conllu import read_conllu
        from spandep.data.output import check_writable, write_bytes
        from spandep.evaluation.calibration import FITS, WordScores, choose_kind, fit_pooled, plot_reliability, reliability, shrunk_targets
        from spandep.models.confidence import PLATT
        from spandep.options import InferenceOptions
        from spandep.pipeline.long import parse_sentences
        from spandep.storage.model_io import save_calibration

        treebanks = list(treebank or [])
        check_options(("--threads", threads, bound("threads")), ("DEV", len(dev), bound("calibrate_files")),
                      ("--prior-words", prior_words, bound("prior_words")))
        if kind != AUTO and kind not in FITS:
            raise OptionError(f"--kind must be {AUTO} or one of {', '.join(FITS)}, not {kind!r}")
        if treebanks and len(treebanks) != len(dev):
            raise OptionError(f"give one --treebank per DEV file, in the same order: {len(dev)} DEV, {len(treebanks)} --treebank")
        if len(set(treebanks)) < len(treebanks):
            raise OptionError("each --treebank once: a treebank's dev split is one DEV file")
        for path in dev:
            check_input(path, stdin=False)
        if plot is not None:
            check_writable(plot)
            if importlib.util.find_spec("matplotlib") is None:
                raise OptionError("--plot needs matplotlib: pip install matplotlib (or the bench extra: pip install -e '.[bench]')")
        spec = ModelSpec(model, InferenceOptions(treebank=treebanks[0] if treebanks else None), threads=threads)  # a folder: its calibration may be written
        parser = spec.load_model()
        if parser.treebanks is not None and not treebanks:
            raise OptionError(
                f"MODEL is trained on several treebanks ({', '.join(parser.treebanks.names)}): name the one DEV belongs to "
                "with --treebank NAME, once per DEV (each treebank's calibration is fitted on its own dev)"
            )
        groups = {name: [path] for name, path in zip(treebanks, dev)} if treebanks else {None: list(dev)}
        calibration, words = parser.calibration, {}
        for name, paths in groups.items():
            options = replace(spec.options, treebank=name)
            check_model_options(parser, options, "--treebank" if name else "")
            gold = [s for path in paths for s in read_conllu(path)]
            words[name] = WordScores.read(gold, parse_sentences(parser, gold, options), calibration.for_treebank(name))
        pooled = None
        if len(groups) > 1:  # the model's own: all the treebanks pooled, the prior of each one's
            pooled = fit_pooled(POOLED_KIND, [(w.z, w.head_right) for w in words.values()])
            calibration = calibration.with_treebank(None, pooled)
        prior = calibration if treebanks and calibration.kind != PLATT else None  # PLATT: no pooled mapping saved yet
        lean = prior_words if prior is not None else 0.0
        prior_entry = None if prior is None else replace(prior, treebanks={}).to_dict()
        for name, w in words.items():
            choice = choose_kind(w.z, w.head_right, w.sentence, prior, lean)
            fitted = FITS[choice.kind if kind == AUTO else kind](w.z, shrunk_targets(w.z, w.head_right, prior, lean))
            calibrated = fitted.from_logits(w.z)  # (N,)
            saved, after = w.report(), w.report(calibrated)
            report = {
                "model": str(model), "dev": " ".join(map(str, groups[name])), "treebank": name,
                **{k: v for k, v in after.items() if k not in ("head_ece", "distinct_per_1000", "las_ece")},
                "head_ece_saved": saved["head_ece"], "distinct_per_1000_saved": saved["distinct_per_1000"],
                "prior": prior_entry, "prior_words": lean,
                "held_out": choice.held_out, "chosen": choice.kind, "kind": fitted.kind, "calibration": fitted.to_dict(),
                "head_ece_fitted": after["head_ece"], "distinct_per_1000_fitted": after["distinct_per_1000"], "las_ece_fitted": after["las_ece"],
            }
            typer.echo(json.dumps(report))
            calibration = calibration.with_treebank(name, fitted)
        if pooled is not None:
            typer.echo(json.dumps({"model": str(model), "treebank": None, "pooled": treebanks, "kind": pooled.kind, "calibration": pooled.to_dict()}))
        if write:
            save_calibration(model, calibration)
            place = "" if not treebanks else f" for {len(treebanks)} treebank{'s' if len(treebanks) > 1 else ''}"
            typer.echo(f"saved the head probabilities' calibration{place} in {model / 'config.json'}")
        if plot is not None:
            name = next(iter(groups))
            first = words[name]
            curves = {"head, raw": reliability(first.raw, first.head_right), "head, saved": reliability(first.saved, first.head_right),
                      "head, fitted": reliability(calibration.for_treebank(name).from_logits(first.z), first.head_right)}
            write_bytes(plot_reliability(curves, f"{model.name} on {dev[0].name}"), plot)
