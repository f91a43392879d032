"""Heads fine-tuned on a trained model (issue 45, BENCHMARKS.md "Heads fine-tuned on a trained model"): a model and
its ``spandep train-heads`` output scored side by side on one split.

    python -m benchmarks.scripts.heads_finetune ru runs/heads/ru/model --dataset ru_taiga --split dev

Both models parse the split once from its forms (every other column blanked), at their saved inference settings, and
are scored by the CoNLL 2018 definitions (``benchmarks.scripts.morph_dev.figures``: UPOS, UFeats, Lemmas, UAS, LAS,
MLAS, BLEX), with the lemma accuracy on words whose form no training word has; the trees of the two are compared
too (they must be the same). The result goes to ``benchmarks/results/heads/<dataset>__<split>.json``
(``<dataset>__<split>__<step>.json`` with ``--step``; ``--label L`` writes ``L`` for ``<dataset>``).
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import Any

import torch

from benchmarks.scripts.morph_dev import figures, unseen_lemmas
from benchmarks.suite.raw_text import blank
from benchmarks.suite.record import checkout, command_line, machine, portable_path, write_json
from benchmarks.suite.systems import DATASETS, REPO
from spandep.data.conllu import read_conllu
from spandep.pipeline.predict import with_tree
from spandep.storage.model_io import load_model, resolve_model_dir

RESULTS = REPO / "benchmarks" / "results" / "heads"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="the input model (a shipped name or a folder)")
    ap.add_argument("after", help="its spandep train-heads output (OUTPUT/model)")
    ap.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--step", default="", help="a name for the run: the result goes to <dataset>__<split>__<step>.json")
    ap.add_argument("--label", help="the file's first part instead of the dataset (a second model of one dataset in a step)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dataset = DATASETS[args.dataset]
    gold = list(read_conllu(str(getattr(dataset, args.split))))
    train_forms = {w.form for s in read_conllu(str(dataset.train)) for w in s.words}
    inputs = [blank(s) for s in gold]
    result: dict[str, Any] = {"schema": "spandep-heads-finetune/1", "dataset": args.dataset, "split": args.split}
    trees = []
    for side, name in (("before", args.before), ("after", args.after)):
        folder = resolve_model_dir(name)
        parses = load_model(folder).parse(inputs)
        trees.append([(p.heads, p.labels) for p in parses])
        predicted = [with_tree(s, p) for s, p in zip(inputs, parses)]
        result[side] = {"model": portable_path(folder), **figures(gold, predicted), "unseen_lemmas": unseen_lemmas(gold, predicted, train_forms)}
    result |= {
        "same_trees": trees[0] == trees[1],
        "command": command_line("heads_finetune"),
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    out = RESULTS / f"{args.label or args.dataset}__{args.split}{'__' + args.step if args.step else ''}.json"
    write_json(out, result)
    print(out, {side: {m: result[side][m] for m in ("UPOS", "UFeats", "Lemmas", "LAS", "MLAS")} for side in ("before", "after")}, "same trees:", result["same_trees"])


if __name__ == "__main__":
    main()
