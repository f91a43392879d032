"""Raw text in, trees out: parse a treebank split from its raw text with one model, score it end to end, time it.

    python -m benchmarks.suite.raw_text --model src/spandep/resources/default_model --dataset en_ewt --system default

The raw text of the split is built by ``spandep.tokenization.corpus.raw_text`` (docs/tokenizer.md: each sentence's
``# text``, one space between sentences, a blank line between paragraphs). The model folder's tokenizer (its
``tokenizer/``, else the rule fallback) splits it, the model parses the sentences, and the CoNLL 2018 scorer
(``spandep.evaluation.conll18``: every metric, all words, universal LAS) scores them against the gold file.

Speed, one process, model load excluded: raw text → trees (tokenize, then parse) and the same predicted sentences
given as tokens (parse only), timed in alternation, ``--rounds`` times each after one warm-up of each; the result
keeps every run (wall-clock and this process's CPU seconds), the wall-clock medians and ``raw_over_tokens``: raw-text
speed as a share of the tokens path's, the median over rounds of the two runs' ratio within a round (runs next to
each other in time share the machine's load); ``raw_over_tokens_cpu`` is the same ratio in CPU seconds, which other
processes on a busy machine barely change (one torch thread). The tokenizer alone is timed the same way.

A model trained on several treebanks parses as ``--treebank`` (default: ``--dataset``), with that treebank's
tokenizer. ``--mode gold`` parses the gold tokens instead (every column but FORM and MISC blanked), for the same table, and
also records ``ours``: our own UAS / LAS over all words and without punctuation, full labels. With
``--baseline MODEL`` it also parses them with that model, in alternation, and records ``over_baseline`` (and
``over_baseline_cpu``): this model's speed as a share of the baseline's, the median of the per-round ratios (how a
retrained model is checked against the one it replaces).

Datasets: the suite's (``systems.DATASETS``) and every treebank of the multilingual pool (``systems.pool_dataset``,
its manifest ``--manifest``): test as released (``.xz`` read as it is; a UD v1 test read with v2 relations, as the
pool model is trained: ``gold_labels`` says so), dev from the pool folder (``--pool``, else ``$SPANDEP_POOL``, else
``runs/pool``: for a dev-only treebank its held-out part). A name of both (the suite's seven) is the suite's unless
``--pool`` is given. A pool treebank's result also records its UD release and training split (``ud_release``,
``train_split``); every result says whether the gold has lemmas (``gold_lemmas``). ``--rounds 0``: scores only, no
timing (``benchmarks/scripts/score_pool.py`` scores the whole pool so).

Writes ``benchmarks/results/raw/<dataset>__<system>.json`` (``__gold`` before ``.json`` in gold mode; or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.record import TOKENIZER_FILES, checkout, machine, portable_path, weights_digest, write_json
from benchmarks.suite.systems import DATASETS, GOLD_LABELS, POOL_MANIFEST, RESULTS, Dataset, pool_dataset, pool_entries, pool_folder
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence, Token
from spandep.data.udv1 import to_v2
from spandep.encoders.bases import resolve_model_path
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.evaluation.metrics import evaluate
from spandep.options import InferenceOptions
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.tokenization import RuleTokenizer, tokenizer_for
from spandep.tokenization.text import Tokenizer, tokenizer_folder
from spandep.tokenization.corpus import raw_text, read_paragraphs

SCHEMA = "spandep-raw-text/1"
Parse = Callable[[list[Sentence]], list[Sentence]]


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU (this process's) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return round(time.perf_counter() - wall, 3), round(time.process_time() - cpu, 3)


def alternate(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Wall-clock and CPU seconds of ``rounds`` calls of each of ``runs``, taking turns, after one untimed call of each."""
    for run in runs.values():
        run()
    seconds: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            wall, cpu = timed(run)
            seconds[name]["wall"].append(wall)
            seconds[name]["cpu"].append(cpu)
    return seconds


def paired_ratio(seconds: dict[str, dict[str, list[float]]], clock: str, fast: str = "tokens", slow: str = "raw_text") -> float:
    """The speed of ``slow`` as a share of ``fast``'s: the median over rounds of the two runs' time ratio."""
    return round(statistics.median(t / r for t, r in zip(seconds[fast][clock], seconds[slow][clock])), 3)


def blank(sentence: Sentence) -> Sentence:
    """``sentence`` as a parser's input: FORM, MISC, comments and multiword-token lines kept, every other column ``_``."""
    return replace(sentence, words=[Token(w.id, w.form, misc=w.misc) for w in sentence.words])


