"""Parse speed of a spandep model, with the protocol of ../shared/benchmarks/peers.md.

EWT test from a CoNLL-U file to trees in memory, model load excluded, N threads, the second of two runs
(the first warms up). Prints one JSON line (and writes it with ``--out``). ``spandep benchmark-speed`` measures
the same way and reports the spread over several runs.

    .venv/bin/python benchmarks/scripts/speed_spandep.py --model runs/ewt-biaffine-minilm/model --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from spandep import __version__
from spandep.data.conllu import read_conllu
from spandep.options import InferenceOptions
from spandep.storage.model_io import load_model
from spandep.pipeline.speed import measure_speed

DEFAULT_TEST = "../shared/data/en_ewt/en_ewt-ud-test.conllu"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--test", default=DEFAULT_TEST)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-tokens", type=int, default=4000)
    ap.add_argument("--decoder", default=None, help="mst or projective (default: the model's)")
    ap.add_argument("--runs", type=int, default=1, help="timed runs after one warm-up run")
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model(args.model)
    options = InferenceOptions(decoder=args.decoder, batch_tokens=args.batch_tokens)
    measured = measure_speed(model, list(read_conllu(args.test)), args.runs, 1, options)
    seconds = measured["runs_seconds"][-1]
    result = {
        "schema": "spandep-peer-speed/1",
        "command": "python benchmarks/scripts/speed_spandep.py " + " ".join(sys.argv[1:]),
        "system": f"spandep {__version__} {model.name}",
        "model": args.model,
        "test": args.test,
        "sentences": measured["sentences"],
        "words": measured["words"],
        "seconds": round(seconds, 2),
        "sent_per_s": round(measured["sentences"] / seconds, 1),
        "words_per_s": round(measured["words"] / seconds, 1),
        **{k: measured[k] for k in ("runs_seconds", "threads", "batch_tokens", "decoder", "torch", "machine")},
        **({"inference": measured["inference"]} if "inference" in measured else {}),
    }
    line = json.dumps(result)
    print(line)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(line + "\n")


if __name__ == "__main__":
    main()
