"""Parse speed of the span parser's query formats side by side: late interaction vs the faithful paired / inline.

Only ``late`` was trained on EWT (the faithful formats need about 1.8 h per epoch on 2 cores), so the paired and
inline linkers here are built from the pretrained all-MiniLM-L6-v2 with untrained heads: their speed is real (the
cost of a query does not depend on weight values), their accuracy is not, so none is reported for them. All three
use the trained encoder and span proposal of ``--model`` (its linker swapped for each format; its word scorer and
tagger, if any, left out), so the candidate spans are the same; retrieval is off (an untrained linker would retrieve
random spans), k is fixed, DP decoding with λ = 1. Per format, one untimed parse (warm-up, and the query counts), then
one timed by ``spandep.pipeline.speed.measure_speed``.

    .venv/bin/python benchmarks/scripts/speed_query_formats.py --model runs/ewt-span-minilm-lw3/model --sentences 300
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from benchmarks.suite.record import machine, write_json
from spandep.data.conllu import read_conllu
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.span import LINKERS
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.pipeline.speed import measure_speed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--test", default="../shared/data/en_ewt/en_ewt-ud-test.conllu")
    ap.add_argument("--sentences", type=int, default=300, help="first N test sentences")
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model(args.model)
    model.word_scorer = None  # encoder, proposal and linker only
    model.heads.clear()
    sentences = list(read_conllu(args.test))[: args.sentences]
    options = InferenceOptions(decoder="projective", k=args.k, lam=1.0, retrieval=False, mutual=True, arc_weight=0.0, label_source="linker")
    late = model.linker
    rows = []
    for fmt in ("late", "inline", "paired"):
        model.linker = late if fmt == "late" else LINKERS.get(fmt).build(fmt, {"model": "all-MiniLM-L6-v2"}, model.encoder.out_dim, model.labels, None)
        stats = InferenceStats()
        list(parse_stream(model, sentences, options, stats=stats))
        speed = measure_speed(model, sentences, runs=1, warmup=0, options=options)
        rows.append({"format": fmt, "trained": fmt == "late", "sentences": speed["sentences"], "words": speed["words"], "k": args.k,
                     "queries": stats.queries, "too_long": stats.too_long, "seconds": round(speed["runs_seconds"][0], 2),
                     "sent_per_s": speed["sent_per_s"]["mean"], "words_per_s": speed["words_per_s"]["mean"],
                     "threads": speed["threads"]})
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        write_json(Path(args.out), {
            "schema": "spandep-speed-query-formats/1", "command": "python -m benchmarks.scripts.speed_query_formats " + " ".join(sys.argv[1:]),
            "machine": machine(), "model": args.model, "test": args.test, "rows": rows,
        })


if __name__ == "__main__":
    main()
