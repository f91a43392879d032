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
    decoder: Optional[str] = typer.Option(None, help="mst (non-projective) or projective (Eisner / span DP); default: the model's."),
    k: Optional[int] = typer.Option(None, help="Span models: spans proposed per word (default: the model's, chosen on dev)."),
    lam: Optional[float] = typer.Option(None, help="Span models: weight of link scores against span scores (default: the model's)."),
    batch_tokens: int = typer.Option(4000, help="Words per batch; lower it if memory runs out."),
    threads: int = typer.Option(0, help="Torch CPU threads (0: torch's default)."),
) -> None:
    """Parse INPUT and write every sentence, with all its columns and lines, plus predicted HEAD and DEPREL."""
    with handle_errors():
        import torch

        from spandep.data import conllu
        from spandep.errors import InputFormatError
        from spandep.pipeline.model_io import load_model, resolve_model_dir
        from spandep.pipeline.predict import parse_stream, resolve_decoder
        from spandep.pipeline.span_inference import InferenceStats

        if input_format not in INPUT_FORMATS:
            raise InputFormatError(str(input), 0, f"unknown --input-format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}")
        if not input.is_file():
            raise InputFormatError(str(input), 0, "input file not found")
        if threads:
            torch.set_num_threads(threads)
        parser = load_model(resolve_model_dir(model))
        try:
            resolve_decoder(parser, decoder)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--decoder") from exc
        if k is not None and k < 1:
            raise typer.BadParameter("k must be at least 1", param_hint="--k")
        span_options = {key: v for key, v in (("k", k), ("lam", lam)) if v is not None}
        if input_format in ("conllu", "conllx"):
            sentences = conllu.read_conllu(input, input_format)
        elif input_format == "tokens":
            sentences = conllu.read_tokens(input)
        else:
            sentences = conllu.read_text(input)
        stats = InferenceStats()
        parsed = parse_stream(parser, sentences, batch_tokens=batch_tokens, decoder=decoder, span_options=span_options, stats=stats)
        conllu.write_conllu(tqdm(parsed, desc="parsing", unit=" sent", disable=None), output)
        if stats.too_long:
            typer.echo(f"note: {stats.too_long} sentence(s) were too long for the span linker and were decoded from span scores alone", err=True)
