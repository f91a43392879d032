"""``spandep export MODEL OUT``: re-save a trained model, compact (float16, no frozen base weights) by default."""

from __future__ import annotations

from pathlib import Path

import typer

from spandep.cli.common import handle_errors


def export(
    model: Path = typer.Argument(..., help="Model folder written by `spandep train` (RUN/model)."),
    output: Path = typer.Argument(..., help="Folder to write."),
    compact: bool = typer.Option(True, "--compact/--full", help="float16 weights, frozen base weights left out."),
    int8: bool = typer.Option(False, "--int8", help="With --compact: the transformer's weight matrices stored as int8 (per-row scales); measure the copy's accuracy."),
) -> None:
    """Write a copy of MODEL for shipping, its trained tokenizer included; a compact copy needs the encoder's base
    package installed to load."""
    with handle_errors():
        from spandep.pipeline.model_io import load_model, save_model
        from spandep.tokenization.text import TOKENIZER_FOLDER

        if int8 and not compact:
            raise typer.BadParameter("--int8 needs --compact", param_hint="--int8")
        loaded = load_model(model)
        tokenizer = model / TOKENIZER_FOLDER
        save_model(loaded, output, loaded.config.get("training"), compact, int8, tokenizer if tokenizer.is_dir() else None)
        size = sum(f.stat().st_size for f in output.rglob("*") if f.is_file())
        typer.echo(f"wrote {output} ({size / 1e6:.1f} MB)")
