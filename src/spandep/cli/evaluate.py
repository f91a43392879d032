"""``spandep evaluate``: score a predicted CoNLL-U file against a gold one."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from spandep.cli.common import check_input, handle_errors
from spandep.errors import OptionError


def evaluate(
    gold: Path = typer.Argument(..., help="Gold CoNLL-U file (its heads must form trees); '-' for stdin.", show_default=False),
    pred: Path = typer.Argument(
        ..., help="Predicted CoNLL-U file spelling the same characters as GOLD (spaces aside); '-' for stdin.", show_default=False
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the full report as JSON instead of text tables."),
) -> None:
    """Print the CoNLL 2018 shared-task scores (any tokenisation and sentence split: Tokens, Sentences, Words,
    tags, lemmas, UAS, LAS, CLAS, MLAS, BLEX, and LAS on full labels), then, when both files have the same words,
    UAS/LAS with and without punctuation, CLAS, exact match, per-label scores and breakdowns.

    JSON: the CoNLL 2018 scores under "conll18", beside the same-words report's fields when it applies.
    Exit status: 0 ok, 2 malformed or mismatching input, 1 unexpected error.
    """
    from spandep.data.conllu import read_conllu
    from spandep.evaluation.conll18 import evaluate_conll18
    from spandep.evaluation.metrics import evaluate as evaluate_trees
    from spandep.evaluation.metrics import same_words

    with handle_errors():
        if str(gold) == str(pred) == "-":
            raise OptionError("GOLD and PRED cannot both be '-' (standard input): give one of them as a file")
        check_input(gold)
        check_input(pred)
        gold_sents, pred_sents = list(read_conllu(gold)), list(read_conllu(pred))
        conll18 = evaluate_conll18(gold_sents, pred_sents, gold_source=str(gold), system_source=str(pred))
        same = same_words(gold_sents, pred_sents)
        report = evaluate_trees(gold_sents, pred_sents, gold_source=str(gold), pred_source=str(pred)) if same else None
        if json_out:
            fields = report.to_dict() if report is not None else {}
            typer.echo(json.dumps({**fields, "conll18": conll18.to_dict()}, indent=2, ensure_ascii=False))
        else:
            typer.echo(conll18.format_text() + ("" if report is None else "\n" + report.format_text()), nl=False)
