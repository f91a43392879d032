"""Tokenizer-only scores from raw text: Tokens, Sentences and Words F1 by the official CoNLL 2018 scorer.

Raw text of a split (``spandep.tokenization.corpus``, the same text the trainer learns from):

- each sentence's ``# text`` (a sentence without one, as in zh_gsd_v1, is rebuilt from its tokens: one space
  between tokens, none after ``SpaceAfter=No``; in CJK text a space only between two alphanumeric non-CJK
  characters, which gives back the UD 2.2 ``# text`` of every zh_gsd dev/test sentence);
- sentences joined by one space within a paragraph (with none in a file of CJK text, as Chinese and Japanese are
  written); a paragraph starts at ``# newpar`` or ``# newdoc`` (a file with neither, like fr_sequoia or it_partut,
  is one paragraph);
- paragraphs separated by a blank line.

The text is tokenized (trained tokenizer given with ``--tokenizer``, else the rule fallback), every word gets a
dummy tree (word 1 the root, the others attached to it), and the CoNLL 2018 scorer as shipped in the ``udtools``
package (``udtools.udeval``) scores it against the gold file; ``lossless`` lists what the output lost or changed of
the text (:func:`spandep.tokenization.corpus.lossless_problems`; empty: nothing). Speed: the tokenizer's
wall-clock time on the whole text with one torch thread, after one warm-up run, as gold sentences and characters
per second and as milliseconds per 1,000 characters.

Treebanks: the suite's (``benchmarks.suite.systems.DATASETS``), the multilingual pool's (:func:`pool_treebanks`)
and :data:`SCRIPTS_WITHOUT_SPACES` (issue 47):
``zh_gsd`` is the UD 2.17 dev and test of the zh_gsd_v1 sentences (full-width punctuation; a tokenizer for it is
trained on zh_gsd_v1 train), ``ja_gsd_v1`` the UD 1.4 Japanese GSD (its own word units, about a bunsetsu, not
UD 2's short units), ``ja_gsd`` the UD 2.18 dev and test (short units: a tokenizer trained on ja_gsd_v1 does not
write its words; only to show that).

    python -m benchmarks.scripts.tokenizer_scores en_ewt --tokenizer runs/tokenizers/en_ewt/tokenizer --splits dev test

writes ``benchmarks/results/tokenizer/<treebank>.json`` (``<treebank>__rules.json`` for the rule fallback).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from udtools import udeval

from benchmarks.suite.record import checkout, machine, portable_path, write_json
from benchmarks.suite.systems import DATA, DATASETS, REPO, Dataset, pool_dataset, pool_entries, pool_folder
from spandep.data.conllu import format_sentence
from spandep.data.sentence import Sentence
from spandep.encoders.bases import resolve_model_path
from spandep.tokenization import RuleTokenizer, Tokenizer
from spandep.tokenization.corpus import lossless_problems, raw_text, read_paragraphs
from spandep.tokenization.inputs import read_raw_text
from spandep.tokenization.trained import load_tokenizer

RESULTS = REPO / "benchmarks" / "results" / "tokenizer"
METRICS = ("Tokens", "Sentences", "Words")


def _xz(folder: str, stem: str, train: Path | None = None) -> Dataset:
    dev, test = (DATA / folder / f"{stem}-{split}.conllu.xz" for split in ("dev", "test"))
    return Dataset(train or DATA / folder / f"{stem}-train.conllu.xz", dev, test)


SCRIPTS_WITHOUT_SPACES = {
    "zh_gsd": _xz("devtest_only/zh_gsd", "zh_gsd-ud", DATASETS["zh_gsd_v1"].train),
    "ja_gsd_v1": _xz("ja_gsd_v1", "ja-ud"),
    "ja_gsd": _xz("devtest_only/ja_gsd", "ja_gsd-ud", DATA / "ja_gsd_v1" / "ja-ud-train.conllu.xz"),
    "vi_vtb": _xz("vi_vtb", "vi_vtb-ud"),
    "th_tud": _xz("th_tud", "th_tud-ud"),
}


def pool_treebanks() -> dict[str, Dataset]:
    """The multilingual pool's treebanks (issue 46; ``benchmarks/scripts/multilingual_pool.py`` writes the pool
    folder, ``$SPANDEP_POOL`` or ``runs/pool``): train and dev as the pool wrote them (a dev-only language's train
    is its pooled dev less the held-out part, its dev that part), test as released in the data folder
    (:func:`~benchmarks.suite.systems.pool_dataset`)."""
    return {name: pool_dataset(name, pool_folder()) for name in pool_entries()}


TREEBANKS = {**pool_treebanks(), **DATASETS, **SCRIPTS_WITHOUT_SPACES}


def split_file(data: Path, treebank: str, split: str) -> Path:
    """The CoNLL-U file of ``split`` of ``treebank``: under the data folder ``data`` where it is a released file,
    else the pool's."""
    path = getattr(TREEBANKS[treebank], split)
    return data / path.relative_to(DATA) if path.is_relative_to(DATA) else path


