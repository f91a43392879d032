"""What parsing a long sentence in windows costs in accuracy (docs/design.md, "Long sentences").

A treebank's consecutive sentences are joined into long "sentences" of at least ``--words`` words each (a gold tree
per original sentence, its root's head 0), and each is parsed three ways: **windows** (``parse_long``: windows of
``WINDOW_WORDS``, the path of every sentence over ``LONG_SENTENCE_WORDS``), **whole** (``model.parse`` of the long
sentence at once, as before the windowed path: memory grows with the square of its length) and **alone** (each
original sentence parsed by itself: what the words get in ordinary text). UAS and LAS count every word but the
original sentences' roots (one tree over a joined sentence has one root, so their gold arcs cannot be matched).

    PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.long_sentence_accuracy --model en \\
        --conllu ../shared/data/en_ewt/en_ewt-ud-dev.conllu --words 2000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.data.trees import is_valid_tree
from spandep.models.base import Parse
from spandep.pipeline.long import LONG_SENTENCE_WORDS, WINDOW_WORDS, parse_long
from spandep.storage.model_io import load_model, resolve_model_dir


def joined(sentences: list[Sentence], words: int) -> list[tuple[Sentence, list[int], list[str]]]:
    """Consecutive ``sentences`` joined into sentences of at least ``words`` words (the last may be shorter): each
    with its gold heads (0 for every original root) and labels."""
    out, forms, heads, labels = [], [], [], []
    for s in sentences:
        offset = len(forms)
        forms += s.forms
        heads += [h + offset if h else 0 for h in s.heads]
        labels += s.deprels
        if len(forms) >= words:
            out.append((Sentence.from_tokens(forms), heads, labels))
            forms, heads, labels = [], [], []
    if forms:
        out.append((Sentence.from_tokens(forms), heads, labels))
    return out


def score(parses: list[Parse], gold: list[tuple[Sentence, list[int], list[str]]], one_tree: bool) -> tuple[float, float, int]:
    """UAS, LAS (%) over every word whose gold head is not ROOT, and how many words that is; ``one_tree``: check
    that each parse is one tree over its sentence's words (not so for sentences parsed alone and joined)."""
    arcs = right = labelled = 0
    for parse, (_, heads, labels) in zip(parses, gold):
        assert len(parse.heads) == len(heads) and (is_valid_tree(parse.heads) or not one_tree)
        for h, r, gh, gr in zip(parse.heads, parse.labels, heads, labels):
            if gh:
                arcs += 1
                right += h == gh
                labelled += h == gh and r == gr
    return 100 * right / arcs, 100 * labelled / arcs, arcs


def alone(model, originals: list[Sentence], gold: list[tuple[Sentence, list[int], list[str]]]) -> list[Parse]:
    """Each original sentence parsed by itself, its parse joined as the gold sentences are (heads offset)."""
    parses = iter(model.parse([Sentence.from_tokens(s.forms) for s in originals]))  # forms only, as the joined ones
    out = []
    for s, heads, _ in gold:
        got_heads: list[int] = []
        got_labels: list[str] = []
        while len(got_heads) < len(heads):
            p, offset = next(parses), len(got_heads)
            got_heads += [h + offset if h else 0 for h in p.heads]
            got_labels += p.labels
        out.append(Parse(got_heads, got_labels))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="en")
    ap.add_argument("--conllu", type=Path, required=True)
    ap.add_argument("--words", type=int, default=2000, help="words per joined sentence (at least)")
    ap.add_argument("--window", type=int, default=WINDOW_WORDS, help="words per window")
    ap.add_argument("--ways", nargs="+", default=["windows", "whole", "alone"], help="which of the three to run")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load_model(resolve_model_dir(args.model))
    originals = list(read_conllu(args.conllu))
    gold = joined(originals, args.words)
    print(f"{args.model}: {len(originals)} sentences of {args.conllu.name} joined into {len(gold)} of >= {args.words} words "
          f"(windows of {args.window}; the shipped threshold is {LONG_SENTENCE_WORDS})")
    ways = {
        "windows": lambda: [parse_long(model, s, window_words=args.window) for s, _, _ in gold],
        "whole": lambda: [model.parse([s])[0] for s, _, _ in gold],
        "alone": lambda: alone(model, originals, gold),
    }
    for name in args.ways:
        run = ways[name]
        t0 = time.perf_counter()
        uas, las, arcs = score(run(), gold, one_tree=name != "alone")
        print(f"{name:8} UAS {uas:6.2f}  LAS {las:6.2f}  ({arcs} words, {time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
