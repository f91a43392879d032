"""``spandep benchmark-speed INPUT``: words/s and sentences/s of a model, with the spread over repeated runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import bound, check_input, check_options, handle_errors, inference_options, load_pipeline
from spandep.options import DEFAULT_BATCH_TOKENS


def benchmark_speed(
    input: Path = typer.Argument(..., help="CoNLL-U file to parse, '-' for stdin (read into memory first; reading is not timed)."),
    model: Optional[Path] = typer.Option(None, "--model", "-m", help="A shipped model's name (spandep models) or a model folder (default: $SPANDEP_MODEL, else en)."),
    runs: int = typer.Option(3, help="Timed runs."),
    warmup: int = typer.Option(1, help="Untimed warm-up runs first."),
    batch_tokens: int = typer.Option(DEFAULT_BATCH_TOKENS, help="Words (pieces for transformers) per batch."),
    decoder: Optional[str] = typer.Option(None, help="mst or projective; default: the model's."),
    threads: int = typer.Option(0, help="Torch CPU threads (0: torch's default)."),
    k: Optional[int] = typer.Option(None, help="Span models: spans proposed per word (default: the model's)."),
    treebank: Optional[str] = typer.Option(None, help="A model trained on several treebanks: the one to parse as."),
    int8: bool = typer.Option(False, "--int8", help="int8 matrix products in the encoder (as spandep parse --int8)."),
    precision: Optional[str] = typer.Option(None, help="float32 or bfloat16 matrix products (as spandep parse --precision); default: the model's."),
    encoder_only: bool = typer.Option(
        False, "--encoder-only", help="Time the encoder's share of the parse alone (its floor): no scorer, decoder or head."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
) -> None:
    """Parse INPUT repeatedly and report speed (model load and file reading excluded)."""
    with handle_errors():
        from spandep.api import ModelSpec
        from spandep.data.conllu import read_conllu
        from spandep.pipeline.speed import measure_speed

        check_options(("--runs", runs, bound("runs")), ("--warmup", warmup, bound("warmup")), ("--threads", threads, bound("threads")))
        options = inference_options(decoder, k, None, batch_tokens, treebank, precision)
        check_input(input)
        nlp = load_pipeline(ModelSpec.resolve(model, options, threads=threads, int8=int8))
        sentences = list(read_conllu(input))
        result = measure_speed(nlp.model, sentences, runs, warmup, nlp.options, encoder_only)
        result.update(input=str(input), int8=int8)
        if json_out:
            typer.echo(json.dumps(result, indent=2))
        else:
            w, s = result["words_per_s"], result["sent_per_s"]
            typer.echo(
                f"{result['sentences']} sentences, {result['words']} words, {runs} runs, {result['threads']} threads: "
                f"{w['mean']:,.1f} words/s (sd {w['std']:,.1f}, min {w['min']:,.1f}, max {w['max']:,.1f}), "
                f"{s['mean']:,.1f} sentences/s" + (" (the encoder alone)" if encoder_only else "")
            )
