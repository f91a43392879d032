"""``spandep parse IN -o OUT``: parse CoNLL-U, CoNLL-X, pre-tokenised or raw text into CoNLL-U, JSON Lines or
pictures of the trees (SVG, HTML)."""

from __future__ import annotations

import contextlib
import importlib.util
from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer
from tqdm import tqdm

from spandep.cli.common import bound, check_input, check_options, handle_errors, inference_options, load_pipeline, text_tokenizer
from spandep.tokenization.inputs import INPUT_FORMATS, RAW_TEXT_FORMATS, check_input_data, read_input
from spandep.data.conllu import FORMATS
from spandep.data.output import check_writable
from spandep.data.writers import OUTPUT_FORMATS, write_sentences
from spandep.errors import OptionError
from spandep.options import DEFAULT_BATCH_TOKENS, KEEP_CHOICES

PARSE_CHUNK = 512  # sentences parsed together; the same with and without --workers, so the outputs are identical


def parse(
    input: Path = typer.Argument(..., help="Input file ('-' for stdin)."),
    output: str = typer.Option(
        "-", "--output", "-o",
        help="Output file ('-' for stdout): a file is replaced atomically (through a symlink, its target); a device or FIFO is written as a stream.",
    ),
    model: Optional[Path] = typer.Option(None, "--model", "-m", help="A shipped model's name (spandep models) or a model folder (default: $SPANDEP_MODEL, else en)."),
    input_format: str = typer.Option(
        "conllu", "--input-format", "-f", help="conllu | conllx | tokens | text (raw text) | lines (raw text, a sentence a line)",
    ),
    tokenizer: str = typer.Option(
        "model", help="Raw text: 'model' (the model folder's trained tokenizer, else the rules), 'rules', or a tokenizer folder.",
    ),
    output_format: str = typer.Option(
        "conllu", "--output-format",
        help="conllu | jsonl (one JSON object per sentence) | svg (one picture of all trees) | html (one page).",
    ),
    decoder: Optional[str] = typer.Option(None, help="mst (non-projective) or projective (Eisner / span DP); default: the model's."),
    k: Optional[int] = typer.Option(None, help="Span models: spans proposed per word (default: the model's, chosen on dev)."),
    lam: Optional[float] = typer.Option(None, help="Span models: weight of link scores against span scores (default: the model's)."),
    batch_tokens: int = typer.Option(DEFAULT_BATCH_TOKENS, help="Words per batch; lower it if memory runs out."),
    precision: Optional[str] = typer.Option(None, help="The matrix products (the encoder's, the heads', the scorers' but the span linker's): float32 or bfloat16 (where the CPU or GPU computes it natively, else float32; not with --int8); default: the model's, checked on dev."),
    treebank: Optional[str] = typer.Option(
        None, help="A model trained on several treebanks: the one to parse as (its labels, tags and tokenizer); a shipped name such as fr names its own.",
    ),
    threads: int = typer.Option(0, help="Torch CPU threads (0: torch's default; with --workers: per worker, default 1)."),
    workers: int = typer.Option(1, help="Parser processes; the output is identical to one process."),
    device: str = typer.Option("cpu", help="cpu, cuda, cuda:N or auto (CUDA when there is one)."),
    int8: bool = typer.Option(False, "--int8", help="CPU: int8 matrix products in the encoder (faster; accuracy cost in BENCHMARKS.md); the parse then runs in float32 whatever --precision says."),
    keep: Optional[str] = typer.Option(
        None, help="CoNLL-U/CoNLL-X input: 'heads' keeps every HEAD given (an integer; _ elsewhere) and completes the tree "
        "around them; 'heads,deprels' also keeps each DEPREL given with a HEAD (docs/constrained.md).",
    ),
    confidence: bool = typer.Option(
        False, "--confidence", help="CoNLL-U: each word's head and label probabilities in MISC (HeadProb, LabelProb) "
        "and the sentence's score in a '# confidence' comment (JSON Lines always has them).",
    ),
    enhanced: bool = typer.Option(
        False, "--enhanced", help="Write each sentence's enhanced graph (DEPS) by rules over the parse, replacing the input's "
        "DEPS and empty nodes (docs/enhanced.md); without it a DEPS column given stays as it is.",
    ),
) -> None:
    """Parse INPUT and write every sentence: as CoNLL-U with all its columns and lines plus predicted HEAD and
    DEPREL, as JSON Lines, or as pictures of the trees."""
    with handle_errors():
        # every check of the options, the input and the output first, before the model loads (seconds)
        check_options(
            ("--threads", threads, bound("threads")), ("--workers", workers, bound("workers")), ("--device", device, None),
        )
        if input_format not in INPUT_FORMATS:
            raise OptionError(f"--input-format: unknown format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}")
        if output_format not in OUTPUT_FORMATS:
            raise OptionError(f"--output-format: unknown format {output_format!r}; use one of {', '.join(OUTPUT_FORMATS)}")
        if output_format in ("svg", "html") and importlib.util.find_spec("spacy") is None:
            raise OptionError("--output-format: pictures need spaCy: pip install 'spandep[spacy]'")
        if keep is not None and keep not in KEEP_CHOICES:
            raise OptionError(f"--keep: unknown value {keep!r}; use {' or '.join(KEEP_CHOICES)}")
        if keep is not None and input_format not in FORMATS:
            raise OptionError(f"--keep: heads are read from CoNLL-U or CoNLL-X input, not {input_format}: give --input-format conllu")
        given = replace(inference_options(decoder, k, lam, batch_tokens, treebank, precision), keep=keep, enhanced=enhanced)
        check_input(input)
        if str(input) != "-" and input.is_file():  # standard input, a FIFO or a device is checked as it is read
            check_input_data(input, input_format, heads=keep is not None)
        if output != "-":
            check_writable(Path(output))

        from spandep.api import ModelSpec
        from spandep.options import InferenceStats
        from spandep.pipeline.long import LONG_SENTENCE_WORDS
        from spandep.pipeline.workers import parse_parallel

        spec = ModelSpec.resolve(model, given, threads=threads or (1 if workers > 1 else 0), device=device, int8=int8)  # the name, once
        nlp = load_pipeline(spec)  # here too with --workers: a bad model or option fails before any worker starts
        sentences = read_input(input, input_format, text_tokenizer(tokenizer, nlp) if input_format in RAW_TEXT_FORMATS else None, keep is not None)
        stats = InferenceStats()
        if workers > 1:
            del nlp  # each worker loads its own from the spec
            parsed = parse_parallel(spec, sentences, workers, PARSE_CHUNK, stats)
        else:
            parsed = nlp.run(sentences, chunk_size=PARSE_CHUNK, stats=stats)
        with contextlib.closing(parsed):  # stopped midway (Ctrl-C, SIGTERM, an error): the workers are stopped too
            write_sentences(tqdm(parsed, desc="parsing", unit=" sent", disable=None), output, output_format, confidence)
        if stats.windowed:
            typer.echo(
                f"note: {stats.windowed} sentence(s) of more than {LONG_SENTENCE_WORDS:,} words were parsed in overlapping windows "
                "and merged into one tree each (less accurate than sentences split where they end: docs/design.md, \"Long sentences\")", err=True,
            )
        if stats.too_long:
            typer.echo(
                f"note: {stats.too_long} sentence(s) were too long for the span linker and were decoded without it "
                "(from the word head's arcs where the model has one, else from span scores)", err=True,
            )
