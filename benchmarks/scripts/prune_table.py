"""The span setting ``prune`` on every shipped span model (issue 48, BENCHMARKS.md "Fewer queries: prune"): one row
per variant of each ``benchmarks/results/speed/prune__<name>.json`` (``benchmarks.scripts.runtime_options`` with the
variants ``prune0 prune0.001 ...``), and the share each model is given, chosen on dev by ``RULE``.

    python -m benchmarks.scripts.prune_table --doc BENCHMARKS.md
    python -m benchmarks.scripts.prune_table --write     # save each chosen share in its model folder's settings
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import REPO

RESULTS = REPO / "benchmarks" / "results" / "speed"
BEGIN, END = "<!-- prune:begin -->", "<!-- prune:end -->"
MARGIN = 0.1  # issue 48: a setting that changes the parse must stay within 0.1 LAS of it on dev
RULE = f"the largest share whose dev UAS and LAS (no punctuation) are each at most {MARGIN} below those with all k spans (prune0)"


def share(variant: str) -> float:
    """The ``prune`` share of a variant name (``prune0.003`` → 0.003)."""
    return float(variant[len("prune"):])


def chosen(result: dict[str, Any]) -> str:
    """The variant ``RULE`` picks among a result's ``prune`` variants (its first, ``prune0``, is the reference)."""
    variants = result["variants"]
    base = variants["prune0"]["dev"]
    close = [name for name, row in variants.items()
             if all(row["dev"][key] >= base[key] - MARGIN for key in ("uas_no_punct", "las_no_punct"))]
    return max(close, key=share)


def results() -> list[tuple[Path, dict[str, Any]]]:
    """Every ``prune__*.json`` with its contents, in file-name order."""
    return [(path, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(RESULTS.glob("prune__*.json"))]


def render() -> str:
    """The markdown table: per model and variant, words per CPU second at one thread (median of rounds), its ratio to
    prune0 (median and range of the per-round ratios), dev UAS / LAS without punctuation, UPOS, the share of dev words
    parsed as with prune0, the choice."""
    rows = [
        "| model (speed: test, first sentences; dev) | prune | words / CPU s | vs prune0 (per-round range) | dev UAS / LAS (no punct) "
        "| dev UPOS | same as prune0 | chosen | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for path, r in results():
        pick = chosen(r)
        dev_part = "dev" if r["dev_limit"] is None else f"dev, first {r['dev_limit']:,}"
        model = f"`{path.stem.split('__', 1)[1]}` ({r['limit']} test sentences, {r['words']:,} words; {dev_part})"
        for k, (variant, row) in enumerate(r["variants"].items()):
            speed, dev = row["1"], row["dev"]
            ratios = speed["vs_first_by_round"]
            ratio = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})" if k else "1"
            label = model if k == 0 else ""
            rows.append(
                f"| {label} | {share(variant):g} | {speed['words_per_cpu_s']:.0f} | {ratio} | {dev['uas_no_punct']:.2f} / {dev['las_no_punct']:.2f} "
                f"| {dev.get('upos', float('nan')):.2f} | {dev['same_as_first_percent']:.2f} % | {'**yes**' if variant == pick else ''} "
                f"| {'`' + str(path.relative_to(REPO)) + '`' if k == 0 else ''} |"
            )
    return "\n".join(rows) + "\n"


def write() -> None:
    """Save each model's chosen share into its folder's inference settings, how it was chosen beside it."""
    from spandep.options import InferenceOptions
    from spandep.storage.model_io import read_model_config, save_inference

    for path, r in results():
        folder = REPO / r["model"]
        pick = chosen(r)
        saved = dict(read_model_config(folder)["model"].get("inference") or {})
        settings = InferenceOptions.from_dict({**saved, "prune": share(pick)})
        save_inference(folder, settings, {"prune": share(pick), "rule": RULE, "result": str(path.relative_to(REPO)),
                                          "command": "python -m benchmarks.scripts.prune_table --write"})
        print(f"{r['model']}: prune {share(pick):g}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--write", action="store_true")
    known, _ = ap.parse_known_args()
    if known.write:
        write()
    else:
        table_main(__doc__, render, BEGIN, END, "the prune table")
