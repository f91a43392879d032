"""Parse speed of a spandep model, with the protocol of ../shared/benchmarks/peers.md.

EWT test from a CoNLL-U file to trees in memory, model load excluded, N threads, the second of two runs
(the first warms up). Prints one JSON line (and writes it with ``--out``).

    .venv/bin/python benchmarks/speed_spandep.py --model runs/ewt-biaffine-minilm/model --threads 2
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch

from spandep import __version__
from spandep.data.conllu import read_conllu
from spandep.pipeline.model_io import load_model
from spandep.pipeline.predict import parse_stream, resolve_decoder

DEFAULT_TEST = "../shared/data/en_ewt/en_ewt-ud-test.conllu"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--test", default=DEFAULT_TEST)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-tokens", type=int, default=4000)
    ap.add_argument("--decoder", default=None, help="mst or projective (default: the model's)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model(args.model)
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        parsed = list(parse_stream(model, read_conllu(args.test), batch_tokens=args.batch_tokens, decoder=args.decoder))
        times.append(time.perf_counter() - start)
    words = sum(len(s) for s in parsed)
    seconds = times[-1]
    result = {
        "system": f"spandep {__version__} {model.model_type}",
        "model": args.model,
        "test": args.test,
        "sentences": len(parsed),
        "words": words,
        "seconds": round(seconds, 2),
        "all_runs_seconds": [round(t, 2) for t in times],
        "sent_per_s": round(len(parsed) / seconds, 1),
        "words_per_s": round(words / seconds, 1),
        "threads": args.threads,
        "batch_tokens": args.batch_tokens,
        "decoder": resolve_decoder(model, args.decoder),
        **({"inference": model.inference} if model.model_type == "span" else {}),
        "torch": torch.__version__,
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
    }
    line = json.dumps(result)
    print(line)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(line + "\n")


if __name__ == "__main__":
    main()