def raw_mode(parse: Parse, gold: list[Sentence], text: str, tokenizer: Tokenizer, rounds: int) -> dict[str, Any]:
    """Raw text → trees: scores, and (``rounds``) speed against the same predicted sentences given as tokens."""
    tokenized = tokenizer.tokenize(text, "<raw text>")
    predicted = parse(tokenized)
    words = sum(len(s) for s in predicted)
    measured: dict[str, Any] = {
        "conll18": evaluate_conll18(gold, predicted, gold_source="gold", system_source="<raw text>").to_dict(),
        "tokenizer": "rules" if isinstance(tokenizer, RuleTokenizer) else "trained",
        "system_sentences": len(predicted), "system_words": words, "characters": len(text),
    }
    if not rounds:
        return measured
    seconds = alternate({
        "raw_text": lambda: parse(tokenizer.tokenize(text)),
        "tokens": lambda: parse(tokenized),
        "tokenizer": lambda: tokenizer.tokenize(text),
    }, rounds)
    median = {name: statistics.median(runs["wall"]) for name, runs in seconds.items()}
    return measured | {
        "words_per_s": round(words / median["raw_text"], 1),
        "speed": {
            "seconds": seconds, "median_seconds": median,
            "raw_text_sent_per_s": round(len(predicted) / median["raw_text"], 1),
            "tokens_words_per_s": round(words / median["tokens"], 1),
            "raw_over_tokens": paired_ratio(seconds, "wall"),
            "raw_over_tokens_cpu": paired_ratio(seconds, "cpu"),
            "tokenizer_share": round(median["tokenizer"] / median["raw_text"], 3),
        },
    }


def gold_mode(parse: Parse, gold: list[Sentence], rounds: int, baseline: Parse | None = None) -> dict[str, Any]:
    """Gold tokens (every column but FORM blanked) → trees: scores and (``rounds``) speed (against ``baseline``'s, if
    given)."""
    inputs = [blank(s) for s in gold]
    predicted = parse(inputs)
    ours = evaluate(gold, predicted, gold_source="gold", pred_source="<gold tokens>")
    measured: dict[str, Any] = {
        "conll18": evaluate_conll18(gold, predicted, gold_source="gold", system_source="<gold tokens>").to_dict(),
        "ours": {"UAS": ours.uas, "LAS": ours.las, "UAS_nopunct": ours.uas_no_punct, "LAS_nopunct": ours.las_no_punct, "punct_rule": ours.punct_rule},
    }
    if not rounds:
        return measured
    runs: dict[str, Callable[[], object]] = {"tokens": lambda: parse(inputs)}
    if baseline is not None:
        runs["baseline"] = lambda: baseline(inputs)
    seconds = alternate(runs, rounds)
    median = statistics.median(seconds["tokens"]["wall"])
    speed: dict[str, Any] = {"seconds": seconds, "median_seconds": median, "sent_per_s": round(len(gold) / median, 1)}
    if baseline is not None:
        speed["over_baseline"] = paired_ratio(seconds, "wall", fast="baseline", slow="tokens")
        speed["over_baseline_cpu"] = paired_ratio(seconds, "cpu", fast="baseline", slow="tokens")
    return measured | {"words_per_s": round(sum(len(s) for s in gold) / median, 1), "speed": speed}


def model_parser(model: Any, treebank: str | None) -> tuple[Parse, InferenceOptions]:
    """A parse function over ``model`` with its saved settings, and those settings, as ``treebank`` where the model
    was trained on several (ignored for a model of one)."""
    settings = model.settings(InferenceOptions(treebank=treebank if model.treebanks is not None else None))
    return (lambda sentences: list(parse_stream(model, sentences, settings))), settings


def trained(model: Any) -> dict[str, Any]:
    """How the model was trained, from its ``config.json``: the epochs its config asked for and the epoch kept (the
    best on dev), ``{}`` for a model saved without that record."""
    record = model.config.get("training") or {}
    epochs = (record.get("config") or {}).get("training", {}).get("epochs")
    return {"epochs": epochs, "best_epoch": record["epoch"]} if epochs is not None and "epoch" in record else {}


def dataset(name: str, pool: Path | None, manifest: Path = POOL_MANIFEST) -> Dataset:
    """The files of dataset ``name``: the suite's, else (or with ``pool`` given) the pool treebank's, its dev in
    ``pool`` (``None``: ``$SPANDEP_POOL``, else ``runs/pool``); one line naming what there is for a name of neither."""
    if name in DATASETS and pool is None:
        return DATASETS[name]
    try:
        return pool_dataset(name, pool or pool_folder(), manifest)
    except KeyError:
        known = len(pool_entries(manifest))
        raise SystemExit(f"raw_text: error: no dataset {name!r}: give one of the suite's ({', '.join(DATASETS)}) or one of the "
                         f"{known} treebanks of the pool's manifest {portable_path(manifest)}") from None


