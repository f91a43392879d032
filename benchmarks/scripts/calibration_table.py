"""Calibration of every shipped model: fit on dev, measure on test, the table and the reliability diagram.

    .venv/bin/python -m benchmarks.scripts.calibration_table calibrate fr     # spandep calibrate FOLDER DEV --write
    .venv/bin/python -m benchmarks.scripts.calibration_table measure fr       # the test split with the saved mapping
    .venv/bin/python -m benchmarks.scripts.calibration_table table --doc BENCHMARKS.md
    .venv/bin/python -m benchmarks.scripts.calibration_table plot en fr ru --out docs/reliability-shipped-test.png

``calibrate NAME...`` runs ``spandep calibrate`` on the dev split of each catalogue model's treebank (the suite's
``DATASETS``, else the multilingual pool's treebank: ``benchmarks.suite.raw_text.dataset``) with ``--write`` (the
lines of one model of several treebanks in one call, ``--treebank`` each: each treebank's own calibration, shrunk
towards the model's own fitted on all their devs pooled) and keeps each report, stamped, as
``results/calibration/<name>.dev.json``; ``measure NAME ...`` (``--stale``: those whose result is missing or
of another calibration than their dev report's) parses the test split (a UD v1 one read with
v2 relations) with one torch thread, a folder shared by several names loaded once, and writes
``results/calibration/<name>.json`` (schema ``spandep-calibration/1``: the command, the machine, the checkout, the
saved calibration, the figures of ``WordScores.report`` and the reliability bins before and after); ``table``
renders both per model (``--doc``: between ``<!-- calibration:begin -->`` and ``<!-- calibration:end -->``);
``plot`` draws the test reliability of the models named from their results (needs matplotlib).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.suite.raw_text import dataset, gold_sentences
from benchmarks.suite.record import portable_path, stamp, weights_digest, write_json
from benchmarks.suite.report import print_or_replace
from benchmarks.suite.systems import REPO, RESULTS
from spandep.storage.catalogue import ShippedModel, read_catalogue

OUT = RESULTS / "calibration"
SCHEMA = "spandep-calibration/1"
BEGIN, END = "<!-- calibration:begin -->", "<!-- calibration:end -->"
HEADER = (
    "| model | treebank | kind (dev's choice) | dev held-out log loss: logit-platt / logit-isotonic | dev words | dev ECE raw → fitted | test words | test UAS | test head ECE raw → calibrated "
    "| ECE by chance: mean / 95th percentile | distinct / 1,000 words raw → calibrated | label ECE | head × label vs LAS ECE | results |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def model_named(name: str) -> ShippedModel:
    models = read_catalogue()[1]
    if name not in models or not models[name].installed():
        raise SystemExit(f"{name}: not an installed shipped model ({', '.join(m for m in models if models[m].installed())})")
    return models[name]


def command_line() -> str:
    return "python -m benchmarks.scripts.calibration_table " + shlex.join(sys.argv[1:])


def calibrate(names: list[str]) -> None:
    """``spandep calibrate`` on each model's dev split with ``--write``, its report kept: the names of one folder of
    several treebanks in one call (``--treebank`` per line: each line's own mapping, all of them leaning on the
    folder's own fitted on their devs pooled), any other one by one."""
    folders: dict[Path, list[ShippedModel]] = {}
    for name in names:
        model = model_named(name)
        folders.setdefault(model.folder, []).append(model)
    for folder, models in folders.items():
        groups = [models] if all(m.model_treebank for m in models) else [[m] for m in models]
        for group in groups:
            run = [sys.executable, "-m", "spandep", "calibrate", portable_path(folder),
                   *(portable_path(dataset(str(m.code), None).dev) for m in group), "--threads", "1", "--write"]
            run += [x for m in group if m.model_treebank for x in ("--treebank", m.model_treebank)]
            done = subprocess.run(run, cwd=REPO, capture_output=True, text=True, check=True)
            reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            by_treebank = {report.get("treebank"): report for report in reports}  # a folder's own pooled line has none
            weights = weights_digest(folder)  # ship_pool.sh calibrates again after new weights
            for model in group:
                report = {**(by_treebank[model.model_treebank] if model.model_treebank else reports[0]), "weights": weights}
                path = OUT / f"{model.name}.dev.json"
                write_json(path, stamp(report, SCHEMA, "python -m spandep " + shlex.join(run[3:])))
                print(f"wrote {portable_path(path)}: dev head ECE {report['head_ece_raw']} → {report['head_ece_fitted']} % ({report['kind']})")


def stale(names: list[str]) -> list[str]:
    """The names whose test result is missing or measured with another calibration than their dev report's."""
    def mapping(path: Path) -> object:
        return json.loads(path.read_text(encoding="utf-8")).get("calibration") if path.is_file() else None
    measured = {n: mapping(OUT / f"{n}.json") for n in names}
    return [n for n in names if measured[n] is None or measured[n] != mapping(OUT / f"{n}.dev.json")]


def measure(names: list[str]) -> None:
    """The test figures of each model with its saved calibration (one torch thread; a folder loaded once)."""
    import torch

    from spandep.api import ModelSpec
    from spandep.evaluation.calibration import WordScores, ece_floor, reliability
    from spandep.pipeline.long import parse_sentences

    torch.set_num_threads(1)
    loaded: dict[Path, Any] = {}
    for name in names:
        model = model_named(name)
        data = dataset(str(model.code), None)
        spec = ModelSpec.resolve(name, threads=1)
        parser = loaded[spec.folder] = loaded.get(spec.folder) or spec.load_model()
        calibration = parser.calibration.for_treebank(model.model_treebank)
        gold = gold_sentences(data.test, data.v1_test)
        words = WordScores.read(gold, parse_sentences(parser, gold, spec.options), calibration)
        bins = {key: reliability(p, words.head_right) for key, p in (("raw", words.raw), ("calibrated", words.saved))}
        result = {
            "model": name, "folder": portable_path(model.folder), "treebank": model.code, "test": portable_path(data.test),
            "calibration": calibration.to_dict(), **words.report(), "head_ece_floor": ece_floor(words.saved),
            "reliability": {key: {f: [None if x != x else round(float(x), 6) for x in getattr(r, f)] for f in ("counts", "confidence", "accuracy")}
                            for key, r in bins.items()},
        }
        path = OUT / f"{name}.json"
        write_json(path, stamp(result, SCHEMA, command_line()))
        print(f"wrote {portable_path(path)}: test head ECE {result['head_ece_raw']} → {result['head_ece']} %")


def render() -> str:
    """The table, in the catalogue's order, of the models with a test result."""
    lines = []
    for name in read_catalogue()[1]:
        test_file, dev_file = OUT / f"{name}.json", OUT / f"{name}.dev.json"
        if not test_file.is_file():
            continue
        t = json.loads(test_file.read_text(encoding="utf-8"))
        d = json.loads(dev_file.read_text(encoding="utf-8")) if dev_file.is_file() else None
        kind = t["calibration"].get("kind", "platt")
        cells = [
            f"`{name}`", str(t["treebank"]), kind if d is None else f"{kind} ({d['chosen']})",
            "–" if d is None else " / ".join(f"{d['held_out'][k]['log_loss']:.4f}" for k in ("logit-platt", "logit-isotonic")),
            "–" if d is None else f"{d['words']:,}", "–" if d is None else f"{d['head_ece_raw']:.2f} → {d['head_ece_fitted']:.2f} %",
            f"{t['words']:,}", f"{t['uas']:.2f}", f"{t['head_ece_raw']:.2f} → **{t['head_ece']:.2f} %**",
            " / ".join(f"{x:.2f}" for x in t["head_ece_floor"]) + " %" if "head_ece_floor" in t else "–",
            f"{t['distinct_per_1000_raw']:.0f} → {t['distinct_per_1000']:.0f}", f"{t['label_ece']:.2f} %", f"{t['las_ece']:.2f} %",
            ", ".join(f"`{portable_path(f)}`" for f in (dev_file, test_file) if f.is_file()),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return HEADER + "\n".join(lines) + "\n"


def plot(names: list[str], out: Path) -> None:
    """The test reliability diagram of ``names``' raw and calibrated head probabilities, from their results."""
    import numpy as np

    from spandep.data.output import write_bytes
    from spandep.evaluation.calibration import Reliability, plot_reliability

    curves = {}
    for name in names:
        for key, bins in json.loads((OUT / f"{name}.json").read_text(encoding="utf-8"))["reliability"].items():
            columns = (np.array([np.nan if x is None else x for x in bins[f]], dtype=np.float64) for f in ("counts", "confidence", "accuracy"))
            curves[f"{name}, {key}"] = Reliability(*columns)
    write_bytes(plot_reliability(curves, "head probability on test, calibrated on dev"), out)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    sub.add_parser("calibrate").add_argument("names", nargs="+", help="shipped models' names (spandep models)")
    measuring = sub.add_parser("measure")
    measuring.add_argument("names", nargs="+", help="shipped models' names (spandep models)")
    measuring.add_argument("--stale", action="store_true", help="only those whose result is missing or of another calibration than their dev report's")
    sub.add_parser("table").add_argument("--doc", type=Path, help=f"write the table between {BEGIN} and {END} of this file")
    drawing = sub.add_parser("plot")
    drawing.add_argument("names", nargs="+")
    drawing.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.step == "calibrate":
        calibrate(args.names)
    elif args.step == "measure":
        measure(stale(args.names) if args.stale else args.names)
    elif args.step == "table":
        print_or_replace(render(), args.doc, BEGIN, END, "the calibration table")
    else:
        plot(args.names, args.out)


if __name__ == "__main__":
    main()
