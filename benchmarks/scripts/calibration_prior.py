"""The prior of a multi-treebank model's per-treebank calibrations, chosen on dev (issue 46).

    .venv/bin/python -m benchmarks.scripts.calibration_prior scores src/spandep/resources/multilingual
    .venv/bin/python -m benchmarks.scripts.calibration_prior compare --out benchmarks/results/calibration/prior.json

A treebank with a small dev split gets a noisy mapping of its own (BENCHMARKS.md, "Calibration": the lines that miss
3 % test ECE all have dev under 3,000 words). ``spandep calibrate`` can shrink each treebank's fit towards the mapping
of all the model's treebanks pooled (``evaluation/calibration.shrunk_targets``, ``fit_pooled``). ``scores`` parses
the dev split of every treebank of the pool (``runs/pool``; at most the first ``--cap`` words, whole sentences) with
the model folder once, one torch thread, and keeps each one's head logits and correctness in
``runs/calibration-scores/<treebank>.npz``; ``compare`` fits, for each treebank, the pooled prior on all the *other*
treebanks (each weighing the same), then each kind of mapping on one half of its dev (even / odd sentences) with the
prior weighing ``λ`` words, for every ``λ`` of ``--strengths`` (``inf``: the prior alone), and measures log loss and
ECE on the other half, both ways round; the means per dev-size group, treebanks weighing the same, are printed and
written (``--out``, schema ``spandep-calibration-prior/1``). No test split is read.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path

import numpy as np

from benchmarks.suite.raw_text import dataset, first_words
from benchmarks.suite.record import portable_path, stamp, write_json
from benchmarks.suite.systems import REPO, pool_entries, pool_folder
from spandep.evaluation.calibration import FITS, fit_pooled, held_out

SCORES = REPO / "runs" / "calibration-scores"
SCHEMA = "spandep-calibration-prior/1"
GROUPS = ((0, 3000, "dev < 3,000 words"), (3000, 10000, "3,000–10,000"), (10000, math.inf, "≥ 10,000"))


def scores(folder: Path, cap: int, treebanks: list[str]) -> None:
    """Each treebank's dev head logits, correctness and sentence numbers with ``folder`` (one load)."""
    import torch

    from spandep.api import ModelSpec
    from spandep.data.conllu import read_conllu
    from spandep.evaluation.calibration import WordScores
    from spandep.options import InferenceOptions
    from spandep.pipeline.long import parse_sentences

    torch.set_num_threads(1)
    SCORES.mkdir(parents=True, exist_ok=True)
    parser = ModelSpec(folder, InferenceOptions(), threads=1).load_model()
    for name in treebanks:
        out = SCORES / f"{name}.npz"
        if out.is_file():
            continue
        dev = list(read_conllu(dataset(name, pool_folder()).dev))
        gold = first_words(dev, cap)
        options = InferenceOptions(treebank=name)
        words = WordScores.read(gold, parse_sentences(parser, gold, options), parser.calibration.for_treebank(name))
        dev_words = sum(len(s.words) for s in dev)
        tmp = out.with_suffix(".tmp.npz")
        np.savez(tmp, z=words.z, right=words.head_right, sentence=words.sentence, dev_words=dev_words)
        tmp.replace(out)
        print(f"{name}: {len(words.z)} of {dev_words} dev words", flush=True)


def compare(strengths: list[float], prior_kind: str) -> dict:
    """Per treebank and strength, the held-out figures of each kind; their means per dev-size group."""
    data = {p.stem: dict(np.load(p)) for p in sorted(SCORES.glob("*.npz")) if not p.name.endswith(".tmp.npz")}
    rows = {}
    for name, d in data.items():
        prior = fit_pooled(prior_kind, [(o["z"], o["right"]) for other, o in data.items() if other != name])
        figures = {f"{kind}@{s:g}": held_out(fit, d["z"], d["right"].astype(bool), d["sentence"], prior, s)
                   for s in strengths if not math.isinf(s) for kind, fit in FITS.items()}
        if any(math.isinf(s) for s in strengths):  # the prior alone: a "fit" that ignores the treebank's words
            figures["prior@inf"] = held_out(lambda *_, prior=prior: prior, d["z"], d["right"].astype(bool), d["sentence"])
        rows[name] = {"dev_words": int(d["dev_words"]), "words": int(len(d["z"])), "figures": figures}
        print(name, rows[name]["dev_words"], " ".join(f"{k} {v[0]:.4f}/{v[1]:.2f}" for k, v in rows[name]["figures"].items()), flush=True)
    groups = {}
    for low, high, label in GROUPS:
        members = [r for r in rows.values() if low <= r["dev_words"] < high]
        if members:
            keys = members[0]["figures"]
            groups[label] = {"treebanks": len(members), **{k: [round(float(np.mean([m["figures"][k][i] for m in members])), 5) for i in (0, 1)] for k in keys}}
    return {"prior_kind": prior_kind, "strengths": [str(s) for s in strengths], "groups": groups, "treebanks": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scores")
    s.add_argument("folder", type=Path)
    s.add_argument("--cap", type=int, default=6000, help="at most this many dev words per treebank (whole sentences)")
    s.add_argument("--treebanks", nargs="*", help="default: every treebank of the pool")
    c = sub.add_parser("compare")
    c.add_argument("--strengths", default="0,100,300,1000,3000,10000,inf")
    c.add_argument("--prior-kind", default="logit-platt", choices=list(FITS))
    c.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.command == "scores":
        scores(args.folder, args.cap, args.treebanks or list(pool_entries()))
        return
    result = compare([float(x) for x in args.strengths.split(",")], args.prior_kind)
    for label, g in result["groups"].items():
        print(f"{label} ({g['treebanks']} treebanks): " + "  ".join(f"{k} {v[0]:.4f}/{v[1]:.2f}" for k, v in g.items() if k != "treebanks"))
    if args.out:
        result["scores"] = portable_path(SCORES)
        write_json(args.out, stamp(result, SCHEMA, "python -m benchmarks.scripts.calibration_prior " + shlex.join(sys.argv[1:])))


if __name__ == "__main__":
    main()
