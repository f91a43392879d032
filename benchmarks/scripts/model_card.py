"""Write a shipped model's ``card.json`` (the figures ``spandep models`` shows) from a benchmark suite result.

    .venv/bin/python -m benchmarks.scripts.model_card benchmarks/results/en_ewt__span-minilm-default-dp.json \\
        src/spandep/resources/default_model
    .venv/bin/python -m benchmarks.scripts.model_card benchmarks/results/calibration/en.json src/spandep/resources/default_model
    .venv/bin/python -m benchmarks.scripts.model_card benchmarks/results/languages/de_gsd__{gold,raw}.json \\
        benchmarks/results/calibration/de.json src/spandep/resources/multilingual --treebank de_gsd

Several results are applied in order and the card written once. Each must be one of the model itself (its ``model``
or ``folder`` field names the folder): the card copies its test scores and parse speed with the machine, command,
commit and date they were measured with, so no figure is typed by hand. A calibration result (``benchmarks/scripts/calibration_table.py measure``) sets the card's
``calibration`` (test head-probability ECE, distinct values per 1,000 words) and keeps the rest; a suite result
keeps the card's ``calibration`` and ``end_to_end``. An end-to-end result on test (``benchmarks.suite.raw_text``, ``--mode gold`` or
raw text) sets the card's ``end_to_end[mode]``: the official CoNLL 2018 F1 of every metric, the treebank's UD release
and training split (as the result records them, else as the pool's manifest does) and, from gold tokens, our
own UAS / LAS, which ``spandep models`` shows for a card without a suite result (a treebank of the pool).
``--speed RESULT``: the card's ``speed`` from a gold-token result of the same folder timed with ``--rounds N`` (a
folder of several treebanks is timed on one treebank, named in the card).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.suite.record import write_json
from benchmarks.suite.systems import REPO, pool_entries
from spandep.storage.catalogue import card_file

CARD_SCHEMA = "spandep-card/1"
CALIBRATION_SCHEMA = "spandep-calibration/1"  # benchmarks/scripts/calibration_table.py
RAW_TEXT_SCHEMA = "spandep-raw-text/1"  # benchmarks/suite/raw_text.py
OFFICIAL = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "Lemmas", "UAS", "LAS", "CLAS", "MLAS", "BLEX")


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


def end_to_end_from_result(result: dict[str, Any], source: str) -> dict[str, Any]:
    """The card's ``end_to_end[mode]`` from a ``spandep-raw-text/1`` result on test read from ``source``."""
    if result.get("split") != "test":
        raise SystemExit(f"{source}: a card's figures are of the test split, not {result.get('split')!r}")
    ours = {key: round(result["ours"][key], 2) for key in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct")} if result["mode"] == "gold" else {}
    pooled = pool_entries().get(result["treebank"], {})  # a suite treebank's result has no release: the pool's manifest
    return {
        "treebank": result["treebank"], "ud_release": result.get("ud_release", pooled.get("release")),
        "train_split": result.get("train_split", pooled.get("train_split")),
        "words": result["conll18"]["Words"]["gold"], "official_f1": {key: round(result["conll18"][key]["f1"], 2) for key in OFFICIAL},
        **({"ours": ours} if ours else {}),
        "source": {"result": source, "command": result["command"], "git_commit": result["git_commit"], "date": result["date"]},
    }


def speed_from_result(result: dict[str, Any], source: str) -> dict[str, Any]:
    """The card's ``speed`` from a ``spandep-raw-text/1`` gold-token result timed on test (``--rounds N``), read
    from ``source``: words per second parsing gold tokens, model load excluded, and the treebank it was timed on (a
    folder of several treebanks is timed on one, its speed shown for each of its names)."""
    if result.get("schema") != RAW_TEXT_SCHEMA or result.get("mode") != "gold" or result.get("words_per_s") is None:
        raise SystemExit(f"{source}: not a timed gold-token result (benchmarks.suite.raw_text --mode gold --rounds N)")
    return {
        "words_per_s": result["words_per_s"], "threads": result["threads"], "device": "cpu", "cpu": result["machine"]["cpu"],
        "treebank": result["treebank"], "rounds": result["rounds"],
        "source": {"result": source, "command": result["command"], "git_commit": result["git_commit"], "date": result["date"]},
    }


def updated_card(old: dict[str, Any], result: dict[str, Any], source: str) -> dict[str, Any]:
    """The card ``old`` with what ``result`` (read from ``source``) measured: its calibration, one end-to-end mode, or
    the suite's test scores and speed (the card's calibration and end-to-end parts kept)."""
    if result.get("schema") == CALIBRATION_SCHEMA:
        return {"schema": CARD_SCHEMA, **old, "calibration": calibration_from_result(result, source)}
    if result.get("schema") == RAW_TEXT_SCHEMA:
        return {"schema": CARD_SCHEMA, **old, "end_to_end": {**old.get("end_to_end", {}), result["mode"]: end_to_end_from_result(result, source)}}
    return {**card_from_result(result, source), **{key: old[key] for key in ("calibration", "end_to_end") if key in old}}


def result_of(file: Path, model: Path) -> dict[str, Any]:
    """The result in ``file``, which must have measured the folder ``model`` (its ``folder``, or ``model``, field)."""
    result = json.loads(file.read_text(encoding="utf-8"))
    folder = result["folder" if result.get("schema") == CALIBRATION_SCHEMA else "model"]
    if (REPO / folder).resolve() != model.resolve():
        raise SystemExit(f"{file} measured {folder}, not {model}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, nargs="+", help="benchmarks/results/<dataset>__<system>.json of the model (or "
                        "its calibration or end-to-end results), applied in order")
    parser.add_argument("model", type=Path, help="the shipped model folder to write card.json into")
    parser.add_argument("--treebank", help="for a folder trained on several treebanks: the one the results measured "
                        "(writes card-<treebank>.json, read by the catalogue names with that model_treebank)")
    parser.add_argument("--speed", type=Path, help="a timed gold-token result of the same folder (any of its treebanks): "
                        "the card's speed")
    args = parser.parse_args()
    path = args.model / card_file(args.treebank)
    card = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for file in args.results:
        result = result_of(file, args.model)
        measured = result.get("model_treebank", result.get("treebank"))
        if args.treebank and measured != args.treebank:
            raise SystemExit(f"{file} measured treebank {measured}, not {args.treebank}")
        card = updated_card(card, result, str(file.resolve().relative_to(REPO)))
    if args.speed:
        card = {"schema": CARD_SCHEMA, **card, "speed": speed_from_result(result_of(args.speed, args.model), str(args.speed.resolve().relative_to(REPO)))}
    write_json(path, card)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
