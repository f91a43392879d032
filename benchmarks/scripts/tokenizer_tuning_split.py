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
from pathlib import Path

from spandep.data.output import write_blocks

EVERY = 10  # one train sentence in EVERY goes to the tuning split


def sentence_blocks(path: Path) -> list[str]:
    """The sentences of a CoNLL-U file as their text blocks (comments and lines, no blank line)."""
    return [block.strip("\n") for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]


def tuning_split(train: list[str], dev: list[str]) -> tuple[list[str], list[str]]:
    """``(train without every EVERY-th sentence, dev + those sentences as a new document)``."""
    held = train[EVERY - 1 :: EVERY]
    kept = [block for i, block in enumerate(train) if i % EVERY != EVERY - 1]
    first = held[0] if held[0].startswith("# newdoc") else "# newdoc\n" + held[0]
    return kept, [*dev, first, *held[1:]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path, help="the treebank's train split")
    parser.add_argument("dev", type=Path, help="the treebank's dev split")
    parser.add_argument("out", type=Path, help="folder for train.conllu and tune.conllu")
    args = parser.parse_args(argv)
    dev = sentence_blocks(args.dev)
    kept, tune = tuning_split(sentence_blocks(args.train), dev)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, blocks in (("train.conllu", kept), ("tune.conllu", tune)):
        write_blocks([block + "\n\n" for block in blocks], args.out / name)
    print(f"{args.out}: train {len(kept)} sentences, tune {len(tune)} (dev + {len(tune) - len(dev)} from train)")


if __name__ == "__main__":
    main()