def gold_sentences(path: Path, v1: bool) -> list[Sentence]:
    """The sentences of a gold file; a UD v1 one's with v2 relations (``v1``)."""
    sentences = list(read_conllu(path))
    return [to_v2(s) for s in sentences] if v1 else sentences


def first_words(sentences: list[Sentence], cap: int) -> list[Sentence]:
    """Whole ``sentences`` from the first, up to the one that brings them to ``cap`` words (a dev sample)."""
    kept, words = [], 0
    for sentence in sentences:
        if words >= cap:
            break
        kept.append(sentence)
        words += len(sentence.words)
    return kept


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line (``argv``; ``None``: the process's)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=Path, help="model folder (its tokenizer/ splits the text)")
    ap.add_argument("--dataset", required=True, help=f"one of the suite's ({', '.join(DATASETS)}) or a treebank of the pool")
    ap.add_argument("--system", required=True, help="name of the system in the result file's name")
    ap.add_argument("--mode", default="raw", choices=["raw", "gold"], help="raw text, or gold tokens with other columns blanked")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5, help="timed runs of each path (0: scores only)")
    ap.add_argument("--baseline", type=Path, help="gold mode: a model folder timed in alternation (speed ratio)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--treebank", help="a model of several treebanks: the one to parse as (default: --dataset)")
    ap.add_argument("--pool", type=Path, help="the pool's folder, for its treebanks' dev splits (default: $SPANDEP_POOL, else runs/pool)")
    ap.add_argument("--manifest", type=Path, default=POOL_MANIFEST, help="the pool's manifest (benchmarks/scripts/multilingual_pool.py)")
    return ap.parse_args(argv)


def run(argv: list[str], model: Any | None = None) -> tuple[Path, dict[str, Any]]:
    """Score as the command line ``argv`` asks and write the result file; its path and the result. ``model``: the
    ``--model`` folder loaded already (a driver scoring many datasets loads it once)."""
    args = arguments(argv)
    torch.set_num_threads(args.threads)
    data = dataset(args.dataset, args.pool, args.manifest)
    gold_path = getattr(data, args.split)
    v1 = data.v1_test and args.split == "test"  # the pool's own files are converted already
    gold = gold_sentences(gold_path, v1)
    model = model if model is not None else load_model(args.model)
    parse, options = model_parser(model, args.treebank or args.dataset)
    treebank = options.treebank
    if args.mode == "raw":
        text = raw_text(read_paragraphs(gold_path))
        measured = raw_mode(parse, gold, text, tokenizer_for(args.model, treebank, resolve_model_path), args.rounds)
        measured["tokenizer_weights"] = weights_digest(tokenizer_folder(Path(args.model), treebank), TOKENIZER_FILES)
    else:
        baseline = model_parser(load_model(args.baseline), args.treebank or args.dataset)[0] if args.baseline else None
        measured = gold_mode(parse, gold, args.rounds, baseline)
    pooled = {} if data.train_split is None else {
        "ud_release": data.release, "train_split": data.train_split, "gold_labels": GOLD_LABELS[data.v1_test],
    }
    result = {
        "schema": SCHEMA, "treebank": args.dataset, "split": args.split, "gold": portable_path(gold_path), **pooled,
        "gold_lemmas": any(w.lemma != "_" for s in gold for w in s.words),  # False: Lemmas and BLEX compare "_" with "_"
        "system": args.system, "mode": args.mode, "model": str(args.model), "weights": weights_digest(args.model),
        **({"model_treebank": treebank} if treebank else {}),
        "inference": options.given(), "trained": trained(model), **measured,
        **({"baseline": str(args.baseline)} if args.baseline else {}),
        "threads": args.threads, "rounds": args.rounds,
        "command": "python -m benchmarks.suite.raw_text " + " ".join(argv),
        **checkout(), "machine": machine(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    out = args.out or RESULTS / "raw" / f"{args.dataset}__{args.system}{'' if args.mode == 'raw' else '__gold'}.json"
    write_json(out, result)
    return out, result


def main(argv: list[str] | None = None) -> None:
    out, result = run(argv if argv is not None else sys.argv[1:])
    print("wrote", out)
    print(" ".join(f"{name} {score['f1']:.2f}" for name, score in result["conll18"].items() if isinstance(score, dict)))
    if "speed" in result:
        print(json.dumps({k: v for k, v in result["speed"].items() if k != "seconds"}))


if __name__ == "__main__":
    main()
