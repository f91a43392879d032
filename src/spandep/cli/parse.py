"""``spandep parse IN -o OUT``: parse CoNLL-U, CoNLL-X, pre-tokenised or raw text into CoNLL-U."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from tqdm import tqdm

from spandep.cli.common import handle_errors

INPUT_FORMATS = ("conllu", "conllx", "tokens", "text")
PARSE_CHUNK = 512  # sentences parsed together; the same with and without --workers, so the outputs are identical


def parse(
    input: Path = typer.Argument(..., help="Input file."),
    output: str = typer.Option("-", "--output", "-o", help="Output CoNLL-U file ('-' for stdout)."),
    model: Optional[Path] = typer.Option(None, "--model", "-m", help="Model folder (default: $SPANDEP_MODEL, else the shipped model)."),
    input_format: str = typer.Option("conllu", "--input-format", "-f", help="conllu | conllx | tokens | text"),
    decoder: Optional[str] = typer.Option(None, help="mst (non-projective) or projective (Eisner / span DP); default: the model's."),
    k: Optional[int] = typer.Option(None, help="Span models: spans proposed per word (default: the model's, chosen on dev)."),
    lam: Optional[float] = typer.Option(None, help="Span models: weight of link scores against span scores (default: the model's)."),
    batch_tokens: int = typer.Option(4000, help="Words per batch; lower it if memory runs out."),
    threads: int = typer.Option(0, help="Torch CPU threads (0: torch's default; with --workers: per worker, default 1)."),
    workers: int = typer.Option(1, help="Parser processes; the output is identical to one process."),
) -> None:
    """Parse INPUT and write every sentence, with all its columns and lines, plus predicted HEAD and DEPREL."""
    with handle_errors():
        from spandep.data import conllu
        from spandep.errors import InputFormatError
        from spandep.pipeline.predict import check_decoder_name, parse_stream
        from spandep.pipeline.span_inference import InferenceStats
        from spandep.pipeline.workers import ParserFactory, parse_parallel

        if input_format not in INPUT_FORMATS:
            raise InputFormatError(str(input), 0, f"unknown --input-format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}")
        if not input.is_file():
            raise InputFormatError(str(input), 0, "input file not found")
        try:
            check_decoder_name(decoder)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--decoder") from exc
        if k is not None and k < 1:
            raise typer.BadParameter("k must be at least 1", param_hint="--k")
        if workers < 1:
            raise typer.BadParameter("workers must be at least 1", param_hint="--workers")
        span_options = {key: v for key, v in (("k", k), ("lam", lam)) if v is not None}
        factory = ParserFactory(str(model) if model else None, batch_tokens, decoder, span_options, threads or (1 if workers > 1 else 0))
        parser = factory.load()  # here too with --workers: a bad model folder fails with a clear error before any worker starts
        if input_format in ("conllu", "conllx"):
            sentences = conllu.read_conllu(input, input_format)
        elif input_format == "tokens":
            sentences = conllu.read_tokens(input)
        else:
            sentences = conllu.read_text(input)
        stats = InferenceStats()
        if workers > 1:
            del parser
            parsed = parse_parallel(factory, sentences, workers, PARSE_CHUNK, stats)
        else:
            parsed = parse_stream(parser, sentences, batch_tokens, decoder, PARSE_CHUNK, span_options, stats)
        conllu.write_conllu(tqdm(parsed, desc="parsing", unit=" sent", disable=None), output)
        if stats.too_long:
            typer.echo(f"note: {stats.too_long} sentence(s) were too long for the span linker and were decoded from span scores alone", err=True)
