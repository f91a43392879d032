"""Trained tokenizers stored in float16, as a compact export ships them, against their float32 weights, on dev.

    python -m benchmarks.scripts.tokenizer_float16 de_gsd=runs/tokenizers/de_gsd/tokenizer zh_gsd=... \\
        --out benchmarks/results/tokenizer/float16__dev.json

Each ``TREEBANK=FOLDER`` (a trained tokenizer of a treebank that ``tokenizer_scores`` knows) is loaded as saved and
as a compact export copies it (``spandep.storage.model_io.copy_tokenizer``: float16 weights); each tokenizes
the raw text of the treebank's dev split (``tokenizer_scores.score_split``: the text the trainer learns from), and is
scored by the official CoNLL 2018 scorer; ``same_output`` says whether the two wrote the same sentences and words.
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


def compare(folder: Path, gold: Path) -> dict[str, Any]:
    """The tokenizer in ``folder`` as saved and in float16, each scored on ``gold``'s raw text."""
    with tempfile.TemporaryDirectory() as tmp:
        half = Path(tmp) / "tokenizer"
        copy_tokenizer(folder, half, compact=True)  # as a compact export copies it
        tokenizers = {"float32": load_tokenizer(folder, resolve_model_path), "float16": load_tokenizer(half, resolve_model_path)}
        text = raw_text(read_paragraphs(gold))
        outputs = {name: [s.forms for s in t.tokenize(text)] for name, t in tokenizers.items()}
        scores = {name: score_split(t, gold) for name, t in tokenizers.items()}
        sizes = {"float32": (folder / WEIGHTS_FILE).stat().st_size, "float16": (half / WEIGHTS_FILE).stat().st_size}
    return {
        "tokenizer": portable_path(folder), "dev": portable_path(gold), "weights_bytes": sizes,
        **{name: {m: scores[name][m]["f1"] for m in METRICS} for name in tokenizers},
        "same_output": outputs["float32"] == outputs["float16"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tokenizers", nargs="+", help="TREEBANK=FOLDER")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = {}
    for item in args.tokenizers:
        treebank, _, folder = item.partition("=")
        if treebank not in TREEBANKS or not folder:
            ap.error(f"{item!r}: give TREEBANK=FOLDER, TREEBANK one of tokenizer_scores' treebanks")
        rows[treebank] = compare(Path(folder), split_file(args.data, treebank, "dev"))
        row = rows[treebank]
        print(treebank, "float32", row["float32"], "float16", row["float16"], "same output:", row["same_output"])
    write_json(args.out, {
        "schema": "spandep-tokenizer-float16/1", "treebanks": rows,
        "command": "python -m benchmarks.scripts.tokenizer_float16 " + " ".join(f"{t}={row['tokenizer']}" for t, row in rows.items())
        + f" --out {portable_path(args.out)}",
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
