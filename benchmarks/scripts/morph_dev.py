"""Morphology heads on dev (issue 45, BENCHMARKS.md "Morphology heads on dev"): one trained model's dev figures, and
the table of every step's.

    python -m benchmarks.scripts.morph_dev score MODEL --dataset cs_cltt --step cs_cltt-morph [--write-min-count]
    python -m benchmarks.scripts.morph_dev table --doc BENCHMARKS.md

``score`` parses the dataset's dev split once from its forms (every other column blanked), at the model's saved
inference settings, and scores it by the CoNLL 2018 definitions (``spandep.evaluation.conll18``: all words,
universal LAS): UPOS, UFeats, Lemmas, UAS, LAS, MLAS, BLEX, and lemma accuracy on the dev words whose form no
training word has ("unseen"). For a FEATS head with per-feature classifiers it also scores each pair of ``joint``
(``--joints``: the weight of the per-feature log-likelihood added to the bundle's) and ``min_count``
(``--min-counts``: the bundle kept where seen at least N times in train, else the per-feature one), the heads rerun
on the same encoder vectors, the trees unchanged; it chooses the pair with the best dev UFeats (ties: the smaller
``joint``, then N) and reports the model at it; ``--write-min-count`` saves the pair in the model's ``config.json``.
The result goes to ``benchmarks/results/morph/<dataset>__<step>.json``. ``table`` writes the rows of every result
file between the ``morph:begin`` and ``morph:end`` markers of ``--doc``.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.raw_text import blank
from benchmarks.suite.record import checkout, command_line, machine, portable_path, write_json
from benchmarks.suite.systems import DATASETS, REPO
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.models import Parse
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import with_tree

RESULTS = REPO / "benchmarks" / "results" / "morph"
FIGURES = ("UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS", "BLEX")
MIN_COUNTS = "0,1,2,3,5,10,20,50,1000000000"
JOINTS = "0,0.25,0.5,1,2"


def figures(gold: list[Sentence], predicted: list[Sentence]) -> dict[str, float]:
    """The CoNLL 2018 F1 of :data:`FIGURES`, rounded to 2 places."""
    report = dict(evaluate_conll18(gold, predicted, gold_source="dev", system_source="<dev parse>").metrics())
    return {m: round(report[m].f1, 2) for m in FIGURES}


def unseen_lemmas(gold: list[Sentence], predicted: list[Sentence], train_forms: set[str]) -> dict[str, Any]:
    """Lemma accuracy (exact match) on the dev words whose form no training word has, and their number."""
    pairs = [(g.lemma, p.lemma) for gs, ps in zip(gold, predicted) for g, p in zip(gs.words, ps.words) if g.form not in train_forms]
    right = sum(g == p for g, p in pairs)
    return {"words": len(pairs), "accuracy": round(100.0 * right / len(pairs), 2) if pairs else None}


def sweep(
    model: Any, inputs: list[Sentence], parses: list[Parse], gold: list[Sentence], grid: list[tuple[float, int]]
) -> dict[tuple[float, int], dict[str, float]]:
    """Dev figures at each ``(joint, min_count)`` of the FEATS head: the heads rerun on the same encoder vectors (a
    lemma head conditioned on FEATS reads each setting's bundles), the trees unchanged."""
    head, options = model.heads["feats"], model.settings()
    vectors = [(idx, batch["word_mask"], x) for idx, batch, x in model.encoded_batches(inputs, options)]
    out = {}
    for joint, n in grid:
        head.joint, head.min_count = joint, n
        columns: dict[int, dict[str, list[str]]] = {}
        for idx, mask, x in vectors:
            columns.update(zip(idx, model.annotate(x, mask, [inputs[i].forms for i in idx], options)))
        changed = [replace(p, columns=columns[i]) if i in columns else p for i, p in enumerate(parses)]
        out[(joint, n)] = figures(gold, [with_tree(s, p) for s, p in zip(inputs, changed)])
    return out


def score(args: argparse.Namespace) -> None:
    dataset = DATASETS[args.dataset]
    gold = list(read_conllu(str(dataset.dev)))
    train_forms = {w.form for s in read_conllu(str(dataset.train)) for w in s.words}
    model = load_model(Path(args.model))
    model.eval()
    inputs = [blank(s) for s in gold]
    parses = model.parse(inputs)
    result: dict[str, Any] = {"schema": "spandep-morph-dev/1", "dataset": args.dataset, "split": "dev", "step": args.step,
                              "model": portable_path(args.model)}
    feats = model.heads["feats"] if "feats" in model.heads else None
    if feats is not None and getattr(feats, "per_feature", None) is not None:
        grid = [(float(j), int(n)) for j in args.joints.split(",") for n in args.min_counts.split(",")]
        by_setting = sweep(model, inputs, parses, gold, grid)
        joint, n = max(by_setting, key=lambda k: (by_setting[k]["UFeats"], -k[0], -k[1]))
        result["min_count"] = {"chosen": n, "joint": joint, "by_setting": [{"joint": j, "min_count": c, **f} for (j, c), f in by_setting.items()]}
        feats.joint, feats.min_count = joint, n
        parses = model.parse(inputs)
        if args.write_min_count:
            config_file = Path(args.model) / "config.json"
            config = json.loads(config_file.read_text(encoding="utf-8"))
            config["model"]["heads"]["feats"] |= {"joint": joint, "min_count": n}
            config_file.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    predicted = [with_tree(s, p) for s, p in zip(inputs, parses)]
    training = model.config.get("training") or {}
    result |= {
        **figures(gold, predicted), "unseen_lemmas": unseen_lemmas(gold, predicted, train_forms),
        "epochs": (training.get("config") or {}).get("training", {}).get("epochs"), "best_epoch": training.get("epoch"),
        "select": (training.get("config") or {}).get("training", {}).get("select", "las"),
        "command": command_line("morph_dev"),
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    out = RESULTS / f"{args.dataset}__{args.step}.json"
    write_json(out, result)
    print(out, {m: result[m] for m in FIGURES}, result["unseen_lemmas"], result.get("min_count", {}).get("chosen"))


def table(args: argparse.Namespace) -> None:
    rows = ["| treebank | step | select | joint, min_count | UPOS | UFeats | Lemmas | unseen-form lemmas (words) | UAS | LAS | MLAS | BLEX | epochs (best) | source |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(RESULTS.glob("*__*.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        n = f"{r['min_count']['joint']}, {r['min_count']['chosen']}" if "min_count" in r else "–"
        rows.append(
            f"| {r['dataset']} | `{r['step']}` | {r['select']} | {n} | " + " | ".join(f"{r[m]:.2f}" for m in FIGURES[:3])
            + f" | {r['unseen_lemmas']['accuracy']:.2f} ({r['unseen_lemmas']['words']}) | "
            + " | ".join(f"{r[m]:.2f}" for m in FIGURES[3:]) + f" | {r['epochs']} ({r['best_epoch']}) | `{portable_path(path)}` |"
        )
    doc = Path(args.doc)
    text = doc.read_text(encoding="utf-8")
    body = "<!-- morph:begin -->\n" + "\n".join(rows) + "\n<!-- morph:end -->"
    doc.write_text(re.sub(r"<!-- morph:begin -->.*?<!-- morph:end -->", lambda _: body, text, flags=re.S), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="one model's dev figures")
    s.add_argument("model")
    s.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    s.add_argument("--step", required=True, help="the step's name (its config's file name)")
    s.add_argument("--min-counts", default=MIN_COUNTS, help="min_count values to score (per-feature FEATS heads)")
    s.add_argument("--joints", default=JOINTS, help="joint weights to score (per-feature FEATS heads)")
    s.add_argument("--write-min-count", action="store_true", help="save the chosen joint and min_count in the model's config.json")
    t = sub.add_parser("table", help="the table of every result file")
    t.add_argument("--doc", default=str(REPO / "BENCHMARKS.md"))
    args = ap.parse_args()
    (score if args.command == "score" else table)(args)


if __name__ == "__main__":
    main()
