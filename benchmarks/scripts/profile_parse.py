"""Where parse time goes: the share of one model's parse of a file in each stage, at 1 and 2 torch threads.

The input is read, parsed with the model's settings (``parse_stream``, as ``spandep parse`` runs it) and written as
CoNLL-U to memory, ``--runs`` times per thread count after a warm-up, the thread counts in alternation round by
round. Each stage is timed where the code enters it (the functions below are wrapped for the run; nothing of the
parser changes), exclusively: a stage's time excludes the stages nested in it, so the shares add up to 100 %. The
clock is the process's CPU time (as ``checkout_speed.sh``): on this shared machine other jobs barely change it, and
at 2 threads it adds both threads' work, so a share is a share of the CPU work, not of the wall-clock time.

| stage | what is timed |
|---|---|
| tokenizer | raw text split into sentences and words (``--format text`` only) |
| encoder | ``Parser.encoded_batches``: word pieces, batching, the transformer, the treebank embedding |
| heads | the output heads' columns (``Parser.annotate``: UPOS, XPOS, FEATS, LEMMA) |
| proposal | span proposal, its top-k spans and the linker's per-sentence state (``SpanInference.propose``, less the above) |
| word scorer | the word-level Biaffine arc scorer (the Biaffine parser's arcs; the span parser's word head) |
| linking | candidates, MRC queries, retrieval and link matrices (``SpanInference.link``) |
| labels | dependency labels read at the decoded arcs |
| decoding | the tree decoders and the head scores (``SpanInference.decode`` less labels; the Biaffine parser's decoder) |
| I/O | reading the input file, building the output sentences (``with_tree``) and writing CoNLL-U |
| other | the rest of ``parse_stream`` (bookkeeping, batching of sentences, the long-sentence check) |

    .venv/bin/python -m benchmarks.scripts.profile_parse ../shared/data/en_ewt/en_ewt-ud-test.conllu \\
        --model src/spandep/resources/default_model --runs 2 --out benchmarks/results/speed/profile__en_ewt_test__en.json
"""

from __future__ import annotations

import argparse
import functools
import inspect
import io
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.record import checkout, command_line, machine, portable_path, write_json
from spandep.data.conllu import write_conllu
from spandep.models.base import Parser
from spandep.models.biaffine import BiaffineScorer
from spandep.models.span import inference as span_inference
from spandep.pipeline import predict
from spandep.storage.model_io import load_model
from spandep.tokenization.inputs import read_input
from spandep.tokenization.trained import tokenizer_for

WARMUP_SENTENCES = 200
STAGES = ("tokenizer", "encoder", "heads", "proposal", "word scorer", "linking", "labels", "decoding", "I/O", "other")


class StageClock:
    """Exclusive CPU seconds per stage: entering a stage charges the time since the last event to the stage that was
    running, leaving it charges its own; ``other`` runs when no stage does."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.stack = ["other"]
        self.mark = time.process_time()

    def _charge(self) -> None:
        now = time.process_time()
        self.seconds[self.stack[-1]] += now - self.mark
        self.mark = now

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._charge()
        self.stack.append(name)
        try:
            yield
        finally:
            self._charge()
            self.stack.pop()

    def timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` timed as stage ``name``; a generator function's body is timed at each step it runs."""
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def steps(*args: Any, **kwargs: Any) -> Iterator[Any]:
                it = fn(*args, **kwargs)
                while True:
                    with self.stage(name):
                        item = next(it, StopIteration)
                    if item is StopIteration:
                        return
                    yield item
            return steps

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return fn(*args, **kwargs)
        return call


def instrumented(clock: StageClock) -> ExitStack:
    """The parser's stage functions replaced by timed ones until the returned stack closes."""
    places: list[tuple[Any, str, str]] = [
        (Parser, "encoded_batches", "encoder"),
        (Parser, "annotate", "heads"),
        (span_inference.SpanInference, "propose", "proposal"),
        (BiaffineScorer, "score", "word scorer"),
        (span_inference.SpanInference, "link", "linking"),
        (span_inference, "read_labels", "labels"),
        (span_inference.WordScores, "labels_at", "labels"),
        (BiaffineScorer, "label_scores", "labels"),
        (span_inference.SpanInference, "decode", "decoding"),
        (predict, "with_tree", "I/O"),
    ]
    stack = ExitStack()
    for owner, attr, stage in places:
        original = getattr(owner, attr)
        setattr(owner, attr, clock.timed(stage, original))
        stack.callback(setattr, owner, attr, original)
    original_decoder = Parser.decoder
    Parser.decoder = lambda self, options: clock.timed("decoding", original_decoder(self, options))  # type: ignore[method-assign]
    stack.callback(setattr, Parser, "decoder", original_decoder)
    return stack


