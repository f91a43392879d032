"""``spandep evaluate``: score a predicted CoNLL-U file against a gold one."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from spandep.cli.common import handle_errors


def evaluate(
    gold: Path = typer.Argument(..., help="Gold CoNLL-U file (its heads must form trees).", show_default=False),
    pred: Path = typer.Argument(
        ..., help="Predicted CoNLL-U file, same sentences and word forms as GOLD.", show_default=False
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the full report as JSON instead of a text table."),
) -> None:
    """Print UAS/LAS (with and without punctuation), CLAS, exact match, per-label scores and breakdowns.

    Exit status: 0 ok, 2 malformed or mismatching input, 1 unexpected error.
    """
    from spandep.data.conllu import read_conllu
    from spandep.evaluation.metrics import evaluate as evaluate_trees

    with handle_errors():
        report = evaluate_trees(read_conllu(gold), read_conllu(pred), gold_source=str(gold), pred_source=str(pred))
        if json_out:
            typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        else:
            typer.echo(report.format_text(), nl=False)
