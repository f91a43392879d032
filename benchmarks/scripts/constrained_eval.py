"""Parsing that keeps given heads (issue 49, docs/constrained.md): a treebank's splits parsed from gold tokens with a
share of the gold heads (and their labels) given at random, seeded, against the same words parsed without any.

For each split and share: how many given heads and labels the parse kept (the bar: all), how many trees are well
formed, and UAS / LAS (every word, punctuation included) on the words whose head was not given, beside the
unconstrained parse's UAS / LAS on the same words. The input is the forms only (every other column ``_``), parsed
through ``Pipeline.parse_sentences(..., keep="heads,deprels")``, the path of every front end; with ``--cli`` each
constrained test split is also parsed by ``spandep parse --keep heads,deprels`` and its trees checked identical.

    PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.constrained_eval --cli \\
        --out benchmarks/results/constrained/en_ewt.json

Writes ``spandep-constrained/1``: the command, the machine, the checkout, the model, and per split and share the
figures above.
"""

from __future__ import annotations

import argparse
import random
import shlex
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import torch

import spandep
from benchmarks.suite.record import portable_path, stamp, write_json
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.data.trees import tree_problems
from spandep.data.writers import write_sentences
from spandep.options import InferenceStats

SCHEMA = "spandep-constrained/1"
DATA = Path("../shared/data/en_ewt")
BLANK = ("lemma", "upos", "xpos", "feats", "deprel", "deps", "misc")


def forms_only(gold: list[Sentence]) -> list[Sentence]:
    """The gold sentences with every column but FORM ``_`` (HEAD included)."""
    return [replace(b, words=[replace(w, head=None) for w in b.words]) for b in (s.blanked(BLANK) for s in gold)]


def with_given(gold: list[Sentence], share: float, seed: int) -> tuple[list[Sentence], set[tuple[int, int]]]:
    """The forms-only sentences with ``share`` of all gold heads (and their labels) given, chosen at random (``seed``),
    and which words they are ``(sentence, word index)``."""
    words = [(i, j) for i, s in enumerate(gold) for j in range(len(s))]
    chosen = set(random.Random(seed).sample(words, round(share * len(words))))
    out = []
    for i, (g, s) in enumerate(zip(gold, forms_only(gold))):
        given = [replace(w, head=gw.head, deprel=gw.deprel) if (i, j) in chosen else w for j, (w, gw) in enumerate(zip(s.words, g.words))]
        out.append(replace(s, words=given))
    return out, chosen


def scores(parsed: list[Sentence], gold: list[Sentence], given: set[tuple[int, int]]) -> dict[str, float | int]:
    """UAS and LAS (%) over the words not in ``given``, and how many they are."""
    words = right = labelled = 0
    for i, (p, g) in enumerate(zip(parsed, gold)):
        for j, (wp, wg) in enumerate(zip(p.words, g.words)):
            if (i, j) not in given:
                words += 1
                right += wp.head == wg.head
                labelled += wp.head == wg.head and wp.deprel == wg.deprel
    return {"words": words, "uas": round(100 * right / words, 2), "las": round(100 * labelled / words, 2)}


def cli_identical(model: str, given: list[Sentence], parsed: list[Sentence]) -> bool:
    """Whether ``spandep parse --keep heads,deprels`` gives the trees the API gave."""
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "given.conllu", Path(tmp) / "out.conllu"
        write_sentences(given, source, "conllu")
        subprocess.run([sys.executable, "-m", "spandep", "parse", str(source), "-o", str(out), "-m", model, "--keep", "heads,deprels", "--threads", "1"], check=True)
        return [(s.heads, s.deprels) for s in read_conllu(out)] == [(s.heads, s.deprels) for s in parsed]


def evaluate(nlp: spandep.api.Pipeline, model: str, path: Path, shares: list[float], seed: int, cli: bool, limit: int) -> dict:
    """One split's figures at every share."""
    gold = list(read_conllu(path))[: limit or None]
    free = list(nlp.parse_sentences(forms_only(gold)))
    rows = []
    for share in shares:
        given, chosen = with_given(gold, share, seed)
        stats = InferenceStats()
        parsed = list(nlp.run(given, nlp.options_for(keep="heads,deprels"), stats=stats))
        kept_heads = sum(parsed[i].words[j].head == gold[i].words[j].head for i, j in chosen)
        kept_labels = sum(parsed[i].words[j].deprel == gold[i].words[j].deprel for i, j in chosen)
        row = {
            "share": share, "given": len(chosen), "kept_heads": kept_heads, "kept_deprels": kept_labels,
            "well_formed": sum(tree_problems(s.heads) == [] for s in parsed), "sentences": len(parsed),
            "dp_fallbacks": stats.dp_fallbacks, "constrained": scores(parsed, gold, chosen), "unconstrained": scores(free, gold, chosen),
        }
        if cli:
            row["cli_identical"] = cli_identical(model, given, parsed)
        rows.append(row)
        print(path.name, row, flush=True)
    return {"file": portable_path(path), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="en")
    ap.add_argument("--splits", nargs="+", default=["dev", "test"])
    ap.add_argument("--shares", nargs="+", type=float, default=[0.0, 0.1, 0.25, 0.5])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cli", action="store_true", help="also parse each constrained test split with spandep parse --keep")
    ap.add_argument("--limit", type=int, default=0, help="the first N sentences of each split only (a quick check)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    nlp = spandep.load(args.model, threads=1)
    splits = {split: evaluate(nlp, args.model, DATA / f"en_ewt-ud-{split}.conllu", args.shares, args.seed, args.cli and split == "test", args.limit)
              for split in args.splits}
    command = "python -m benchmarks.scripts.constrained_eval " + shlex.join(sys.argv[1:])
    write_json(args.out, stamp({"model": args.model, "seed": args.seed, "splits": splits}, SCHEMA, command))


if __name__ == "__main__":
    main()
