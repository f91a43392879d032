"""``spandep tune MODEL DEV``: choose a model's inference settings on dev (any parser type: those it has) and
(``--write``) save them; for a model of several treebanks, those of the treebank ``--treebank`` names (DEV is its dev
split)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from spandep.checks import Range
from spandep.cli.common import (
    BATCH_TOKENS, DEVICE, THREADS, bound, check_input, check_model_options, check_options, handle_errors,
)
from spandep.errors import OptionError


def tune(
    model: Path = typer.Argument(..., help="Model folder."),
    dev: Path = typer.Argument(..., help="Dev CoNLL-U file (never the test split)."),
    ks: str = typer.Option("1,2,5,10", help="Span models: comma-separated k values (spans proposed per word)."),
    lams: str = typer.Option("0.25,0.5,1,2,4", help="Span models: comma-separated λ values (weight of link scores)."),
    arc_weights: str = typer.Option("0,0.5,1,2", help="Comma-separated weights of the word scorer's arcs (models with one)."),
    ablate_mutual: bool = typer.Option(False, "--ablate-mutual", help="Span models: also score the best setting without the mutual term."),
    batch_tokens: int = BATCH_TOKENS,
    threads: int = THREADS,
    device: str = DEVICE,
    treebank: Optional[str] = typer.Option(
        None, "--treebank", help="Model of several treebanks: the one DEV belongs to (its settings are chosen and saved)."
    ),
    out: Optional[Path] = typer.Option(None, "--out", help="JSON file for the whole sweep."),
    write: bool = typer.Option(False, "--write", help="Save the best setting as the model's own (config.json)."),
    within: Optional[float] = typer.Option(
        None, "--within", help="Span models: choose instead the smallest k whose best LAS (no punct) is at most this far below the best's (fastest)."
    ),
) -> None:
    """Sweep the settings the model has on DEV (a span model: k, retrieval, decoder, λ and the word-scorer terms; a
    Biaffine one: the decoder); print every row and the best one."""
    with handle_errors():
        from spandep.api import ModelSpec
        from spandep.data.conllu import read_conllu
        from spandep.data.output import check_writable, write_blocks
        from spandep.evaluation.provenance import TUNE_SCHEMA, stamp
        from spandep.options import InferenceOptions
        from spandep.storage.model_io import save_inference
        from spandep.training.tune import row_options, tuning_record
        from spandep.training.tune import tune as sweep

        def numbers(text: str, allowed: Range, option: str) -> list:
            try:
                values = [(int if allowed.integer else float)(v) for v in text.split(",") if v.strip()]
            except ValueError:
                raise OptionError(f"{option} must be a comma-separated list of numbers, not {text!r}") from None
            if not values:
                raise OptionError(f"{option} needs at least one number")
            check_options((f"{option}: the number of values", len(values), bound("sweep_values")))
            check_options(*((f"{option} value", v, allowed) for v in values))
            return values

        grid = (
            numbers(ks, bound("k"), "--ks"), numbers(lams, bound("lam"), "--lams"),
            numbers(arc_weights, bound("arc_weight"), "--arc-weights"),
        )
        check_options(("--batch-tokens", batch_tokens, bound("batch_tokens")), ("--threads", threads, bound("threads")), ("--device", device, None))
        if within is not None:
            check_options(("--within", within, bound("within")))
        check_input(dev)
        if out is not None:
            check_writable(out)
        parser = ModelSpec(model, threads=threads, device=device).load_model()  # MODEL is a folder: its settings may be written
        if parser.treebanks is not None and treebank is None:
            raise OptionError(
                f"MODEL is trained on several treebanks ({', '.join(parser.treebanks.names)}): name the one DEV belongs to "
                "with --treebank NAME (each treebank's settings are chosen on its own dev)"
            )
        check_model_options(parser, InferenceOptions(treebank=treebank))
        if ablate_mutual:
            check_model_options(parser, InferenceOptions(mutual=False, treebank=treebank), "--ablate-mutual")
        if within is not None:
            check_model_options(parser, InferenceOptions(k=1, treebank=treebank), "--within")
        result = sweep(parser, list(read_conllu(dev)), *grid, batch_tokens=batch_tokens, ablate_mutual=ablate_mutual,
                       report=lambda kind, row: typer.echo(f"{kind}: {json.dumps(row)}"), treebank=treebank, within=within)
        typer.echo(f"best on dev: {json.dumps(result.best)}")
        if result.best_paper is not None:
            typer.echo(f"best without word-scorer terms (the paper's parser): {json.dumps(result.best_paper)}")
        chosen = result.best
        if result.fastest is not None:
            chosen = result.fastest
            typer.echo(f"fastest within {within} LAS of the best: {json.dumps(chosen)}")
        command = "spandep tune " + " ".join(sys.argv[2:])
        if out is not None:
            record = tuning_record(result, model=str(model), dev=str(dev), treebank=treebank, command=command)
            write_blocks([json.dumps(stamp(record, TUNE_SCHEMA, command, device), indent=2) + "\n"], out)
        if write:
            save_inference(model, row_options(chosen), {"best": chosen, "dev": str(dev), "command": command}, treebank)
            place = "" if treebank is None else f" for treebank {treebank}"
            typer.echo(f"saved {'the best' if within is None else 'that'} setting{place} in {model / 'config.json'}")
