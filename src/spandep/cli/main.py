"""The ``spandep`` command: one sub-command per module in this package."""

from __future__ import annotations

import signal
import sys
from types import FrameType

import typer

from spandep.cli.benchmark_speed import benchmark_speed
from spandep.cli.calibrate import calibrate
from spandep.cli.convert_e5 import convert_e5
from spandep.cli.evaluate import evaluate
from spandep.cli.export import export
from spandep.cli.install_bases import install_bases
from spandep.cli.models import models
from spandep.cli.parse import parse
from spandep.cli.serve import serve
from spandep.cli.train import train
from spandep.cli.train_tokenizer import train_tokenizer
from spandep.cli.tune import tune

app = typer.Typer(add_completion=False, no_args_is_help=True, help="spandep: span-span and Biaffine dependency parsing.")


@app.callback()
def _setup() -> None:
    """SIGTERM ends a command as Ctrl-C does, through its clean-up (no temporary output file is left behind)."""
    signal.signal(signal.SIGTERM, _terminate)


def _terminate(signum: int, frame: FrameType | None) -> None:
    sys.exit(128 + signum)


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
app.command("train-tokenizer")(train_tokenizer)
app.command()(serve)

if __name__ == "__main__":
    app()
