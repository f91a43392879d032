"""Which labelling conventions the enhancement rules should write for each language (issue 49;
``spandep.enhancement.CONVENTIONS``): on the **dev** split of every treebank here whose splits have enhanced graphs
(DEPS), the gold basic tree, tags, features and lemmas enhanced by the rules under each candidate convention, scored
by the official IWPT 2021 scorer against the gold graph (empty nodes collapsed, as ``enhanced_eval.py`` does),
beside the copy-the-basic-tree baseline. No parser is involved: this chooses how a language's labels are written,
before any model's errors.

    python -m benchmarks.scripts.enhanced_conventions [--data ../shared/data]

writes ``benchmarks/results/enhanced/conventions.json`` and prints one line per treebank (ELAS / EULAS).
Candidates: ``english`` (EWT's: the marker's form, no case, ``conj`` subtypes), ``case`` (the marker's lemma and
the dependent's morphological case, basic subtypes kept, no ``conj`` subtypes) and ``plain`` (no subtypes: the
structural rules only), each with and without the ``relative_pronouns`` rule, and ``copy`` (no rule: the basic
tree). Each language's choice (``languages``) is the candidate with the best mean dev ELAS over its treebanks.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from benchmarks.scripts.enhanced_eval import copied, score
from benchmarks.suite.record import checkout, machine, portable_path, write_json
from benchmarks.suite.systems import DATA, REPO
from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.languages import treebank_language
from spandep.enhancement import RULES, Conventions, enhance
from spandep.enhancement.conventions import CASE, ENGLISH, PLAIN
from spandep.enhancement.collapse import collapse_empty_nodes

CANDIDATES = {
    "english": ENGLISH, "english-no-relative": replace(ENGLISH, without=("relative_pronouns",)),
    "case": CASE, "case-no-relative": replace(CASE, without=("relative_pronouns",)),
    "plain": PLAIN, "plain-no-relative": replace(PLAIN, without=("case_labels", "relative_pronouns")),
    "copy": Conventions(without=tuple(rule.__name__ for rule in RULES)),
}


def dev_files(data: Path) -> list[Path]:
    """The dev split of every treebank under ``data`` (and ``data/devtest_only``) whose words mostly have DEPS."""
    found = []
    for path in sorted([*data.glob("*/*-dev.conllu*"), *data.glob("devtest_only/*/*-dev.conllu*")]):
        words = [w for s in read_conllu(path) for w in s.words]
        if words and sum(w.deps != "_" for w in words) > len(words) / 2:
            found.append(path)
    return found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "enhanced" / "conventions.json")
    args = ap.parse_args(argv)
    result: dict[str, Any] = {
        "schema": "spandep-enhanced-conventions/1",
        "command": "python -m benchmarks.scripts.enhanced_conventions " + " ".join(argv if argv is not None else sys.argv[1:]),
        "candidates": {name: asdict(c) for name, c in CANDIDATES.items()}, **checkout(), "machine": machine(),
        "treebanks": {},
    }
    for path in dev_files(args.data):
        treebank = path.parent.name
        language = treebank_language(treebank)
        sentences = list(read_conllu(path))
        row: dict[str, Any] = {"file": portable_path(path), "language": language.code if language else None}
        with tempfile.TemporaryDirectory() as tmp:
            gold, system = Path(tmp) / "gold.conllu", Path(tmp) / "system.conllu"
            write_conllu(map(collapse_empty_nodes, sentences), gold)
            write_conllu(map(copied, sentences), system)
            row["copy"] = {m: score(gold, system)[m] for m in ("ELAS", "EULAS")}
            for name, conventions in CANDIDATES.items():
                write_conllu((enhance(s, RULES, conventions) for s in sentences), system)
                row[name] = {m: score(gold, system)[m] for m in ("ELAS", "EULAS")}
        row["best"] = max(CANDIDATES, key=lambda name: row[name]["ELAS"])
        result["treebanks"][treebank] = row
        print(treebank, " ".join(f"{k} {row[k]['ELAS']:.2f}/{row[k]['EULAS']:.2f}" for k in ("copy", *CANDIDATES)), "best:", row["best"], flush=True)
    by_language: dict[str, list[dict[str, Any]]] = {}
    for row in result["treebanks"].values():
        by_language.setdefault(row["language"], []).append(row)
    result["languages"] = {
        code: max(CANDIDATES, key=lambda name: sum(r[name]["ELAS"] for r in rows) / len(rows))
        for code, rows in sorted(by_language.items())
    }
    print("chosen:", result["languages"])
    write_json(args.out, result)
    print("wrote", portable_path(args.out))


if __name__ == "__main__":
    main()
