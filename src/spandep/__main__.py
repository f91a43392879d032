"""``python -m spandep``: the same command-line interface as ``spandep``."""

from spandep.cli.main import app

app()
