"""Helpers shared by the sub-commands."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import typer

from spandep.errors import SpandepError

__all__ = ["check_inference_options", "handle_errors", "error_message"]


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


def check_inference_options(decoder: str | None, k: int | None) -> None:
    """Reject an unknown ``--decoder`` or a ``--k`` below 1 before any model is loaded."""
    from spandep.pipeline.predict import check_decoder_name  # imports torch: only once a command runs

    try:
        check_decoder_name(decoder)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--decoder") from exc
    if k is not None and k < 1:
        raise typer.BadParameter("k must be at least 1", param_hint="--k")
