"""How a trained tokenizer's reading window changes its dev scores and speed: pieces of ``window`` characters read
with ``context`` characters on either side, quick dev scores (``spandep.tokenization.selection``) and gold sentences
per second (one torch thread, fastest of three runs).

    python -m benchmarks.scripts.tokenizer_window en_ewt runs/tokenizers/en_ewt/tokenizer
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
from spandep.tokenization.selection import gold_sentences, span_scores
from spandep.tokenization.trained import load_tokenizer

WINDOWS = ((250, 50), (400, 30), (400, 50), (400, 100), (1000, 50), (150, 20))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", choices=sorted(DATASETS))
    parser.add_argument("tokenizer", type=Path)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    args = parser.parse_args()
    torch.set_num_threads(1)
    tokenizer = load_tokenizer(args.tokenizer)
    gold = read_paragraphs(split_file(args.data, args.treebank, "dev"))
    text = raw_text(gold)
    n_sentences = sum(len(p.sentences) for p in gold)
    print("| window + context | sent/s | tokens | sentences | words |")
    print("|---|---|---|---|---|")
    for window, context in WINDOWS:
        tokenizer.window, tokenizer.context = window, context
        seconds = fastest(lambda: tokenizer.tokenize(text), 3)
        system = [s for para in tokenizer.split(text, paragraphs(text)) for s in para]
        scores = span_scores(text, gold_sentences(gold), system)
        print(f"| {window} + {context} | {n_sentences / seconds:,.0f} | {scores.tokens:.2f} | {scores.sentences:.2f} | {scores.words:.2f} |")


if __name__ == "__main__":
    main()
