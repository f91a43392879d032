"""Give a model folder trained before the lemma lexicons existed the lexicons its training would now build.

    python -m benchmarks.scripts.lemma_lexicon MODEL TRAIN.conllu

The lexicon (``models/heads/lemma.lemma_lexicon``: UPOS → form → the lemma the pair had most often in TRAIN) and the
table keyed by features (``lemma_feats_lexicon``: UPOS → FEATS → form → the triple's lemma where it is not the
pair's) are written into MODEL's config (``model.heads.lemma.lexicon`` and ``feats_lexicon``, atomically, as
``storage.model_io.write_model_config`` stores them); the weights are not touched. A model trained now gets both
from ``spandep train`` itself. TRAIN must be the data the model's lemma head was trained on: the script says whether
the lexicon it builds is the one the folder had.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spandep.data.conllu import read_conllu
from spandep.models.heads.lemma import lemma_feats_lexicon, lemma_lexicon
from spandep.storage.model_io import read_model_config, write_model_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("train", type=Path)
    args = ap.parse_args()
    path = args.model / "config.json"
    config = read_model_config(args.model)
    heads = config["model"].get("heads", {})
    if "lemma" not in heads:
        raise SystemExit(f"{args.model}: the model has no lemma head")
    train = list(read_conllu(args.train))
    lexicon = lemma_lexicon(train)
    before = heads["lemma"].get("lexicon")
    feats_lexicon = lemma_feats_lexicon(train, lexicon)
    heads["lemma"]["lexicon"], heads["lemma"]["feats_lexicon"] = lexicon, feats_lexicon
    write_model_config(args.model, config)
    pairs = sum(map(len, lexicon.values()))
    triples = sum(len(forms) for bundles in feats_lexicon.values() for forms in bundles.values())
    same = "none before" if before is None else ("the same as before" if before == lexicon else "NOT the one the folder had")
    print(f"{path}: lemma lexicon of {pairs:,} (form, UPOS) pairs ({same}) and {triples:,} (form, UPOS, FEATS) triples from {args.train}")


if __name__ == "__main__":
    main()
