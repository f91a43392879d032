"""A span model against its Biaffine twin, timed in alternation (issue 48's bars: the default model's span parser at
75 % or more of its twin's speed, every e5 treebank model at 70 % or more).

    python -m benchmarks.scripts.twin_speed measure en --dataset en_ewt --out benchmarks/results/speed/twin__en.json
    python -m benchmarks.scripts.twin_speed table --doc BENCHMARKS.md     # the table of every twin__*.json

The twin is assembled from the span model itself, not trained apart: a Biaffine parser (``models/biaffine.py``) over
the same encoder object, the same output heads and, as its arc and label scorer, the span model's own word-level
Biaffine scorer (``SpanParser.word_scorer``: a ``BiaffineScorer`` of the Biaffine parser's sizes, trained jointly
with the span parts). So the two differ only in what a span parser adds (span proposal, the MRC linker, the span
decoders and their labels), which is what the bar measures; a twin trained apart has the same parts and sizes. Its
accuracy is that of the word scorer decoded alone, reported beside the span model's. Both parse the test split from
its forms (every other column blanked) at the model's saved settings (the twin: the same precision, the span
model's decoder), ``--rounds`` times in alternation after an untimed parse of each (``raw_text.alternate``); one
thread is read in process CPU seconds, more threads in wall-clock seconds (run those with the machine otherwise idle). The ratio is the median of the
per-round ratios of the span model's speed to the twin's.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from benchmarks.scripts.morph_dev import figures
from benchmarks.suite.raw_text import alternate, blank, paired_ratio
from benchmarks.suite.record import checkout, command_line, machine, portable_path, write_json
from benchmarks.suite.report import print_or_replace
from benchmarks.suite.systems import DATASETS, REPO
from spandep.data.conllu import read_conllu
from spandep.models.biaffine import BiaffineParser
from spandep.models.span.parser import SpanParser
from spandep.options import InferenceOptions
from spandep.pipeline.predict import with_tree
from spandep.storage.model_io import load_model, resolve_model_dir

RESULTS = REPO / "benchmarks" / "results" / "speed"
BEGIN, END = "<!-- twin:begin -->", "<!-- twin:end -->"
BARS = {"en": 0.75}  # issue 48: the default model's span parser at 75 % of its twin's speed; every e5 model at 70 %
E5_BAR = 0.70


def twin_of(span: SpanParser) -> BiaffineParser:
    """The Biaffine parser over ``span``'s encoder, heads and word-level scorer (the module docstring)."""
    if span.word_scorer is None:
        raise SystemExit("this span model has no word-level Biaffine scorer to make a twin of")
    twin = BiaffineParser(span.encoder, span.labels, inference={"decoder": span.inference.decoder, "precision": span.inference.precision})
    twin.scorer = span.word_scorer
    twin.heads = span.heads
    return twin.eval()


def measure(args: argparse.Namespace) -> None:
    """Time the model and its twin in alternation and write the result file (the module docstring)."""
    torch.set_num_threads(args.threads)
    gold = list(read_conllu(str(DATASETS[args.dataset].test)))
    inputs = [blank(s) for s in gold]
    folder = resolve_model_dir(args.model)
    span = load_model(folder)
    if not isinstance(span, SpanParser):
        raise SystemExit(f"{args.model} is not a span model")
    parsers = {"span": span, "twin": twin_of(span)}
    options = InferenceOptions(batch_tokens=1000)
    parses: dict[str, Any] = {}

    def run(name: str) -> Callable[[], None]:
        return lambda: parses.__setitem__(name, parsers[name].parse(inputs, options))

    seconds = alternate({name: run(name) for name in parsers}, args.rounds)  # after an untimed parse of each
    clock = "cpu" if args.threads == 1 else "wall"
    ratios = [twin / span for span, twin in zip(seconds["span"][clock], seconds["twin"][clock])]
    words = sum(len(s) for s in gold)
    result = {
        "schema": "spandep-twin-speed/1", "name": args.model, "model": portable_path(folder), "dataset": args.dataset, "split": "test",
        "threads": args.threads, "clock": "process CPU time" if args.threads == 1 else "wall-clock", "words": words,
        "seconds": seconds, "span_over_twin": [round(r, 4) for r in ratios], "median_span_over_twin": paired_ratio(seconds, clock, "twin", "span"),
        "words_per_s": {name: round(words / statistics.median(s[clock]), 1) for name, s in seconds.items()},
        "scores": {name: figures(gold, [with_tree(s, p) for s, p in zip(inputs, parsed)]) for name, parsed in parses.items()},
        "command": command_line("twin_speed"),
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_json(args.out, result)
    print(args.out, "span / twin speed", result["span_over_twin"], "median", result["median_span_over_twin"],
          {name: (result["scores"][name]["UAS"], result["scores"][name]["LAS"]) for name in parsers})


def render(results: Path = RESULTS) -> str:
    """One row per result file ``twin__*.json``: speeds, the ratio against issue 48's bar, both parsers' test LAS."""
    lines = ["| model | test split | threads, clock | words/s span / twin | span ÷ twin (per round) | bar | UAS / LAS span | UAS / LAS twin | source |",
             "|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(results.glob("twin__*.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        bar = BARS.get(r["name"], E5_BAR)
        ratio = r["median_span_over_twin"]
        scores = {side: f"{r['scores'][side]['UAS']:.2f} / {r['scores'][side]['LAS']:.2f}" for side in ("span", "twin")}
        lines.append(
            f"| `{r['name']}` | {r['dataset']} ({r['words']:,} words) | {r['threads']}, {r['clock']} | "
            f"{r['words_per_s']['span']:,.0f} / {r['words_per_s']['twin']:,.0f} | **{ratio:.2f}** "
            f"({', '.join(f'{x:.2f}' for x in r['span_over_twin'])}) | ≥ {bar:.2f}: {'met' if ratio >= bar else 'not met'} | "
            f"{scores['span']} | {scores['twin']} | `{path.relative_to(REPO)}` |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="time a span model and its twin in alternation")
    m.add_argument("model", help="a shipped span model's name or folder")
    m.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    m.add_argument("--threads", type=int, default=1)
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("table", help=f"the table of the result files (between {BEGIN} and {END} of --doc)")
    t.add_argument("--doc", type=Path)
    args = ap.parse_args()
    if args.command == "measure":
        measure(args)
    else:
        print_or_replace(render(), args.doc, BEGIN, END, "the twin table")


if __name__ == "__main__":
    main()
