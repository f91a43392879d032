"""Helpers shared by the sub-commands."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from spandep.checks import Range, device_problem
from spandep.errors import InputFormatError, OptionError, SpandepError
from spandep.options import InferenceOptions
from spandep.limits import limit

if TYPE_CHECKING:
    from spandep.api import ModelSpec, Pipeline
    from spandep.models.base import Parser
    from spandep.tokenization.text import Tokenizer

__all__ = [
    "BATCH_TOKENS", "DEVICE", "THREADS", "bound", "check_input", "check_model_options", "check_options",
    "error_message", "handle_errors", "inference_options", "load_pipeline", "text_tokenizer",
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
    (no traceback). A reader of the output that went away (``spandep parse IN | head -1``) ends the command quietly
    with status 0, as Unix tools do. Any other exception propagates (exit status 1: a bug).

    Usable as a context manager (``with handle_errors(): ...``) or as a decorator (``@handle_errors()``)
    of a command function.
    """
    try:
        yield
    except SpandepError as exc:
        typer.echo(error_message(exc), err=True)
        raise typer.Exit(code=exc.exit_code) from None
    except BrokenPipeError:
        # Python's recipe (the signal module's docs, "Note on SIGPIPE"): what is left in stdout's buffer would fail
        # again at exit, so stdout goes to devnull
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(code=0) from None


def bound(name: str) -> Range:
    """The values :data:`spandep.limits.LIMITS` allows for ``name``."""
    return limit(name).allowed


def check_options(*checks: tuple[str, object, Range | None]) -> None:
    """An :class:`OptionError` naming the first option whose value is out of its :class:`Range` (``None`` for the
    range: a device name; ``None`` for the value: not given)."""
    for option, value, allowed in checks:
        problem = None if value is None else device_problem(option, value) if allowed is None else allowed.problem(option, value)
        if problem:
            raise OptionError(problem)


def check_input(path: Path, *, stdin: bool = True) -> None:
    """An :class:`InputFormatError` for an input path that is no file (a directory, nothing there); ``-`` is
    standard input where ``stdin``."""
    if stdin and str(path) == "-":
        return
    if path.is_dir():
        raise InputFormatError(str(path), 0, "is a directory; give one file (for a folder of files, one command per file)")
    if not path.exists():
        raise InputFormatError(str(path), 0, "file not found")


def inference_options(
    decoder: str | None, k: int | None, lam: float | None, batch_tokens: int, treebank: str | None = None, precision: str | None = None
) -> InferenceOptions:
    """The options of ``--decoder``, ``--k``, ``--lam``, ``--batch-tokens``, ``--treebank`` and ``--precision``,
    checked before any model is loaded (a bad value is an :class:`OptionError` naming its option)."""
    given = (("decoder", decoder), ("k", k), ("lam", lam), ("batch_tokens", batch_tokens), ("treebank", treebank), ("precision", precision))
    for name, value in given:
        try:
            InferenceOptions.from_dict({name: value} if value is not None else {})
        except ValueError as exc:
            option, message = f"--{name.replace('_', '-')}", str(exc)
            raise OptionError(option + message[len(name):] if message.startswith(f"{name} ") else f"{option}: {message}") from None
    return InferenceOptions(decoder=decoder, k=k, lam=lam, batch_tokens=batch_tokens, treebank=treebank, precision=precision)


def check_model_options(model: Parser, options: InferenceOptions, option: str = "") -> None:
    """An :class:`OptionError` (after ``option``, the one to blame) when ``options`` name a setting the loaded model's
    type does not have."""
    try:
        model.settings(options)
    except ValueError as exc:
        raise OptionError(f"{option}: {exc}" if option else str(exc)) from None


def load_pipeline(spec: ModelSpec) -> Pipeline:
    """The pipeline of ``spec`` (:meth:`~spandep.api.ModelSpec.load`); an :class:`OptionError` when its options name a
    setting the model's type does not have, or a treebank it does not (or no treebank of a model of several)."""
    try:
        return spec.load()
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def text_tokenizer(choice: str, nlp: Pipeline) -> Tokenizer:
    """The tokenizer ``--tokenizer`` names: ``model`` (the pipeline's: its model folder's trained one, that of its
    treebank in a model of several, else the rules), ``rules``, or the path of a tokenizer folder (``spandep
    train-tokenizer`` output, or a model folder that holds one)."""
    from spandep.encoders.bases import resolve_model_path
    from spandep.tokenization import RuleTokenizer, load_tokenizer

    if choice == "model":
        return nlp.tokenizer
    if choice == "rules":
        return RuleTokenizer()
    if not Path(choice).is_dir():
        raise OptionError(f"--tokenizer: use model, rules or a tokenizer folder; {choice!r} is not a folder")
    return load_tokenizer(choice, resolve_model_path)
