"""Enhanced UD graphs (DEPS) scored by the official IWPT 2021 scorer: the copy-the-basic-tree baseline beside the
rules of ``spandep.enhancement``, on gold trees and on parses, dev and test.

The scorer is ``udtools.udeval`` as its command line runs it (``udtools.argparser.parse_args_scorer``: the shared
task's default ``--enhancements 0``, every enhancement type scored). As in the shared task, the gold file's empty
nodes are collapsed into paths first (``spandep.enhancement.collapse``; the task's
``enhanced_collapse_empty_nodes.pl``): a gold edge through an elided predicate is one the system must write as a
path, so a system that writes none loses it (``collapsed: false`` rows: the gold file as it is, where the scorer
drops the edges of empty nodes, for comparison). Systems:

- ``gold-tree``: the gold basic tree, UPOS, FEATS and LEMMA of the file;
- ``<model>``: the gold tokens (FORM, MISC, multiword tokens) with every other column blanked, parsed by the shipped
  model (tree, tags, features and lemmas all predicted), one torch thread.

Each gets DEPS = HEAD:DEPREL (``copy``) and DEPS from ``spandep.enhancement.enhance`` (``rules``); on dev also the
rules less each one in turn (``without``: the ablation each rule was kept by). ``rules_words_per_s``: the rules'
speed on the split's gold trees (wall clock, fastest of three runs).

    python -m benchmarks.scripts.enhanced_eval --models en en-accurate --splits dev test

writes ``benchmarks/results/enhanced/en_ewt.json`` (``--dataset cs_cltt --models cs``: Czech CLTT, whose splits have
DEPS too, into ``cs_cltt.json``). ``--parses DIR`` keeps the parses there and reuses them on a
rerun (the JSON says which were reused). ``--raw``: the models parse the split's raw text instead (its paragraphs as
``spandep.tokenization.corpus.raw_text`` writes them, through each model's own tokenizer; the scorer aligns the words
on characters), systems named ``<model> raw``:

    python -m benchmarks.scripts.enhanced_eval --models en en-accurate --splits test --raw --ablation --out benchmarks/results/enhanced/en_ewt_raw.json
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch
from udtools.argparser import parse_args_scorer
from udtools.udeval import evaluate_wrapper

from benchmarks.suite.record import checkout, machine, portable_path, write_json
from benchmarks.suite.systems import DATA, DATASETS, REPO
from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.sentence import Sentence
from spandep.enhancement import CONVENTIONS, ENGLISH, RULES, Conventions, enhance, without_empty_nodes
from spandep.enhancement.collapse import collapse_empty_nodes
from spandep.data.languages import treebank_language
from spandep.tokenization.corpus import raw_text, read_paragraphs

RESULTS = REPO / "benchmarks" / "results" / "enhanced"
METRICS = ("UAS", "LAS", "CLAS", "MLAS", "BLEX", "ELAS", "EULAS")
PREDICTED = ("lemma", "upos", "xpos", "feats", "deprel", "deps")  # blanked before parsing


def score(gold: Path, system: Path) -> dict[str, Any]:
    """The official scorer's F1 (percent) of :data:`METRICS`, and ELAS / EULAS precision and recall."""
    scores = evaluate_wrapper(parse_args_scorer([str(gold), str(system)]))
    result: dict[str, Any] = {m: round(100 * scores[m].f1, 2) for m in METRICS}
    for m in ("ELAS", "EULAS"):
        result[f"{m}_precision"], result[f"{m}_recall"] = (round(100 * getattr(scores[m], k), 2) for k in ("precision", "recall"))
    return result


def copied(sentence: Sentence) -> Sentence:
    """The baseline: DEPS = HEAD:DEPREL, no empty node."""
    return without_empty_nodes(replace(sentence, words=[replace(w, deps=f"{w.head}:{w.deprel}") for w in sentence.words]))


def gold_tokens(sentence: Sentence) -> Sentence:
    """The sentence's tokens only: :data:`PREDICTED` and HEAD blanked, empty nodes dropped."""
    blanked = sentence.blanked(PREDICTED)
    for w in blanked.words:
        w.head = None
    return without_empty_nodes(blanked)


def parses(model: str, gold: Path, cache: Path | None, raw: bool) -> tuple[list[Sentence], dict[str, Any]]:
    """``gold``'s tokens (``raw``: its raw text) parsed by ``model`` (one torch thread), or read from ``cache`` where
    an earlier run left them."""
    kept = cache / f"{gold.stem}.{model}{'.raw' if raw else ''}.conllu" if cache else None
    if kept and kept.is_file():
        return list(read_conllu(kept)), {"parses": portable_path(kept), "reused": True}
    import spandep

    started = time.perf_counter()
    nlp = spandep.load(model, threads=1)
    inputs = nlp.tokenizer.iter_sentences(raw_text(read_paragraphs(gold)), gold.name) if raw else map(gold_tokens, read_conllu(gold))
    parsed = list(nlp.parse_sentences(inputs))
    seconds = round(time.perf_counter() - started, 1)
    if kept:
        write_conllu(parsed, kept)
    return parsed, {"parses": portable_path(kept) if kept else None, "reused": False, "parse_seconds": seconds}


