"""Is one parser's LAS above another's on a split, or within the noise of which sentences the split holds?

    python -m benchmarks.scripts.paired_bootstrap A.json B.json --out benchmarks/results/significance/TB__test.json

A and B are two gold-token results of ``benchmarks.suite.raw_text --mode gold`` on the same treebank split (the span
model and its Biaffine twin). Each model is loaded again from its result's ``model`` folder, parses the split's gold
tokens (every column but FORM blanked) with its saved settings, and must give back its result's official LAS (to
1e-6: else the run stops, naming both figures), so the test is of the parses the tables report. The paired bootstrap
then draws ``--samples`` resamples of the split's sentences with replacement (``--seed``) and recomputes, on each,
LAS(A) − LAS(B) over the drawn sentences' words (each sentence's counts from ``spandep.evaluation.conll18``: head and
universal relation right, all words). It writes the observed Δ, the 2.5th and 97.5th percentiles of the resampled Δ (a 95 %
interval) and the share of resamples with Δ ≤ 0 (a one-sided p-value for "A is above B").
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.suite.raw_text import blank, model_parser
from benchmarks.suite.record import checkout, machine, write_json
from benchmarks.suite.systems import REPO
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.storage.model_io import load_model

SCHEMA = "spandep-paired-bootstrap/1"


def sentence_counts(gold: list[Sentence], predicted: list[Sentence]) -> np.ndarray:
    """Per sentence, ``(words, words with head and universal relation right)`` by the project's CoNLL 2018 scorer:
    ``(sentences, 2)``."""
    rows = []
    for g, p in zip(gold, predicted, strict=True):
        if len(g) != len(p):
            raise ValueError(f"a parse of {len(p)} words for a gold sentence of {len(g)}: not gold tokens")
        las = evaluate_conll18([g], [p], gold_source="gold", system_source="parse").las
        rows.append((las.gold, las.correct))
    return np.array(rows, dtype=np.int64).reshape(-1, 2)  # (sentences, 2)


def bootstrap(a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> dict[str, Any]:
    """The paired bootstrap of LAS(a) − LAS(b) over sentences (``a``, ``b``: :func:`sentence_counts` of one split)."""
    if a.shape != b.shape or not np.array_equal(a[:, 0], b[:, 0]):
        raise ValueError("the two parses are not of the same sentences")
    draws = np.random.default_rng(seed).integers(0, len(a), size=(samples, len(a)))  # (samples, sentences)
    words = a[draws, 0].sum(1)  # (samples,)
    delta = 100.0 * (a[draws, 1].sum(1) - b[draws, 1].sum(1)) / words  # (samples,)
    observed = 100.0 * (a[:, 1].sum() - b[:, 1].sum()) / a[:, 0].sum()
    return {
        "delta_LAS": float(observed),
        "ci95": [float(np.percentile(delta, 2.5)), float(np.percentile(delta, 97.5))],
        "share_not_above": float(np.mean(delta <= 0)),
        "samples": samples, "seed": seed, "sentences": int(len(a)), "words": int(a[:, 0].sum()),
    }


def parsed_counts(result: dict[str, Any], gold: list[Sentence]) -> tuple[np.ndarray, float]:
    """Parse ``gold`` again with the model of a gold-token ``result``; its per-sentence counts and its LAS, which must
    be the result's own."""
    model_path = Path(result["model"])
    parse, _ = model_parser(load_model(model_path if model_path.is_absolute() else REPO / model_path), result.get("model_treebank"))
    counts = sentence_counts(gold, parse([blank(s) for s in gold]))
    las = 100.0 * counts[:, 1].sum() / counts[:, 0].sum()
    if abs(las - result["conll18"]["LAS"]["f1"]) > 1e-6:
        raise SystemExit(f"{result['model']}: LAS {las:.4f} now, {result['conll18']['LAS']['f1']:.4f} in its result file")
    return counts, las


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path, help="gold-token result file of system A (raw_text --mode gold)")
    ap.add_argument("b", type=Path, help="the same of system B, on the same split")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    results = [json.loads(path.read_text(encoding="utf-8")) for path in (args.a, args.b)]
    if any(r["mode"] != "gold" for r in results) or results[0]["gold"] != results[1]["gold"]:
        raise SystemExit("A and B must be gold-token results (--mode gold) of the same split")
    gold = list(read_conllu(results[0]["gold"]))
    (a, las_a), (b, las_b) = (parsed_counts(r, gold) for r in results)
    record = {
        "schema": SCHEMA, "treebank": results[0]["treebank"], "split": results[0]["split"], "gold": results[0]["gold"],
        "a": {"system": results[0]["system"], "result": str(args.a), "LAS": las_a},
        "b": {"system": results[1]["system"], "result": str(args.b), "LAS": las_b},
        **bootstrap(a, b, args.samples, args.seed),
        "command": "python -m benchmarks.scripts.paired_bootstrap " + " ".join(argv if argv is not None else sys.argv[1:]),
        **checkout(), "machine": machine(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    write_json(args.out, record)
    low, high = record["ci95"]
    print(f"wrote {args.out}: Δ LAS {record['delta_LAS']:+.2f} (95 % interval {low:+.2f} to {high:+.2f}), "
          f"share of resamples with Δ ≤ 0: {record['share_not_above']:.3f}")


if __name__ == "__main__":
    main()
