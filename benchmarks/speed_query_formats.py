"""Parse speed of the span parser's query formats side by side: late interaction vs the faithful paired / inline.

Only ``late`` was trained on EWT (the faithful formats need about 1.8 h per epoch on 2 cores), so the paired and
inline linkers here are built from the pretrained all-MiniLM-L6-v2 with untrained heads: their speed is real (the
cost of a query does not depend on weight values), their accuracy is not, so none is reported for them. All three
use the trained encoder and span proposal of ``--model``, so the candidate spans are the same; retrieval is off
(an untrained linker would retrieve random spans) and k is fixed. One warm-up run on the first 20 sentences.

    .venv/bin/python benchmarks/speed_query_formats.py --model runs/ewt-span-minilm-lw3/model --sentences 300
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from spandep.data.conllu import read_conllu
from spandep.models.span_parser import build_linker
from spandep.pipeline.model_io import load_model
from spandep.pipeline.span_inference import SpanParserParts, parse_spans


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
    sentences = list(read_conllu(args.test))[: args.sentences]
    words = sum(len(s) for s in sentences)
    rows = []
    for fmt in ("late", "inline", "paired"):
        linker = model.linker if fmt == "late" else build_linker({"format": fmt, "model": "all-MiniLM-L6-v2"}, model.encoder.out_dim, model.labels)
        parts = SpanParserParts(model.encoder, model.proposal, linker, model.labels)
        parse_spans(parts, sentences[:20], k=args.k, retrieval=False)
        start = time.perf_counter()
        _, stats = parse_spans(parts, sentences, k=args.k, retrieval=False)
        seconds = time.perf_counter() - start
        rows.append({"format": fmt, "trained": fmt == "late", "sentences": len(sentences), "words": words, "k": args.k,
                     "queries": stats.queries, "too_long": stats.too_long, "seconds": round(seconds, 2),
                     "sent_per_s": round(len(sentences) / seconds, 1), "words_per_s": round(words / seconds, 1),
                     "threads": args.threads})
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"model": args.model, "test": args.test, "rows": rows}, fh, indent=2)
            fh.write("\n")


if __name__ == "__main__":
    main()
