"""A tokenizer's tuning split for a treebank whose dev split is of other genres than its train and test splits.

ru_taiga's dev split is all Instagram posts (emoji clusters, ``@screened-N`` user names, ``)))`` smileys), a genre
that its train and test splits lack: a tokenizer chosen on it alone stops at epoch 8 of 28 and splits ``0,5``. This
writes, into OUT:

- ``train.conllu``: the train split without every tenth sentence (sentences 10, 20, ... in file order);
- ``tune.conllu``: the dev split, then those held-out train sentences as a document of their own (``# newdoc``).

``spandep train-tokenizer OUT/train.conllu --dev OUT/tune.conllu`` then chooses its epoch and decoding settings on
both genres; the test split stays untouched. Used by ``benchmarks/scripts/train_tokenizers.sh`` for ru_taiga.

    python -m benchmarks.scripts.tokenizer_tuning_split ../shared/data/ru_taiga/ru_taiga-ud-train.conllu \
        ../shared/data/ru_taiga/ru_taiga-ud-dev.conllu runs/tokenizers/ru_taiga/split
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.output import write_blocks
from spandep.data.sentence import Sentence

EVERY = 10  # one train sentence in EVERY goes to the tuning split


def tuning_split(train: list[Sentence], dev: list[Sentence]) -> tuple[list[Sentence], list[Sentence]]:
    """``(train without every EVERY-th sentence, dev + those sentences as a new document)``."""
    held = train[EVERY - 1 :: EVERY]
    kept = [sentence for i, sentence in enumerate(train) if i % EVERY != EVERY - 1]
    if not any(line.startswith("# newdoc") for line in held[0].comments):
        held[0] = replace(held[0], comments=["# newdoc", *held[0].comments])
    return kept, [*dev, *held]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path, help="the treebank's train split")
    parser.add_argument("dev", type=Path, help="the treebank's dev split")
    parser.add_argument("out", type=Path, help="folder for train.conllu and tune.conllu")
    args = parser.parse_args(argv)
    dev = list(read_conllu(args.dev))
    kept, tune = tuning_split(list(read_conllu(args.train)), dev)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, sentences in (("train.conllu", kept), ("tune.conllu", tune)):
        write_blocks(map(format_sentence, sentences), args.out / name)
    print(f"{args.out}: train {len(kept)} sentences, tune {len(tune)} (dev + {len(tune) - len(dev)} from train)")


if __name__ == "__main__":
    main()
