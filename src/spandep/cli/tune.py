"""``spandep tune MODEL DEV``: choose a span model's inference settings on dev and (``--write``) save them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import BATCH_TOKENS, DEVICE, THREADS, handle_errors


def tune(
    model: Path = typer.Argument(..., help="Model folder of a span parser."),
    dev: Path = typer.Argument(..., help="Dev CoNLL-U file (never the test split)."),
    ks: str = typer.Option("1,2,5,10", help="Comma-separated k values (spans proposed per word)."),
    lams: str = typer.Option("0.25,0.5,1,2,4", help="Comma-separated λ values (weight of link scores)."),
    arc_weights: str = typer.Option("0,0.5,1,2", help="Comma-separated weights of the word scorer's arcs (models with one)."),
    ablate_mutual: bool = typer.Option(False, "--ablate-mutual", help="Also score the best setting without the mutual term."),
    batch_tokens: int = BATCH_TOKENS,
    threads: int = THREADS,
    device: str = DEVICE,
    out: Optional[Path] = typer.Option(None, "--out", help="JSON file for the whole sweep."),
    write: bool = typer.Option(False, "--write", help="Save the best setting as the model's own (config.json)."),
) -> None:
    """Sweep k, retrieval, decoder, λ (and the word-scorer terms) on DEV; print every row and the best one."""
    with handle_errors():
        import torch

        from spandep.data.conllu import read_conllu
        from spandep.errors import InputFormatError
        from spandep.models.span.parser import SpanParser
        from spandep.pipeline.model_io import load_model, save_inference
        from spandep.training.tune import tune as sweep
        from spandep.training.tune import tuning_record

        def numbers(text: str, kind: type, hint: str) -> list:
            try:
                return [kind(v) for v in text.split(",") if v.strip()]
            except ValueError as exc:
                raise typer.BadParameter(f"a comma-separated list of numbers, not {text!r}", param_hint=hint) from exc

        grid = numbers(ks, int, "--ks"), numbers(lams, float, "--lams"), numbers(arc_weights, float, "--arc-weights")
        if not dev.is_file():
            raise InputFormatError(str(dev), 0, "dev file not found")
        if threads:
            torch.set_num_threads(threads)
        parser = load_model(model, device)
        if not isinstance(parser, SpanParser):
            raise typer.BadParameter(f"{model} is a {parser.name} model; tune chooses a span model's settings", param_hint="MODEL")
        result = sweep(parser, list(read_conllu(dev)), *grid, batch_tokens=batch_tokens, ablate_mutual=ablate_mutual,
                       report=lambda kind, row: typer.echo(f"{kind}: {json.dumps(row)}"))
        typer.echo(f"best on dev: {json.dumps(result.best)}")
        typer.echo(f"best without word-scorer terms (the paper's parser): {json.dumps(result.best_paper)}")
        command = "spandep tune " + " ".join(sys.argv[2:])
        if out is not None:
            out.write_text(json.dumps(tuning_record(result, model=str(model), dev=str(dev), command=command), indent=2) + "\n")
        if write:
            save_inference(model, result.best_options(), {"best": result.best, "dev": str(dev), "command": command})
            typer.echo(f"saved the best setting in {model / 'config.json'}")
