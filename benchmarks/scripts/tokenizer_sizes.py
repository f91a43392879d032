"""How the tokenizer network's size sets its speed: the network's reading time (``TrainedTokenizer.probabilities``,
the part that grows with the size) over a split's raw text, one torch thread, for untrained networks of several
sizes (speed does not depend on the weights), as sentences per second and parameters.

    python -m benchmarks.scripts.tokenizer_sizes en_ewt --split dev
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch

from benchmarks.suite.systems import DATA, DATASETS
from benchmarks.scripts.tokenizer_scores import fastest, split_file
from spandep.tokenization import paragraphs
from spandep.tokenization.corpus import raw_text, read_paragraphs
from spandep.tokenization.model import CharTagger, CharVocab, NetConfig
from spandep.tokenization.mwt import MwtLexicon
from spandep.tokenization.trained import TrainedTokenizer

SIZES = ((32, 64, 1), (32, 64, 2), (32, 96, 2), (32, 128, 1), (32, 128, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", choices=sorted(DATASETS))
    parser.add_argument("--split", default="dev", choices=["train", "dev", "test"])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    parser.add_argument("--repeats", type=int, default=3, help="Timed runs per size; the fastest counts.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gold = read_paragraphs(split_file(args.data, args.treebank, args.split))
    text = raw_text(gold)
    paras = paragraphs(text)
    n_sentences = sum(len(p.sentences) for p in gold)
    vocab = CharVocab.build([text], min_count=2)
    print("| embedding | hidden | layers | parameters | network reading, sent/s |")
    print("|---|---|---|---|---|")
    for embedding, hidden, layers in SIZES:
        net = CharTagger(len(vocab), NetConfig(embedding, hidden, layers))
        tokenizer = TrainedTokenizer(vocab, net, MwtLexicon())
        best = fastest(lambda: tokenizer.probabilities(text, paras), args.repeats)
        size = sum(p.numel() for p in net.parameters())
        print(f"| {embedding} | {hidden} | {layers} | {size:,} | {n_sentences / best:,.0f} |")


if __name__ == "__main__":
    main()