def score_system(
    sentences: list[Sentence], golds: dict[str, Path], folder: Path, ablation: bool, conventions: Conventions
) -> dict[str, Any]:
    """The copy baseline and the rules on ``sentences``, each against every gold file of ``golds``; ``ablation``:
    also the rules less each one in turn, against the collapsed gold (how each rule was chosen, on dev)."""
    result: dict[str, Any] = {}
    for name, make in (("copy", copied), ("rules", lambda s: enhance(s, RULES, conventions))):
        system = folder / f"{name}.conllu"
        write_conllu(map(make, sentences), system)
        result[name] = {kind: score(gold, system) for kind, gold in golds.items()}
    for rule in RULES if ablation else ():
        system = folder / "ablation.conllu"
        write_conllu((enhance(s, [r for r in RULES if r is not rule], conventions) for s in sentences), system)
        scores = score(golds["collapsed"], system)
        result.setdefault("without", {})[rule.__name__] = {m: scores[m] for m in ("ELAS", "EULAS")}
    return result


def rules_speed(sentences: list[Sentence], conventions: Conventions, repeats: int = 3) -> float:
    """Words per second of :func:`enhance` over ``sentences`` (the fastest of ``repeats`` runs, one thread)."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        for s in sentences:
            enhance(s, RULES, conventions)
        seconds.append(time.perf_counter() - started)
    return round(sum(map(len, sentences)) / min(seconds))


def score_split(
    gold: Path, models: Iterable[str], cache: Path | None, ablation: bool, raw: bool, conventions: Conventions
) -> dict[str, Any]:
    sentences = list(read_conllu(gold))
    result: dict[str, Any] = {
        "file": portable_path(gold), "sentences": len(sentences), "rules_words_per_s": rules_speed(sentences, conventions),
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        collapsed = folder / "gold-collapsed.conllu"
        write_conllu(map(collapse_empty_nodes, sentences), collapsed)
        golds = {"collapsed": collapsed, "uncollapsed": gold}
        result["gold-tree"] = score_system(sentences, golds, folder, ablation, conventions)
        for model in models:
            parsed, how = parses(model, gold, cache, raw)
            result[f"{model} raw" if raw else model] = {**how, **score_system(parsed, golds, folder, ablation, conventions)}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=["en", "en-accurate"], help="Shipped models (or folders) to parse with.")
    parser.add_argument("--splits", nargs="+", default=["dev", "test"], choices=["train", "dev", "test"])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)),
                        help="Treebank folder (default ../shared/data, or $SPANDEP_DATA).")
    parser.add_argument("--parses", type=Path, help="Keep the parses in this folder and reuse them on a rerun.")
    parser.add_argument("--ablation", nargs="*", default=["dev"], help="Splits on which to score the rules less each one.")
    parser.add_argument("--raw", action="store_true", help="The models parse the split's raw text, not its gold tokens.")
    parser.add_argument("--dataset", default="en_ewt", choices=sorted(DATASETS), help="Treebank (one whose splits have DEPS).")
    parser.add_argument("--out", type=Path, help="Result file (default benchmarks/results/enhanced/DATASET.json).")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.parses:
        args.parses.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "schema": "spandep-enhanced/1", "treebank": args.dataset, "scorer": "udtools.udeval (IWPT 2021, --enhancements 0)",
        "command": "python -m benchmarks.scripts.enhanced_eval " + " ".join(argv if argv is not None else sys.argv[1:]),
        **checkout(), "machine": machine(), "date": time.strftime("%Y-%m-%d"), "torch_threads": 1,
    }
    language = treebank_language(args.dataset)
    conventions = CONVENTIONS.get(language.code if language else "", ENGLISH)
    result["conventions"] = {"language": language.code if language else None, **asdict(conventions)}
    for split in args.splits:
        gold = args.data / getattr(DATASETS[args.dataset], split).relative_to(DATA)
        result[split] = score_split(gold, args.models, args.parses, split in args.ablation, args.raw, conventions)
        for system in ("gold-tree", *(f"{m} raw" if args.raw else m for m in args.models)):
            row = result[split][system]
            figures = (f"{k} ELAS {row[k]['collapsed']['ELAS']:.2f} EULAS {row[k]['collapsed']['EULAS']:.2f}" for k in ("copy", "rules"))
            print(split, system, " ".join(figures))
    out = args.out or RESULTS / f"{args.dataset}.json"
    write_json(out, result)
    print("wrote", portable_path(out))


if __name__ == "__main__":
    main()
