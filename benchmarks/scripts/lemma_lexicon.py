"""Give a model folder trained before the lemma lexicon existed the lexicon its training would now build.

    python -m benchmarks.scripts.lemma_lexicon MODEL TRAIN.conllu

The lexicon (``models/heads/lemma.lemma_lexicon``: UPOS → form → the lemma the pair had most often in TRAIN) is
written into MODEL's ``config.json`` (``model.heads.lemma.lexicon``, atomically); the weights are not touched. A
model trained now gets it from ``spandep train`` itself. TRAIN must be the data the model was trained on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.suite.record import write_json
from spandep.data.conllu import read_conllu
from spandep.models.heads.lemma import lemma_lexicon


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("train", type=Path)
    args = ap.parse_args()
    path = args.model / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    heads = config["model"].get("heads", {})
    if "lemma" not in heads:
        raise SystemExit(f"{args.model}: the model has no lemma head")
    heads["lemma"]["lexicon"] = lemma_lexicon(list(read_conllu(args.train)))
    write_json(path, config)
    pairs = sum(map(len, heads["lemma"]["lexicon"].values()))
    print(f"{path}: lemma lexicon of {pairs:,} (form, UPOS) pairs from {args.train}")


if __name__ == "__main__":
    main()
