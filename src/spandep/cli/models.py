"""``spandep models``: the shipped models with their size, where each is read from, base encoder and measured
accuracy and speed."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import typer

from spandep.cli.common import handle_errors

if TYPE_CHECKING:
    from spandep.storage.catalogue import ShippedModel

NONE = "—"  # a figure not measured yet


def base_status(alias: str) -> str:
    """Whether a model's base encoder is usable here: ``installed``, ``builds on first use`` (its packages are there,
    its folder is not assembled yet), ``missing`` (``make models``), or ``local folder``."""
    from spandep.encoders.bases import BASES

    if not alias:
        return "none needed"
    if alias not in BASES:
        return "local folder"
    base = BASES[alias]
    if base.ready():
        return "installed"
    return "builds on first use" if base.problem() is None else "missing: make models"


def model_row(model: ShippedModel, default: str, shared: int = 1) -> dict[str, Any]:
    """One model's line of the listing (``--json``); figures are ``None`` where the card has none. ``shared``: how many
    names load the model's folder (a model of several treebanks), whose size is the folder's."""
    card = model.card()
    speed, calibration, end_to_end = card.get("speed", {}), card.get("calibration", {}), card.get("end_to_end", {})
    gold, raw = end_to_end.get("gold", {}), end_to_end.get("raw", {})
    test = card.get("test") or {"treebank": gold.get("treebank"), **gold.get("ours", {})}
    data = gold or raw
    base = model.base()
    return {
        "name": model.name, "default": model.name == default, "language": model.language, "treebank": model.treebank,
        "ud_release": data.get("ud_release"), "train_split": data.get("train_split"),
        "note": model.note, "folder": str(model.folder), "from": model.origin(), "package": model.package(),
        "size_mb": round(model.size() / 1e6, 1), "folder_shared_by": shared,
        "base": base, "base_status": base_status(base),
        "test_treebank": test.get("treebank"), "UAS": test.get("UAS_nopunct"), "LAS": test.get("LAS_nopunct"),
        "LAS_gold_official": gold.get("official_f1", {}).get("LAS"), "LAS_raw_official": raw.get("official_f1", {}).get("LAS"),
        "head_ECE": calibration.get("head_ece"), "confidence_values_per_1000": calibration.get("distinct_per_1000"),
        "words_per_s": speed.get("words_per_s"), "speed_threads": speed.get("threads"), "speed_cpu": speed.get("cpu"),
        "speed_treebank": speed.get("treebank", test.get("treebank")) if speed else None,
        "figures_from": card.get("source", {}).get("result"),
    }


def _cells(row: dict[str, Any]) -> list[str]:
    figure = lambda value: NONE if value is None else f"{value:.2f}"  # noqa: E731
    accuracy = f"{row['UAS']:.2f} / {row['LAS']:.2f}" if row["UAS"] is not None else NONE
    official = f"{figure(row['LAS_gold_official'])} / {figure(row['LAS_raw_official'])}"
    speed = f"{row['words_per_s']:,.0f} ({row['speed_threads']} thr)" if row["words_per_s"] is not None else NONE
    name = row["name"] + (" *" if row["default"] else "")
    ece = f"{row['head_ECE']:.2f} %" if row["head_ECE"] is not None else NONE
    size = f"{row['size_mb']:.1f} MB" + (f" (shared by {row['folder_shared_by']})" if row["folder_shared_by"] > 1 else "")
    data = f"{row['ud_release'] or 'pre'} / {row['train_split'].split()[0]}" if row["train_split"] else NONE
    return [name, row["language"], row["treebank"], data, size, row["from"], f"{row['base']} ({row['base_status']})", accuracy,
            official, ece, speed]


def render_table(rows: list[dict[str, Any]]) -> str:
    """The listing as aligned plain-text columns, with a line saying what the figures are."""
    header = ["name", "language", "treebank", "UD / trained on", "size", "from", "base encoder", "test UAS / LAS",
              "LAS gold / raw (CoNLL 18)", "head ECE", "words/s (CPU)"]
    lines = [header, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    text.append(f"* the default. UD / trained on: the treebank's UD release (pre: a prerelease) and the split trained on "
                "(dev: a language whose train split we lack, trained on its dev less a held-out part). UAS / LAS without "
                "punctuation on the test set, gold tokens; LAS gold / raw: the official CoNLL 2018 LAS on test from gold "
                "tokens and from raw text; head ECE: the expected calibration error of "
                f"head probabilities on the test set, calibrated on dev; {NONE}: not measured yet "
                "(figures and commands: each model's card.json); from: the distribution it is read from (`source "
                "checkout`: its folder in spandep's resources). `make models` installs every base encoder and language model.")
    return "\n".join(text)


def models(json_out: bool = typer.Option(False, "--json", help="Print the listing as JSON (one object per model).")) -> None:
    """List the shipped models: use one by name with `spandep parse --model NAME` or `spandep.load("NAME")`."""
    with handle_errors():
        from spandep.storage.catalogue import read_catalogue, shipped_models

        default = read_catalogue()[0]
        installed = shipped_models()
        names = Counter(m.folder for m in installed)
        rows = [model_row(m, default, names[m.folder]) for m in installed]
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False) if json_out else render_table(rows))
