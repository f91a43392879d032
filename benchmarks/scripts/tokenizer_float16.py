"""Trained tokenizers stored in float16, as a compact export ships them, against their float32 weights, on dev;
with ``--int8``, also in int8 rows, as an ``--int8-all`` export ships them.

    python -m benchmarks.scripts.tokenizer_float16 de_gsd=runs/tokenizers/de_gsd/tokenizer zh_gsd=... \\
        --out benchmarks/results/tokenizer/float16__dev.json
    python -m benchmarks.scripts.tokenizer_float16 --int8 --pool runs/tokenizers-all --out benchmarks/results/tokenizer/int8__dev.json

Each ``TREEBANK=FOLDER`` (a trained tokenizer of a treebank that ``tokenizer_scores`` knows; ``--pool DIR``: every
``DIR/<treebank>/tokenizer``) is loaded as saved and as a compact export copies it
(``spandep.storage.model_io.copy_tokenizer``: float16 weights, or int8 rows); each tokenizes the raw text of the
treebank's dev split (``tokenizer_scores.score_split``: the text the trainer learns from), and is scored by the
official CoNLL 2018 scorer; ``same_output`` says whether float16 wrote the same sentences and words as float32,
``int8_same_as_float16`` whether int8 wrote the same as float16 (what the model shipped before).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from benchmarks.scripts.tokenizer_scores import METRICS, TREEBANKS, score_split, split_file
from benchmarks.suite.record import checkout, machine, portable_path, write_json
from benchmarks.suite.systems import DATA
from spandep.encoders.bases import resolve_model_path
from spandep.storage.model_io import copy_tokenizer
from spandep.tokenization.corpus import raw_text, read_paragraphs
from spandep.tokenization.trained import WEIGHTS_FILE, load_tokenizer


def compare(folder: Path, gold: Path, int8: bool = False, split: str = "dev") -> dict[str, Any]:
    """The tokenizer in ``folder`` as saved, in float16 and (``int8``) in int8 rows, each scored on ``gold``'s raw
    text."""
    with tempfile.TemporaryDirectory() as tmp:
        copies = {"float32": folder, "float16": Path(tmp) / "float16"} | ({"int8": Path(tmp) / "int8"} if int8 else {})
        for name, copy in copies.items():
            if name != "float32":
                copy_tokenizer(folder, copy, compact=True, int8=name == "int8")  # as a compact export copies it
        tokenizers = {name: load_tokenizer(copy, resolve_model_path) for name, copy in copies.items()}
        text = raw_text(read_paragraphs(gold))
        outputs = {name: [s.forms for s in t.tokenize(text)] for name, t in tokenizers.items()}
        scores = {name: score_split(t, gold) for name, t in tokenizers.items()}
        sizes = {name: (copy / WEIGHTS_FILE).stat().st_size for name, copy in copies.items()}
    return {
        "tokenizer": portable_path(folder), split: portable_path(gold), "weights_bytes": sizes,
        **{name: {m: scores[name][m]["f1"] for m in METRICS} for name in tokenizers},
        "same_output": outputs["float32"] == outputs["float16"],
        **({"int8_same_as_float16": outputs["int8"] == outputs["float16"]} if int8 else {}),
    }


def summary(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Totals over ``rows``: weights bytes of each form, mean F1 of each metric, how many wrote what float16 wrote."""
    forms = [f for f in ("float32", "float16", "int8") if all(f in row for row in rows.values())]
    return {
        "treebanks": len(rows),
        "weights_bytes": {f: sum(row["weights_bytes"][f] for row in rows.values()) for f in forms},
        "mean_f1": {f: {m: round(sum(row[f][m] for row in rows.values()) / len(rows), 3) for m in METRICS} for f in forms},
        **({"int8_same_as_float16": sum(row["int8_same_as_float16"] for row in rows.values())} if "int8" in forms else {}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tokenizers", nargs="*", help="TREEBANK=FOLDER")
    ap.add_argument("--pool", type=Path, help="every DIR/<treebank>/tokenizer of a treebank tokenizer_scores knows")
    ap.add_argument("--int8", action="store_true", help="also the int8 rows of an --int8-all export")
    ap.add_argument("--split", choices=("dev", "test"), default="dev", help="dev chooses; test reports what a choice made on dev does")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    items = list(args.tokenizers)
    if args.pool is not None:
        items += [f"{p.parent.name}={p}" for p in sorted(args.pool.glob("*/tokenizer")) if p.parent.name in TREEBANKS]
    if not items:
        ap.error("give TREEBANK=FOLDER or --pool DIR")
    rows = {}
    for item in items:
        treebank, _, folder = item.partition("=")
        if treebank not in TREEBANKS or not folder:
            ap.error(f"{item!r}: give TREEBANK=FOLDER, TREEBANK one of tokenizer_scores' treebanks")
        rows[treebank] = compare(Path(folder), split_file(args.data, treebank, args.split), args.int8, args.split)
        row = rows[treebank]
        print(treebank, *(f"{name} {row[name]}" for name in ("float32", "float16", "int8") if name in row), "same output:",
              row["same_output"], row.get("int8_same_as_float16", ""), flush=True)
    given = " ".join(args.tokenizers) + (f" --pool {portable_path(args.pool)}" if args.pool else "") + (" --int8" if args.int8 else "") + (f" --split {args.split}" if args.split != "dev" else "")
    write_json(args.out, {
        "schema": "spandep-tokenizer-float16/1", "split": args.split, "treebanks": rows,
        "summary": summary(rows),
        "command": f"python -m benchmarks.scripts.tokenizer_float16 {given.strip()} --out {portable_path(args.out)}",
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