def one_run(model: Parser, path: str, fmt: str, tokenizer: Any, limit: int | None = None) -> tuple[dict[str, float], float, int]:
    """One read, parse and write of ``path`` (its first ``limit`` sentences): CPU seconds per stage, wall seconds,
    words."""
    clock = StageClock()
    start = time.perf_counter()
    with instrumented(clock):
        with clock.stage("tokenizer" if fmt == "text" else "I/O"):
            sentences = list(islice(read_input(path, fmt, tokenizer), limit))
        parsed = list(predict.parse_stream(model, sentences))
        with clock.stage("I/O"):
            write_conllu(parsed, io.StringIO())
    clock._charge()
    return clock.seconds, time.perf_counter() - start, sum(len(s) for s in sentences)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="a CoNLL-U file (gold tokens) or, with --format text, raw text")
    ap.add_argument("--model", default="src/spandep/resources/default_model", help="model folder")
    ap.add_argument("--format", default="conllu", choices=("conllu", "text"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=2, help="timed runs per thread count (after a warm-up on the first sentences)")
    ap.add_argument("--limit", type=int, default=None, help="parse only the first LIMIT sentences")
    ap.add_argument("--out", help="result JSON (benchmarks/results/speed/...)")
    args = ap.parse_args()
    model = load_model(args.model)
    tokenizer = tokenizer_for(args.model) if args.format == "text" else None
    totals = {t: dict.fromkeys(STAGES, 0.0) for t in args.threads}
    wall = {t: 0.0 for t in args.threads}
    words = 0
    for round_ in range(1 + args.runs):  # round 0: warm-up on the first WARMUP_SENTENCES
        for threads in args.threads:
            torch.set_num_threads(threads)
            limit = min(WARMUP_SENTENCES, args.limit or WARMUP_SENTENCES) if round_ == 0 else args.limit
            seconds, elapsed, words = one_run(model, args.input, args.format, tokenizer, limit)
            print(f"round {round_} threads {threads}: {sum(seconds.values()):.1f} CPU s, {elapsed:.1f} s", file=sys.stderr)
            if round_:
                totals[threads] = {k: totals[threads][k] + v for k, v in seconds.items()}
                wall[threads] += elapsed
    rows = {}
    for threads in args.threads:
        cpu = sum(totals[threads].values())
        rows[str(threads)] = {
            "cpu_seconds": {k: round(v / args.runs, 3) for k, v in totals[threads].items()},
            "share_percent": {k: round(100 * v / cpu, 1) for k, v in totals[threads].items()},
            "words_per_cpu_s": round(words * args.runs / cpu, 1),
            "words_per_wall_s": round(words * args.runs / wall[threads], 1),
        }
    print(f"{'stage':<12}" + "".join(f"{t:>3} thr %" for t in args.threads))
    for stage in STAGES:
        print(f"{stage:<12}" + "".join(f"{rows[str(t)]['share_percent'][stage]:>8.1f}" for t in args.threads))
    print(f"{'words/CPU s':<12}" + "".join(f"{rows[str(t)]['words_per_cpu_s']:>8.0f}" for t in args.threads))
    if args.out:
        command = command_line("profile_parse")
        write_json(Path(args.out), {
            "schema": "spandep-profile/1", "command": command, "machine": machine(), **checkout(), "torch": torch.__version__,
            "input": portable_path(args.input), "format": args.format, "model": portable_path(args.model), "model_type": model.name,
            "limit": args.limit, "inference": model.settings().given(), "words": words, "runs": args.runs, "clock": "process CPU time", "threads": rows,
        })


if __name__ == "__main__":
    main()
