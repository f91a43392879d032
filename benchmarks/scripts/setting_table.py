"""Inference settings chosen on dev per shipped model (issue 48, BENCHMARKS.md "Fewer queries: prune" and "bfloat16"):
one row per variant of each ``benchmarks/results/speed/<setting>__<name>.json`` (``benchmarks.scripts.runtime_options``
with the setting's variants: ``prune0 prune0.001 ...``, ``k5 k4 k3 k2`` (the model's saved k first), or ``float32
bfloat16``), and the value each model is given,
chosen on dev by the setting's rule.

    python -m benchmarks.scripts.setting_table prune --doc BENCHMARKS.md
    python -m benchmarks.scripts.setting_table precision --write     # save each chosen value in its model folder
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import REPO

RESULTS = REPO / "benchmarks" / "results" / "speed"
MARGIN = 0.1  # issue 48: a setting that changes the parse must stay within 0.1 LAS of it on dev


@dataclass(frozen=True)
class Setting:
    """An inference setting measured by ``runtime_options``: ``reference`` names the variant the others are held to
    (``None``: each result's first, the value the model saved); ``value`` reads a variant's value, ``preference``
    orders the variants (the highest within ``MARGIN`` on every one of ``keys`` wins)."""

    name: str
    reference: str | None
    keys: tuple[str, ...]
    value: Callable[[str], Any]
    preference: Callable[[str], float]
    rule: str


SETTINGS = {
    "prune": Setting(
        "prune", "prune0", ("uas_no_punct", "las_no_punct"), lambda v: float(v[len("prune"):]), lambda v: float(v[len("prune"):]),
        f"the largest share whose dev UAS and LAS (no punctuation) are each at most {MARGIN} below those with all k spans (prune0)",
    ),
    "k": Setting(
        "k", None, ("uas_no_punct", "las_no_punct"), lambda v: int(v[1:]), lambda v: -int(v[1:]),
        f"the fewest spans per word whose dev UAS and LAS (no punctuation) are each at most {MARGIN} below those at the k the model saved (the first variant)",
    ),
    "precision": Setting(
        "precision", "float32", ("uas_no_punct", "las_no_punct", "upos"), str, lambda v: float(v == "bfloat16"),
        f"bfloat16 where its dev UAS, LAS (no punctuation) and UPOS are each at most {MARGIN} below float32's",
    ),
}


def chosen(setting: Setting, result: dict[str, Any]) -> str:
    """The variant ``setting.rule`` picks among a result's variants (held to ``setting.reference``, else the first).
    The scores have two decimals: a variant exactly ``MARGIN`` below is within, whatever floating point makes of it."""
    variants = result["variants"]
    base = variants[setting.reference or next(iter(variants))]["dev"]
    close = [name for name, row in variants.items() if all(round(row["dev"][key] - base[key], 6) >= -MARGIN for key in setting.keys)]
    return max(close, key=setting.preference)


def results(setting: Setting) -> list[tuple[Path, dict[str, Any]]]:
    """Every ``<setting>__*.json`` with its contents, in file-name order."""
    return [(path, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(RESULTS.glob(f"{setting.name}__*.json"))]


def render(setting: Setting) -> str:
    """The markdown table: per model and variant, words per CPU second at one thread (median of rounds), its ratio to
    the reference (median and range of the per-round ratios), dev UAS / LAS without punctuation, UPOS, the share of dev
    words parsed as with the reference, the choice."""
    ref = setting.reference or "the first"
    rows = [
        f"| model (speed: test, first sentences; dev) | {setting.name} | words / CPU s | vs {ref} (per-round range) | dev UAS / LAS (no punct) "
        f"| dev UPOS | same as {ref} | chosen | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for path, r in results(setting):
        pick = chosen(setting, r)
        dev_part = "dev" if r["dev_limit"] is None else f"dev, first {r['dev_limit']:,}"
        model = f"`{path.stem.split('__', 1)[1]}` ({r['limit']} test sentences, {r['words']:,} words; {dev_part})"
        for k, (variant, row) in enumerate(r["variants"].items()):
            speed, dev, value = row["1"], row["dev"], setting.value(variant)
            ratios = speed["vs_first_by_round"]
            ratio = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})" if k else "1"
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            rows.append(
                f"| {model if k == 0 else ''} | {shown} | {speed['words_per_cpu_s']:.0f} | {ratio} "
                f"| {dev['uas_no_punct']:.2f} / {dev['las_no_punct']:.2f} | {dev.get('upos', float('nan')):.2f} "
                f"| {dev['same_as_first_percent']:.2f} % | {'**yes**' if variant == pick else ''} "
                f"| {'`' + str(path.relative_to(REPO)) + '`' if k == 0 else ''} |"
            )
    return "\n".join(rows) + "\n"


def write(setting: Setting) -> None:
    """Save each model's chosen value into its folder's inference settings; the record of how it was chosen goes
    beside it (``inference_choice.json``), the record it replaces kept in it as ``before``."""
    from spandep.options import InferenceOptions
    from spandep.storage.model_io import CHOICE_FILE, read_model_config, save_inference

    for path, r in results(setting):
        folder = REPO / r["model"]
        value = setting.value(chosen(setting, r))
        saved = dict(read_model_config(folder)["model"].get("inference") or {})
        before = folder / CHOICE_FILE
        record = {setting.name: value, "rule": setting.rule, "result": str(path.relative_to(REPO)),
                  "command": f"python -m benchmarks.scripts.setting_table {setting.name} --write"}
        if before.is_file():
            previous = json.loads(before.read_text(encoding="utf-8"))
            record["before"] = previous.get("before") if previous.get("command") == record["command"] else previous
            record = {k: v for k, v in record.items() if v is not None}
        save_inference(folder, InferenceOptions.from_dict({**saved, setting.name: value}), record)
        print(f"{r['model']}: {setting.name} {value}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("setting", choices=sorted(SETTINGS))
    ap.add_argument("--write", action="store_true")
    known, rest = ap.parse_known_args()
    chosen_setting = SETTINGS[known.setting]
    if known.write:
        write(chosen_setting)
    else:
        sys.argv[1:] = rest
        table_main(__doc__, lambda: render(chosen_setting), f"<!-- {known.setting}:begin -->", f"<!-- {known.setting}:end -->",
                   f"the {known.setting} table")
