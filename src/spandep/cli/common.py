"""Helpers shared by the sub-commands."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from spandep.errors import SpandepError
from spandep.inference import InferenceOptions

if TYPE_CHECKING:
    from spandep.models.base import Parser
    from spandep.tokenization.text import Tokenizer

__all__ = [
    "BATCH_TOKENS", "DEVICE", "THREADS", "check_model_options", "error_message", "handle_errors", "inference_options",
    "text_tokenizer",
]

# options shared by the commands that run a model over a dev file (tune, calibrate)
BATCH_TOKENS = typer.Option(4000, help="Words per batch.")
THREADS = typer.Option(0, help="Torch CPU threads (0: torch's default).")
DEVICE = typer.Option("cpu", help="cpu, cuda, cuda:N or auto.")


def error_message(exc: SpandepError) -> str:
    """The one-line message printed for ``exc``."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"spandep: error: {text}"


@contextlib.contextmanager
def handle_errors() -> Iterator[None]:
    """Turn a :class:`SpandepError` into a one-line message on stderr and exit with its ``exit_code``
    (no traceback). Any other exception propagates (exit status 1: a bug).

    Usable as a context manager (``with handle_errors(): ...``) or as a decorator (``@handle_errors()``)
    of a command function.
    """
    try:
        yield
    except SpandepError as exc:
        typer.echo(error_message(exc), err=True)
        raise typer.Exit(code=exc.exit_code) from None


def inference_options(decoder: str | None, k: int | None, lam: float | None, batch_tokens: int) -> InferenceOptions:
    """The options of ``--decoder``, ``--k``, ``--lam`` and ``--batch-tokens``, checked before any model is loaded
    (a bad value is a usage error naming its option)."""
    for name, value in (("decoder", decoder), ("k", k), ("lam", lam), ("batch_tokens", batch_tokens)):
        try:
            InferenceOptions.from_dict({name: value} if value is not None else {})
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint=f"--{name.replace('_', '-')}") from exc
    return InferenceOptions(decoder=decoder, k=k, lam=lam, batch_tokens=batch_tokens)


def check_model_options(model: Parser, options: InferenceOptions) -> None:
    """A usage error when ``options`` name a setting the loaded model's type does not have."""
    try:
        model.settings(options)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def text_tokenizer(choice: str, model: Path | None) -> Tokenizer:
    """The tokenizer ``--tokenizer`` names: ``model`` (the model folder's trained one, else the rules), ``rules``, or
    the path of a tokenizer folder (``spandep train-tokenizer`` output, or a model folder that holds one)."""
    from spandep.pipeline.model_io import resolve_model_dir
    from spandep.tokenization import RuleTokenizer, load_tokenizer, tokenizer_for

    if choice == "model":
        return tokenizer_for(resolve_model_dir(model))
    if choice == "rules":
        return RuleTokenizer()
    if not Path(choice).is_dir():
        raise typer.BadParameter(f"use model, rules or a tokenizer folder; {choice!r} is not a folder", param_hint="--tokenizer")
    return load_tokenizer(choice)
