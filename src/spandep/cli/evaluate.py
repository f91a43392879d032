"""``spandep evaluate``: score a predicted CoNLL-U file against a gold one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from spandep.cli.common import check_input, handle_errors
from spandep.errors import OptionError


def evaluate(
    gold: Path = typer.Argument(..., help="Gold CoNLL-U file (its heads must form trees); '-' for stdin.", show_default=False),
    pred: Path = typer.Argument(
        ..., help="Predicted CoNLL-U file spelling the same characters as GOLD (spaces aside); '-' for stdin.", show_default=False
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Print the full report as JSON instead of text tables, stamped as a result file (schema, command, machine)."
    ),
    gold_ud_version: int = typer.Option(
        2, "--gold-ud-version", help="1: GOLD has UD v1 labels (dobj, nsubjpass, ...); it is converted to v2 before scoring.",
    ),
) -> None:
    """Print the CoNLL 2018 shared-task scores (any tokenisation and sentence split: Tokens, Sentences, Words,
    tags, lemmas, UAS, LAS, CLAS, MLAS, BLEX, and LAS on full labels), then, when both files have the same words,
    UAS/LAS with and without punctuation, CLAS, exact match, per-label scores and breakdowns.

    JSON: the CoNLL 2018 scores under "conll18", beside the same-words report's fields when it applies, after the
    stamp of a result file (schema, command, machine, spandep's version and checkout). A UD v1 GOLD
    (--gold-ud-version 1) is scored as UDPipe 1 and the multilingual pool are: converted to v2 (spandep.data.udv1).
    Exit status: 0 ok, 2 malformed or mismatching input, 1 unexpected error.
    """
    from spandep.data.conllu import read_conllu
    from spandep.data.udv1 import to_v2
    from spandep.evaluation.conll18 import evaluate_conll18
    from spandep.evaluation.metrics import evaluate as evaluate_trees
    from spandep.evaluation.metrics import same_words
    from spandep.evaluation.provenance import EVALUATE_SCHEMA, stamp

    with handle_errors():
        if str(gold) == str(pred) == "-":
            raise OptionError("GOLD and PRED cannot both be '-' (standard input): give one of them as a file")
        if gold_ud_version not in (1, 2):
            raise OptionError(f"--gold-ud-version must be 1 or 2, not {gold_ud_version}")
        check_input(gold)
        check_input(pred)
        gold_sents, pred_sents = list(read_conllu(gold)), list(read_conllu(pred))
        if gold_ud_version == 1:
            gold_sents = [to_v2(s) for s in gold_sents]
        conll18 = evaluate_conll18(gold_sents, pred_sents, gold_source=str(gold), system_source=str(pred))
        same = same_words(gold_sents, pred_sents)
        report = evaluate_trees(gold_sents, pred_sents, gold_source=str(gold), pred_source=str(pred)) if same else None
        if json_out:
            fields = {**(report.to_dict() if report is not None else {}), "conll18": conll18.to_dict(), "gold_ud_version": gold_ud_version}
            stamped = stamp(fields, EVALUATE_SCHEMA, "spandep evaluate " + " ".join(sys.argv[2:]))
            typer.echo(json.dumps(stamped, indent=2, ensure_ascii=False))
        else:
            note = "gold converted from UD v1 to v2 (spandep.data.udv1) before scoring\n" if gold_ud_version == 1 else ""
            typer.echo(note + conll18.format_text() + ("" if report is None else "\n" + report.format_text()), nl=False)
