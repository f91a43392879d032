"""Raw text in, trees out: parse a treebank split from its raw text with one model, score it end to end, time it.

    python -m benchmarks.suite.raw_text --model src/spandep/resources/default_model --dataset en_ewt --system default

The raw text of the split is built by ``spandep.tokenization.corpus.raw_text`` (docs/tokenizer.md: each sentence's
``# text``, one space between sentences, a blank line between paragraphs). The model folder's tokenizer (its
``tokenizer/``, else the rule fallback) splits it, the model parses the sentences, and the CoNLL 2018 scorer
(``spandep.evaluation.conll18``: every metric, all words, universal LAS) scores them against the gold file.

Speed, one process, model load excluded: raw text → trees (tokenize, then parse) and the same predicted sentences
given as tokens (parse only), timed in alternation, ``--rounds`` times each after one warm-up of each; the result
keeps every run, the medians and ``raw_over_tokens``: raw-text speed as a share of the tokens path's, the median
over rounds of the two runs' ratio within a round (runs next to each other in time share the machine's load). The
tokenizer alone is timed the same way.

Writes ``benchmarks/results/raw/<dataset>__<system>.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.record import checkout, machine
from benchmarks.suite.systems import DATASETS, RESULTS
from spandep.data.conllu import read_conllu
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.inference import InferenceOptions
from spandep.pipeline.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.tokenization import tokenizer_for
from spandep.tokenization.corpus import raw_text, read_paragraphs

SCHEMA = "spandep-raw-text/1"


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def alternate(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds of ``rounds`` calls of each of ``runs``, taking turns, after one untimed call of each."""
    for run in runs.values():
        run()
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            seconds[name].append(round(timed(run), 3))
    return seconds


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=Path, help="model folder (its tokenizer/ splits the text)")
    ap.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    ap.add_argument("--system", required=True, help="name of the system in the result file's name")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5, help="timed runs of each path")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    gold_path = getattr(DATASETS[args.dataset], args.split)
    text = raw_text(read_paragraphs(gold_path))
    model = load_model(args.model)
    tokenizer = tokenizer_for(args.model)
    options = model.settings(InferenceOptions())

    def parse(sentences: list[Any]) -> list[Any]:
        return list(parse_stream(model, sentences, options))

    tokenized = tokenizer.tokenize(text, "<raw text>")
    predicted = parse(tokenized)
    report = evaluate_conll18(list(read_conllu(gold_path)), predicted, gold_source=str(gold_path), system_source="<raw text>")
    seconds = alternate({
        "raw_text": lambda: parse(tokenizer.tokenize(text)),
        "tokens": lambda: parse(tokenized),
        "tokenizer": lambda: tokenizer.tokenize(text),
    }, args.rounds)
    median = {name: statistics.median(runs) for name, runs in seconds.items()}
    words = sum(len(s) for s in predicted)
    result = {
        "schema": SCHEMA, "dataset": args.dataset, "split": args.split, "system": args.system, "model": str(args.model),
        "tokenizer": "trained" if (args.model / "tokenizer").is_dir() else "rules",
        "inference": options.given(), "conll18": report.to_dict(),
        "system_sentences": len(predicted), "system_words": words, "characters": len(text),
        "speed": {
            "seconds": seconds, "median_seconds": median,
            "raw_text_words_per_s": round(words / median["raw_text"], 1),
            "raw_text_sent_per_s": round(len(predicted) / median["raw_text"], 1),
            "tokens_words_per_s": round(words / median["tokens"], 1),
            "raw_over_tokens": round(statistics.median(t / r for t, r in zip(seconds["tokens"], seconds["raw_text"])), 3),
            "tokenizer_share": round(median["tokenizer"] / median["raw_text"], 3),
            "threads": args.threads, "rounds": args.rounds,
        },
        "command": "python -m benchmarks.suite.raw_text " + " ".join(argv if argv is not None else sys.argv[1:]),
        **checkout(), "machine": machine(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    out = args.out or RESULTS / "raw" / f"{args.dataset}__{args.system}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out)
    print("wrote", out)
    print(report.format_text(), end="")
    print(json.dumps({k: v for k, v in result["speed"].items() if k != "seconds"}))


if __name__ == "__main__":
    main()
