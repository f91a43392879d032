"""What a voting ensemble of several runs of one recipe would give on dev: an experiment, not a shipped parser.

    .venv/bin/python -m benchmarks.scripts.seed_vote --dataset it_partut \\
        --models src/spandep/resources/it_partut runs/multilingual/it_partut-seed2/model \\
                 runs/multilingual/it_partut-seed3/model runs/multilingual/it_partut-seed4/model \\
        --out benchmarks/results/multilingual/it_partut__seed_vote.json

Each model parses the dev split's gold tokens (every column but FORM and MISC blanked, as ``benchmarks.suite.raw_text
--mode gold``) with its saved settings. The ensemble's tree is the maximum spanning tree of the members' head votes
(``spandep.decoding.mst``, one vote per member and word; an arc no member chose scores below every chosen one), each
word's label the one most of the members that chose its head gave (the first member's where none did), and UPOS,
XPOS, FEATS and LEMMA each the members' majority; ties go to the member listed first. Every member and the ensemble
are scored by the CoNLL 2018 scorer (all words, universal LAS); the JSON also keeps each member's parse time (one
thread), the ensemble's cost being their sum.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.suite.raw_text import blank, model_parser
from benchmarks.suite.record import machine
from benchmarks.suite.systems import DATASETS
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.decoding.mst import mst_single
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.storage.model_io import load_model

COLUMNS = ("upos", "xpos", "feats", "lemma")
UNCHOSEN = -1.0  # the score of an arc no member chose: below every chosen arc's vote count
FIRST = 0.5  # the first member's arcs get FIRST / (n + 1) more each: under 1 over a whole tree, so it only breaks ties


def majority(values: list[str]) -> str:
    """The most frequent value; a tie goes to the value seen first (the earlier member's: ``most_common`` keeps equal
    counts in the order first met)."""
    return Counter(values).most_common(1)[0][0]


def vote(members: list[Sentence]) -> Sentence:
    """One sentence from the members' parses of it (see the module docstring)."""
    first, n = members[0], len(members[0].words)
    counts = np.zeros((n + 1, n + 1))  # (1 + n, 1 + n): [dependent, head]
    for rank, member in enumerate(members):
        for w in member.words:
            counts[w.id, int(w.head or 0)] += 1.0 + (FIRST / (n + 1) if rank == 0 else 0.0)
    votes = np.where(counts > 0, counts, UNCHOSEN)  # (1 + n, 1 + n)
    np.fill_diagonal(votes, -np.inf)
    heads = mst_single(votes).tolist()  # (1 + n,)
    words = []
    for i, w in enumerate(first.words):
        agree = [m.words[i].deprel for m in members if m.words[i].head == heads[w.id]]
        columns = {c: majority([getattr(m.words[i], c) for m in members]) for c in COLUMNS}
        words.append(replace(w, head=heads[w.id], deprel=majority(agree) if agree else w.deprel, head_prob=None, label_prob=None, **columns))
    return replace(first, words=words)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    ap.add_argument("--split", default="dev", choices=["dev"], help="dev only: the ensemble is an experiment chosen on dev")
    ap.add_argument("--models", type=Path, nargs="+", required=True, help="model folders, the tie-breaking one first")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    gold = list(read_conllu(DATASETS[args.dataset].dev))
    inputs = [blank(s) for s in gold]
    parses, members = [], []
    for folder in args.models:
        parse, _ = model_parser(load_model(folder, "cpu"), args.dataset)
        start = time.perf_counter()
        predicted = parse(inputs)
        seconds = time.perf_counter() - start
        parses.append(predicted)
        report = evaluate_conll18(gold, predicted, gold_source="gold", system_source=str(folder)).to_dict()
        members.append({"model": str(folder), "seconds": round(seconds, 2), "conll18": report})
        print(f"{folder}: LAS {report['LAS']['f1']:.2f} MLAS {report['MLAS']['f1']:.2f} ({seconds:.1f} s)")
    voted = [vote(list(group)) for group in zip(*parses)]
    report = evaluate_conll18(gold, voted, gold_source="gold", system_source="vote").to_dict()
    print(f"vote of {len(parses)}: LAS {report['LAS']['f1']:.2f} MLAS {report['MLAS']['f1']:.2f}")
    result: dict[str, Any] = {
        "schema": "spandep-seed-vote/1", "machine": machine(),
        "treebank": args.dataset, "split": args.split, "mode": "gold", "members": members, "vote": {"conll18": report},
        "threads": 1, "command": "python -m benchmarks.scripts.seed_vote " + " ".join(argv or sys.argv[1:]),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
