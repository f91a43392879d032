"""Score a model of the multilingual pool on every treebank of the pool (or those named), for the languages table.

    python -m benchmarks.scripts.score_pool MODEL [--treebanks sq_staf mr_ufal ...] [--mode gold|raw|both] \\
        [--split test|dev] [--tokenizers ../run-tok/runs/tokenizers] [--pool runs/pool]

Each treebank and mode is one run of ``benchmarks.suite.raw_text`` (its ``run``: the same code, the model loaded
once), parsing as that treebank, one torch thread, scores only (``--rounds 0``; ``--rounds N`` times it too): its
test split as released, its dev split from the pool folder (``--pool``, else ``$SPANDEP_POOL``, else ``runs/pool``).
It writes ``<results>/<treebank>__<mode>.json`` (``--results``, default ``benchmarks/results/languages``: the files
``benchmarks/scripts/languages_table.py`` reads; ``--split dev`` writes ``<treebank>__<mode>__dev.json``, which no
table reads), with the ``raw_text`` command that redoes that one file (paths from the repository root, where the
driver runs it).

Resumable: a result file already there is skipped (``--again``: scored again), so a run stopped anywhere goes on
where it was when started again; a line per file on standard output says what was done. A treebank that fails is
logged (one line) and the run goes on; the command then ends with status 1, naming the failed ones.

Raw text is split by the model folder's trained tokenizer for the treebank (``tokenizers/<treebank>/``).
``--tokenizers DIR`` first copies into the folder the trained tokenizer ``DIR/<treebank>/tokenizer`` (what
``benchmarks/scripts/train_tokenizers.sh`` writes) of each treebank scored in raw mode that the folder has none of
(the folder's own are kept; each copy is atomic; into a compact folder, a shipped one, in float16 as ``spandep
export --tokenizer TREEBANK=FOLDER`` writes them, so a tokenizer trained after the export joins the folder as an
export would have written it). A treebank without one is split by the rule tokenizer: its line says so and its result
records ``"tokenizer": "rules"`` (else ``"trained"``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite import raw_text
from benchmarks.suite.record import portable_path
from benchmarks.suite.systems import POOL_MANIFEST, REPO, RESULTS, pool_entries, pool_folder
from spandep.storage.model_io import copy_tokenizer, load_model
from spandep.tokenization.text import tokenizer_folder

MODES = {"raw": ("raw",), "gold": ("gold",), "both": ("raw", "gold")}


def result_path(results: Path, treebank: str, mode: str, split: str) -> Path:
    """Where the result of ``treebank`` in ``mode`` on ``split`` goes (the table's name for the test split)."""
    return results / f"{treebank}__{mode}{'' if split == 'test' else f'__{split}'}.json"


def add_tokenizers(model: Path, trained: Path, treebanks: list[str]) -> list[str]:
    """Copy ``trained/<treebank>/tokenizer`` into ``model`` (``tokenizers/<treebank>/``, as ``save_model`` keeps them)
    for each of ``treebanks`` that has one there and none in ``model``; the treebanks given one. Into a compact
    model its weights go in float16 (int8 rows where its export was ``--int8-all``), as ``spandep export`` writes
    them (``model_io.copy_tokenizer``)."""
    compact = json.loads((model / "config.json").read_text(encoding="utf-8")).get("compact") or {}
    added = []
    for name in treebanks:
        given, target = trained / name / "tokenizer", tokenizer_folder(model, name)
        if (given / "config.json").is_file() and not (target / "config.json").is_file():
            tmp = target.with_name(f".{name}.tmp")
            for old in (tmp, target):
                shutil.rmtree(old, ignore_errors=True)
            copy_tokenizer(given, tmp, bool(compact), compact.get("int8_scope") == "all")
            os.replace(tmp, target)
            added.append(name)
    return added


def chosen(names: list[str] | None, pool: list[str], model: list[str]) -> list[str]:
    """The treebanks to score: ``names`` (default: every one of the pool), each of the pool and of the model."""
    wanted = names or pool
    unknown = [n for n in wanted if n not in pool]
    if unknown:
        raise SystemExit(f"score_pool: error: {', '.join(unknown)}: not a treebank of the pool's manifest ({len(pool)} treebanks); "
                         "name them as benchmarks/results/multilingual_pool.json does")
    missing = [n for n in wanted if n not in model]
    if missing:
        raise SystemExit(f"score_pool: error: the model was not trained on {', '.join(missing)}: name only treebanks it parses")
    return wanted


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line (``argv``; ``None``: the process's)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path, help="the model folder (trained on several treebanks, with a treebank embedding)")
    ap.add_argument("--treebanks", nargs="+", help="these treebanks of the pool (default: all)")
    ap.add_argument("--mode", default="both", choices=sorted(MODES))
    ap.add_argument("--split", default="test", choices=["test", "dev"])
    ap.add_argument("--pool", type=Path, default=pool_folder(),
                    help="the pool's folder, for the dev splits (default: $SPANDEP_POOL, else runs/pool)")
    ap.add_argument("--manifest", type=Path, default=POOL_MANIFEST, help="the pool's manifest")
    ap.add_argument("--results", type=Path, default=RESULTS / "languages", help="the folder of the result files")
    ap.add_argument("--tokenizers", type=Path, help="trained tokenizers, DIR/<treebank>/tokenizer, copied into the model first")
    ap.add_argument("--system", default="spandep-pool", help="the system's name in the result files")
    ap.add_argument("--rounds", type=int, default=0, help="timed runs of each path (0: scores only)")
    ap.add_argument("--again", action="store_true", help="score again where a result file is there already")
    return ap.parse_args(argv)


def log(message: str) -> None:
    """One progress line on standard output, with the time."""
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


def score(args: argparse.Namespace, treebank: str, mode: str, model: Any) -> str:
    """One ``raw_text`` run; its log line."""
    out = result_path(args.results, treebank, mode, args.split)
    argv = [
        "--model", portable_path(args.model), "--dataset", treebank, "--system", args.system, "--mode", mode,
        "--split", args.split, "--threads", "1", "--rounds", str(args.rounds), "--pool", portable_path(args.pool),
        "--manifest", portable_path(args.manifest), "--out", portable_path(out),
    ]
    started = time.perf_counter()
    _, result = raw_text.run(argv, model)
    how = {"trained": "its trained tokenizer", "rules": "the RULE tokenizer (no trained one)"}.get(result.get("tokenizer", ""), "gold tokens")
    return (f"{treebank} {mode} ({how}): LAS {result['conll18']['LAS']['f1']:.2f}, {result['conll18']['Words']['f1']:.2f} "
            f"Words, in {time.perf_counter() - started:.0f} s → {portable_path(out)}")


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    for name in ("model", "pool", "manifest", "results", "tokenizers"):
        if getattr(args, name) is not None:
            setattr(args, name, getattr(args, name).resolve())
    os.chdir(REPO)  # the commands the result files record run from the repository's root
    torch.set_num_threads(1)
    model = load_model(args.model)
    if model.treebanks is None:
        raise SystemExit(f"score_pool: error: {args.model} is a model of one treebank; give a model trained on the pool")
    treebanks = chosen(args.treebanks, list(pool_entries(args.manifest)), model.treebanks.names)
    if args.tokenizers is not None and "raw" in MODES[args.mode]:
        log(f"tokenizers copied in from {portable_path(args.tokenizers)}: {', '.join(add_tokenizers(args.model, args.tokenizers, treebanks)) or 'none'}")
    jobs = [(treebank, mode) for treebank in treebanks for mode in MODES[args.mode]]
    failed = []
    for i, (treebank, mode) in enumerate(jobs, 1):
        out = result_path(args.results, treebank, mode, args.split)
        if out.is_file() and not args.again:
            log(f"[{i}/{len(jobs)}] {treebank} {mode}: {portable_path(out)} is there, skipped (--again scores it again)")
            continue
        try:
            log(f"[{i}/{len(jobs)}] {score(args, treebank, mode, model)}")
        except Exception as exc:  # one treebank's failure is logged and the others are scored
            failed.append(f"{treebank} {mode}")
            log(f"[{i}/{len(jobs)}] {treebank} {mode}: FAILED: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}")
    if failed:
        print(f"score_pool: error: {len(failed)} failed: {', '.join(failed)} (their lines above say why)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