def system_conllu(sentences: list[Sentence]) -> str:
    """The sentences as CoNLL-U with a dummy tree, as the scorer needs integer heads."""
    for s in sentences:
        for w in s.words:
            w.head, w.deprel = (0, "root") if w.id == 1 else (1, "dep")
    return "".join(map(format_sentence, sentences))


def official(gold: Path, system: str) -> dict[str, dict[str, float]]:
    """Precision, recall and F1 (percent) of :data:`METRICS` by the CoNLL 2018 scorer of ``udtools``."""
    gold_ud = udeval.load_conllu(io.StringIO(read_raw_text(gold)), str(gold), {})  # compressed or not
    system_ud = udeval.load_conllu(io.StringIO(system), "<system>", {})
    scores = udeval.evaluate(gold_ud, system_ud)
    return {m: {k: round(100 * getattr(scores[m], k), 2) for k in ("precision", "recall", "f1")} for m in METRICS}


def fastest(run: Callable[[], object], repeats: int) -> float:
    """The shortest wall-clock time of ``repeats`` calls of ``run``, after one warm-up call."""
    run()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def score_split(tokenizer: Tokenizer, gold: Path) -> dict[str, Any]:
    paragraphs = read_paragraphs(gold)
    text = raw_text(paragraphs)
    seconds = fastest(lambda: tokenizer.tokenize(text), 1)
    sentences = tokenizer.tokenize(text)
    lossless = lossless_problems(text, sentences)
    n_gold = sum(len(p.sentences) for p in paragraphs)
    return {
        "file": portable_path(gold), **official(gold, system_conllu(sentences)), "gold_sentences": n_gold,
        "system_sentences": len(sentences), "lossless": lossless, "characters": len(text), "seconds": round(seconds, 3),
        "sentences_per_s": round(n_gold / seconds, 1), "chars_per_s": round(len(text) / seconds),
        "ms_per_1000_chars": round(1000 * 1000 * seconds / len(text), 2),
    }


def tokenizer_info(folder: Path | None) -> dict[str, Any]:
    if folder is None:
        return {"tokenizer": "rules"}
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
    return {
        "tokenizer": portable_path(folder), "bytes": size, "net": config["net"], "thresholds": config["thresholds"],
        "mwt_decision": config["mwt_decision"], "max_tokens": config.get("max_tokens", 0), "best_epoch": config["training"]["best_epoch"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", choices=sorted(TREEBANKS))
    parser.add_argument("--tokenizer", type=Path, help="A trained tokenizer folder; the rule fallback without it.")
    parser.add_argument("--splits", nargs="+", default=["dev", "test"], choices=["train", "dev", "test"])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)), help="Treebank folder (default ../shared/data, or $SPANDEP_DATA).")
    parser.add_argument("--out", type=Path, help="Result file (default benchmarks/results/tokenizer/<treebank>[__rules].json).")
    parser.add_argument("--dev-file", type=Path, help="Score this file as the dev split (the held-out part the tokenizer was chosen on, where its training read the rest of the released dev).")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    tokenizer = load_tokenizer(args.tokenizer, resolve_model_path) if args.tokenizer else RuleTokenizer()
    result: dict[str, Any] = {
        "schema": "spandep-tokenizer-scores/1", "treebank": args.treebank, **tokenizer_info(args.tokenizer), "scorer": "udtools.udeval (CoNLL 2018)",
        "command": "python " + " ".join([portable_path(sys.argv[0]), *(argv or sys.argv[1:])]),
        **checkout(), "machine": machine(), "date": time.strftime("%Y-%m-%d"), "torch_threads": 1,
    }
    for split in args.splits:
        path = args.dev_file if split == "dev" and args.dev_file else split_file(args.data, args.treebank, split)
        result[split] = score_split(tokenizer, path)
        print(split, " ".join(f"{m} {result[split][m]['f1']:.2f}" for m in METRICS), f"{result[split]['sentences_per_s']} sent/s")
    out = args.out or RESULTS / f"{args.treebank}{'' if args.tokenizer else '__rules'}.json"
    write_json(out, result)
    print("wrote", out)


if __name__ == "__main__":
    main()
