"""``spandep parse IN -o OUT``: parse CoNLL-U, CoNLL-X, pre-tokenised or raw text into CoNLL-U."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from tqdm import tqdm

from spandep.cli.common import handle_errors

INPUT_FORMATS = ("conllu", "conllx", "tokens", "text")


def parse(
    input: Path = typer.Argument(..., help="Input file."),
    output: str = typer.Option("-", "--output", "-o", help="Output CoNLL-U file ('-' for stdout)."),
    model: Optional[Path] = typer.Option(None, "--model", "-m", help="Model folder (default: $SPANDEP_MODEL, else the shipped model)."),
    input_format: str = typer.Option("conllu", "--input-format", "-f", help="conllu | conllx | tokens | text"),
    decoder: Optional[str] = typer.Option(None, help="mst (non-projective) or eisner (projective); default: the model's."),
    batch_tokens: int = typer.Option(4000, help="Words per batch; lower it if memory runs out."),
    threads: int = typer.Option(0, help="Torch CPU threads (0: torch's default)."),
) -> None:
    """Parse INPUT and write every sentence, with all its columns and lines, plus predicted HEAD and DEPREL."""
    with handle_errors():
        import torch

        from spandep.data import conllu
        from spandep.errors import InputFormatError
        from spandep.pipeline.model_io import load_model, resolve_model_dir
        from spandep.pipeline.predict import parse_stream

        if input_format not in INPUT_FORMATS:
            raise InputFormatError(str(input), 0, f"unknown --input-format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}")
        if not input.is_file():
            raise InputFormatError(str(input), 0, "input file not found")
        if threads:
            torch.set_num_threads(threads)
        parser = load_model(resolve_model_dir(model))
        chosen = decoder or parser.config["training"].get("config", {}).get("training", {}).get("decoder", "mst")
        if chosen not in ("mst", "eisner"):
            raise typer.BadParameter(f"unknown decoder {chosen!r}; use mst or eisner", param_hint="--decoder")
        if input_format in ("conllu", "conllx"):
            sentences = conllu.read_conllu(input, input_format)
        elif input_format == "tokens":
            sentences = conllu.read_tokens(input)
        else:
            sentences = conllu.read_text(input)
        parsed = parse_stream(parser, sentences, batch_tokens=batch_tokens, decoder=chosen)
        conllu.write_conllu(tqdm(parsed, desc="parsing", unit=" sent", disable=None), output)
