"""Write a shipped model's ``card.json`` (the figures ``spandep models`` shows) from a benchmark suite result.

    .venv/bin/python -m benchmarks.scripts.model_card benchmarks/results/en_ewt__span-minilm-default-dp.json \\
        src/spandep/resources/default_model
    .venv/bin/python -m benchmarks.scripts.model_card benchmarks/results/calibration/en.json src/spandep/resources/default_model

The result must be one of the model itself (its ``model`` or ``folder`` field names the folder): the card copies its
test scores and parse speed with the machine, command, commit and date they were measured with, so no figure is
typed by hand. A calibration result (``benchmarks/scripts/calibration_table.py measure``) sets the card's
``calibration`` (test head-probability ECE, distinct values per 1,000 words) and keeps the rest; a suite result
keeps the card's ``calibration``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.suite.record import write_json
from benchmarks.suite.systems import REPO
from spandep.storage.catalogue import card_file

CARD_SCHEMA = "spandep-card/1"
CALIBRATION_SCHEMA = "spandep-calibration/1"  # benchmarks/scripts/calibration_table.py


def card_from_result(result: dict[str, Any], source: str) -> dict[str, Any]:
    """The card of a ``spandep-benchmark/1`` result read from ``source`` (a path relative to the repository)."""
    if result.get("schema") != "spandep-benchmark/1":
        raise SystemExit(f"{source}: not a benchmark suite result (schema {result.get('schema')!r})")
    return {
        "schema": CARD_SCHEMA,
        "test": {
            "treebank": result["dataset"], "split": result["split"], "words": result["words"],
            **{key: round(result[key], 2) for key in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "CLAS")},
        },
        "speed": {
            "words_per_s": result["parse_words_per_s"], "sentences_per_s": result["parse_sent_per_s"],
            "threads": result["threads"], "batch_tokens": result["batch_tokens"], "device": "cpu",
            "cpu": result["machine"]["cpu"], "torch": result["machine"]["torch"],
        },
        "inference": result["inference"],
        "source": {"result": source, "command": result["command"], "git_commit": result["git_commit"], "date": result["date"]},
    }


def calibration_from_result(result: dict[str, Any], source: str) -> dict[str, Any]:
    """The card's ``calibration`` from a ``spandep-calibration/1`` test result read from ``source``."""
    return {
        "kind": result["calibration"].get("kind", "platt"), "treebank": result["treebank"], "split": "test", "words": result["words"],
        **{key: result[key] for key in ("head_ece_raw", "head_ece", "distinct_per_1000", "label_ece", "las_ece")},
        "source": {"result": source, "command": result["command"], "git_commit": result["git_commit"], "cpu": result["machine"]["cpu"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("result", type=Path, help="benchmarks/results/<dataset>__<system>.json of the model")
    parser.add_argument("model", type=Path, help="the shipped model folder to write card.json into")
    parser.add_argument("--treebank", help="for a folder trained on several treebanks: the one the result measured "
                        "(writes card-<treebank>.json, read by the catalogue names with that model_treebank)")
    args = parser.parse_args()
    result = json.loads(args.result.read_text(encoding="utf-8"))
    calibrated = result.get("schema") == CALIBRATION_SCHEMA
    if (REPO / result["folder" if calibrated else "model"]).resolve() != args.model.resolve():
        raise SystemExit(f"{args.result} measured {result['folder' if calibrated else 'model']}, not {args.model}")
    source = str(args.result.resolve().relative_to(REPO))
    path = args.model / card_file(args.treebank)
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if calibrated:
        card = {**old, "calibration": calibration_from_result(result, source)}
    else:
        card = {**card_from_result(result, source), **({"calibration": old["calibration"]} if "calibration" in old else {})}
    write_json(path, card)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
