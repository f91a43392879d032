"""The ``spandep`` command: one sub-command per module in this package.

Every error a user can cause is one line on stderr, ``spandep: error: ...``, and an exit status (2 a bad option or
input, 3 a bad model, 4 an output that cannot be written, :mod:`spandep.errors`): a usage error too (an unknown
option, a missing argument), with the command's ``--help`` named. Ctrl-C exits with 130, SIGTERM with 143, each
through the clean-up (no temporary output file is left behind).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from importlib.metadata import version as package_version
from types import FrameType
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer ≥ 0.2x carries its own copy of click, whose exceptions its commands raise
    from typer._click import exceptions as click_errors
except ImportError:  # an older typer uses click itself
    from click import exceptions as click_errors  # type: ignore[no-redef]

from spandep.cli.benchmark_speed import benchmark_speed
from spandep.cli.calibrate import calibrate
from spandep.cli.convert_e5 import convert_e5
from spandep.cli.evaluate import evaluate
from spandep.cli.export import export
from spandep.cli.install_bases import install_bases
from spandep.cli.models import models
from spandep.cli.package_models import package_models
from spandep.cli.parse import parse
from spandep.cli.serve import serve
from spandep.cli.train import train
from spandep.cli.train_tokenizer import train_tokenizer
from spandep.cli.train_heads import train_heads
from spandep.cli.tune import tune


class OneLineErrors(TyperGroup):
    """The ``spandep`` group: click's usage errors as one line naming the command's ``--help``; an exit code
    returned by a command (``typer.Exit``, Ctrl-C's 130) as the process's status."""

    def main(self, args: Any = None, prog_name: str | None = None, **extra: Any) -> Any:
        try:
            code = super().main(args, prog_name or "spandep", standalone_mode=False, **extra)
        except click_errors.NoArgsIsHelpError as exc:  # bare `spandep`: the help
            exc.show()
            sys.exit(exc.exit_code)
        except click_errors.ClickException as exc:
            message = exc.format_message()
            message = message[:1].lower() + message[1:].rstrip(".")
            where = f" ({exc.ctx.command_path} --help)" if isinstance(exc, click_errors.UsageError) and exc.ctx else ""
            typer.echo(f"spandep: error: {' '.join(message.split())}{where}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            code = 130
        except Stopped as exc:
            code = exc.code
        if code in (130, 128 + signal.SIGTERM):  # Ctrl-C (typer's 130) or SIGTERM, after the command's clean-up
            _exit_now(code)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrors, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    help="spandep: span-span and Biaffine dependency parsing.",
)


def _print_version(given: bool) -> None:
    if given:
        typer.echo(f"spandep {package_version('spandep')}")
        raise typer.Exit()


@app.callback()
def _setup(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print spandep's version and exit."),
) -> None:
    """SIGTERM ends a command as Ctrl-C does, through its clean-up (no temporary output file is left behind)."""
    signal.signal(signal.SIGTERM, _terminate)


class Stopped(SystemExit):
    """SIGTERM, raised in the main thread between two Python steps (torch ops included), so that the command's
    clean-up runs as for Ctrl-C."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Stopped(128 + signum)


def _exit_now(code: int) -> None:
    """Exit at once with ``code`` once a stopped command has cleaned up: the interpreter's own teardown with torch
    loaded takes a second or more, which a stop must not wait for. A collection first frees what holds resources
    outside the process (the semaphores of a stopped pool of workers)."""
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    os._exit(code)


app.command()(train)
app.command()(parse)
app.command()(evaluate)
app.command()(tune)
app.command()(export)
app.command()(calibrate)
app.command("benchmark-speed")(benchmark_speed)
app.command("convert-e5")(convert_e5)
app.command()(models)
app.command("install-bases")(install_bases)
app.command("package-models")(package_models)
app.command("train-tokenizer")(train_tokenizer)
app.command("train-heads")(train_heads)
app.command()(serve)

if __name__ == "__main__":
    app()
