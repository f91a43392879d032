"""``spandep package-models [NAME...] -o DIR``: one wheel per language model, its own distribution (``make models``
builds and installs them; :mod:`spandep.storage.packaging`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from spandep.cli.common import handle_errors
from spandep.errors import OptionError


def package_models(
    names: Optional[list[str]] = typer.Argument(
        None, metavar="[NAME]...", help="Shipped models by name, treebank or language (default: every one outside the core wheel).",
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to write the wheels into (made if missing)."),
    changed: bool = typer.Option(
        False, "--changed", help="Only the models whose distribution is not installed here as its source folder is "
        "(version and every file's SHA-256): what `make models` installs again.",
    ),
) -> None:
    """Build each language model of spandep's own resources (a source checkout) into a wheel of its own,
    spandep-model-<folder>, to install with pip: the core wheel carries the English models only. Prints each wheel."""
    with handle_errors():
        from spandep.storage.catalogue import CORE, find, read_catalogue
        from spandep.storage.packaging import build_wheel, up_to_date

        lines = read_catalogue()[1]
        chosen = [find(name, lines) for name in names] if names else [m for m in lines.values() if m.package() != CORE]
        for name, model in zip(names or (), chosen):
            if model is None:
                raise OptionError(f"{name!r} names no line of the catalogue; use one of {', '.join(lines)}")
            if model.package() == CORE:
                raise OptionError(f"{name!r} ships inside the core spandep wheel, not as a distribution of its own")
        by_package = {m.package(): m for m in chosen if m is not None}  # lines sharing a folder: one distribution
        for model in by_package.values():
            if not (changed and up_to_date(model)):
                typer.echo(build_wheel(model, output))
