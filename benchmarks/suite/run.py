"""One entry point for the benchmark suite: train (or reuse) each system, parse and score the test split, time it.

    python -m benchmarks.suite.run --suite ewt|all|DATASET [--systems NAME ...] [--no-reuse] [--limit N] [--threads 2] [--train-device cuda] [--parse-device cuda] [--out DIR]

For every system × dataset of the suite (the tables in benchmarks/suite/systems.py): run ``spandep train CONFIG`` when the
config's model folder does not exist or its run has not finished (that resumes it; with ``--no-reuse`` always, which
returns at once for a finished run; a run another process is training is a clear error, not a second writer); for a span system,
choose the model's inference settings on dev once (``spandep tune`` with the system's grid and
``--write-model``; its sweep goes to ``OUT/<dataset>_dev__span_sweep__<run>.json``); then parse and score
the test split in a child process (benchmarks/suite/measure.py) and write ``OUT/<dataset>__<system>.json``
(fields: benchmarks/suite/record.py). Span systems override only the decoder of the model's saved, dev-chosen inference
settings. ``--limit`` parses only the first N test sentences (training still uses the whole train split); such
runs must go to a scratch ``--out``. Run from anywhere: paths in configs are taken from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.suite.record import (
    NOT_TRAINED, TUNE_SCHEMA, checkout, encoder_name, machine, scores, stamp_file, trained_on, training, write_result,
)
from benchmarks.suite.systems import DATASETS, REPO, RESULTS, SUITES, SYSTEMS, Dataset, System
from spandep.storage.model_io import CHOICE_FILE
from spandep.training.config import load_config


def ensure_model(config: dict[str, Any], config_path: Path, reuse: bool, threads: int, device: str) -> Path:
    """The config's trained model folder, training it first with ``spandep train`` unless ``reuse`` and it exists and
    its run has finished. An unfinished run (its ``train.log`` short of the epochs, patience not spent) is resumed
    rather than measured; a model folder without a ``train.log`` (copied in) counts as finished."""
    model = Path(config["training"]["output"]) / "model"
    finished = training(model.parent / "train.log", config)["train_finished"] is not False
    if not (reuse and (model / "config.json").is_file() and finished):
        cmd = [sys.executable, "-m", "spandep.cli.main", "train", str(config_path), "--threads", str(threads), "--device", device]
        subprocess.run(cmd, check=True)
    return model


def ensure_tuned(model: Path, system: System, dev: Path, sweep: Path, threads: int, device: str) -> str | None:
    """For a span system: choose the model's inference settings on dev with ``spandep tune`` (once per
    model: its ``inference_choice.json`` marks it done); the command that chose them, or None for other systems."""
    if not system.tune:
        return None
    choice = model / CHOICE_FILE
    if not choice.is_file():
        sweep.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "spandep", "tune", str(model), str(dev),
               "--threads", str(threads), "--device", device, *system.tune, "--out", str(sweep), "--write"]
        subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
        stamp_file(sweep, TUNE_SCHEMA, " ".join(["python", "-m", "benchmarks.suite.run", *sys.argv[1:]]))
    return json.loads(choice.read_text())["command"]


def measure(model: Path, test: Path, decoder: str | None, limit: int | None, threads: int, device: str) -> dict[str, Any]:
    """Run benchmarks.suite.measure in a child process and return its JSON."""
    cmd = [sys.executable, "-m", "benchmarks.suite.measure", "--model", str(model), "--test", str(test), "--threads", str(threads),
           "--device", device]
    cmd += ["--decoder", decoder] if decoder else []
    cmd += ["--limit", str(limit)] if limit else []
    out = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(out)


def run_one(name: str, system: System, dataset_name: str, dataset: Dataset, args: argparse.Namespace) -> dict[str, Any]:
    """Train or reuse, measure and assemble the result of one system on one dataset."""
    config_path = REPO / system.configs[dataset_name]
    config = load_config(config_path)
    for split in ("train", "dev"):
        if Path(config["data"][split]).resolve() != getattr(dataset, split).resolve():
            raise SystemExit(f"{config_path}: [data] {split} is {config['data'][split]}, not {dataset_name}'s {split}")
    notes = {}
    shipped = system.shipped(dataset_name)
    if shipped:  # measured as installed, neither trained nor tuned by the suite
        model, tuned_by, trained = REPO / shipped, None, dict(NOT_TRAINED)
        notes["train_minutes"] = (f"{shipped} measured as installed, with the inference settings it ships with "
                                 "(chosen on dev); not trained by the suite (its training: README.md, model card)")
    else:
        model = ensure_model(config, config_path, args.reuse, args.threads, args.train_device)
        sweep = Path(args.out) / f"{dataset_name}_dev__span_sweep__{config_path.stem}.json"
        tuned_by = ensure_tuned(model, system, dataset.dev, sweep, args.threads, args.train_device)
        trained = training(model.parent / "train.log", config)
    device = trained_on(model) or args.train_device  # where the measured model was trained: its saved config says
    m = measure(model, dataset.test, system.decoder, args.limit, args.threads, args.parse_device)
    speed = m["speed"]
    if trained["train_finished"] is False:
        notes["train_finished"] = f"training had not finished when this was measured (epoch {trained['train_epochs']} of {config['training']['epochs']})"
    if not dataset.labelled:
        notes["LAS"] = "an unlabelled treebank (DEPREL only root/dep): UAS only; the file's LAS and CLAS are not scores"
    if args.limit:
        notes["limit"] = f"first {args.limit} test sentences only: not comparable with full runs"
    command = ["python", "-m", "benchmarks.suite.run", "--suite", dataset_name, "--systems", name, "--threads", str(args.threads)]
    command += ["--limit", str(args.limit)] if args.limit else []
    command += ["--train-device", device] if device != "cpu" and not shipped else []
    command += ["--parse-device", args.parse_device] if args.parse_device != "cpu" else []
    command += ["--out", args.out] if Path(args.out) != RESULTS else []
    return {
        "dataset": dataset_name, "split": "test", "labelled": dataset.labelled, "system": name, "encoder": encoder_name(config),
        "model_type": speed["model_type"], "decoder": speed["decoder"],
        "inference": {**speed["inference"], "decoder": speed["decoder"]},
        **scores(m["evaluation"]), "limit": args.limit,
        "parse_sent_per_s": speed["sent_per_s"]["mean"], "parse_words_per_s": speed["words_per_s"]["mean"],
        "parse_seconds": speed["runs_seconds"][0], "threads": speed["threads"], "batch_tokens": speed["batch_tokens"],
        **trained, "peak_rss_mb": m["peak_rss_mb"],
        "config": system.configs[dataset_name], "model": os.path.relpath(model, REPO), "test": os.path.relpath(dataset.test, REPO),
        **checkout(),
        "command": shlex.join(command), "train_device": device, "parse_device": args.parse_device,
        "inference_chosen_by": tuned_by, "machine": {**machine(args.parse_device), "torch": speed["torch"]},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "notes": notes, "span_stats": m["span_stats"], "evaluation": m["evaluation"],
    }


def run_suite(pairs: list[tuple[str, str]], systems: dict[str, System], datasets: dict[str, Dataset],
              args: argparse.Namespace) -> list[Path]:
    """Measure each (system, dataset) pair that has a config and write its result file; returns the files."""
    written = []
    for name, dataset_name in pairs:
        if dataset_name not in systems[name].configs:
            print(f"skip {dataset_name} × {name}: no config for this dataset", file=sys.stderr)
            continue
        print(f"== {dataset_name} × {name}", file=sys.stderr, flush=True)
        result = run_one(name, systems[name], dataset_name, datasets[dataset_name], args)
        path = Path(args.out) / f"{dataset_name}__{name}.json"
        write_result(path, result)
        print(f"{path}: UAS {result['UAS']:.2f} LAS {result['LAS']:.2f} (no punct {result['UAS_nopunct']:.2f} / "
              f"{result['LAS_nopunct']:.2f}), {result['parse_sent_per_s']} sent/s, peak RSS {result['peak_rss_mb']} MB", flush=True)
        written.append(path)
    return written


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=SUITES, default="ewt", help="ewt, all, or one dataset's name")
    ap.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS), metavar="NAME",
                    help=f"default: all of {', '.join(SYSTEMS)}")
    ap.add_argument("--reuse", action=argparse.BooleanOptionalAction, default=True,
                    help="use an existing model as it is (default); --no-reuse runs spandep train first")
    ap.add_argument("--limit", type=int, help="parse only the first N test sentences (needs --out)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--train-device", default="cpu", help="cpu or cuda: where training and the dev sweep run")
    ap.add_argument("--parse-device", default="cpu", help="cpu or cuda: where the test split is parsed and timed "
                    "(default: the CPU, with --threads)")
    ap.add_argument("--out", default=str(RESULTS), help="folder for the result files")
    args = ap.parse_args(argv)
    args.out = str(Path(args.out).resolve())
    if args.limit and Path(args.out) == RESULTS:
        ap.error("--limit runs are not recorded in benchmarks/results/: give a scratch --out")
    return args


def main() -> None:
    args = parse_args()
    os.chdir(REPO)  # configs name their data relative to the repository root
    run_suite([(s, d) for d in SUITES[args.suite] for s in args.systems], SYSTEMS, DATASETS, args)


if __name__ == "__main__":
    main()
