"""``spandep models``: the shipped models with their size, where each is read from, base encoder and measured
accuracy and speed."""

from __future__ import annotations

import json
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


def model_row(model: ShippedModel, default: str) -> dict[str, Any]:
    """One model's line of the listing (``--json``); figures are ``None`` where the card has none."""
    card = model.card()
    test, speed, calibration = card.get("test", {}), card.get("speed", {}), card.get("calibration", {})
    base = model.base()
    return {
        "name": model.name, "default": model.name == default, "language": model.language, "treebank": model.treebank,
        "note": model.note, "folder": str(model.folder), "from": model.origin(), "package": model.package(),
        "size_mb": round(model.size() / 1e6, 1),
        "base": base, "base_status": base_status(base),
        "test_treebank": test.get("treebank"), "UAS": test.get("UAS_nopunct"), "LAS": test.get("LAS_nopunct"),
        "head_ECE": calibration.get("head_ece"), "confidence_values_per_1000": calibration.get("distinct_per_1000"),
        "words_per_s": speed.get("words_per_s"), "speed_threads": speed.get("threads"), "speed_cpu": speed.get("cpu"),
        "figures_from": card.get("source", {}).get("result"),
    }


def _cells(row: dict[str, Any]) -> list[str]:
    accuracy = f"{row['UAS']:.2f} / {row['LAS']:.2f}" if row["UAS"] is not None else NONE
    speed = f"{row['words_per_s']:,.0f} ({row['speed_threads']} thr)" if row["words_per_s"] is not None else NONE
    name = row["name"] + (" *" if row["default"] else "")
    ece = f"{row['head_ECE']:.2f} %" if row["head_ECE"] is not None else NONE
    size = f"{row['size_mb']:.1f} MB"
    return [name, row["language"], row["treebank"], size, row["from"], f"{row['base']} ({row['base_status']})", accuracy, ece, speed]


def render_table(rows: list[dict[str, Any]]) -> str:
    """The listing as aligned plain-text columns, with a line saying what the figures are."""
    header = ["name", "language", "treebank", "size", "from", "base encoder", "test UAS / LAS", "head ECE", "words/s (CPU)"]
    lines = [header, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    text.append(f"* the default. UAS / LAS without punctuation on the test set; head ECE: the expected calibration error of "
                f"head probabilities on the test set, calibrated on dev; {NONE}: not measured yet "
                "(figures and commands: each model's card.json); from: the distribution it is read from (`source "
                "checkout`: its folder in spandep's resources). `make models` installs every base encoder and language model.")
    return "\n".join(text)


def models(json_out: bool = typer.Option(False, "--json", help="Print the listing as JSON (one object per model).")) -> None:
    """List the shipped models: use one by name with `spandep parse --model NAME` or `spandep.load("NAME")`."""
    with handle_errors():
        from spandep.storage.catalogue import read_catalogue, shipped_models

        default = read_catalogue()[0]
        rows = [model_row(m, default) for m in shipped_models()]
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False) if json_out else render_table(rows))
