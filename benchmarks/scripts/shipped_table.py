"""The shipped models side by side: test scores with gold tokens and from raw text, size, and UDPipe 2's published figures.

    .venv/bin/python -m benchmarks.scripts.shipped_table                 # print the table
    .venv/bin/python -m benchmarks.scripts.shipped_table --doc README.md

One row per installed name of the catalogue (``spandep models``) whose test results exist:
``results/raw/<treebank>__<system>__gold.json`` and ``results/raw/<treebank>__<system>.json``
(``benchmarks.suite.raw_text``, with and without ``--mode gold``), the system being :data:`SYSTEMS`' for the English
models, ``<treebank>-pool-finetune`` for a treebank of the multilingual pool shipped in a folder of its own
(``scripts/ship_treebank.sh``: its folder is named by its ``model_treebank``), ``<treebank>-<parser>`` for the other
treebank models, the parser being :data:`SHIPPED_PARSERS`' (span or
biaffine; ``benchmarks/scripts/recipe_step.sh`` trains them). Every score is an official CoNLL 2018 F1 (all words,
universal LAS), but "–" for Lemmas and BLEX on a treebank without lemmas (``Dataset.lemmas``: zh_gsd_v1); UDPipe 2's
are the newest release in
``results/peers/udpipe2_published.json``. ``--doc`` replaces the part of that file between ``<!-- shipped:begin -->``
and ``<!-- shipped:end -->``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.scripts.peers_table import PEERS, RESULTS, f1_cell, lemma_cell, measured
from benchmarks.suite.report import table_main
from benchmarks.suite.systems import SHIPPED_PARSERS
from spandep.storage.catalogue import ShippedModel, shipped_models

BEGIN, END = "<!-- shipped:begin -->", "<!-- shipped:end -->"
SYSTEMS = {"default_model": ("en_ewt", "default"), "en_accurate": ("en_ewt", "accurate")}  # folder -> (treebank, system)
GOLD = ("UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS", "BLEX")
HEADER = (
    "| name | treebank | size | " + " | ".join(GOLD) + " | raw-text LAS | UDPipe 2 LAS (gold tok. / raw) | sources |\n"
    "|---|---|---|" + "---|" * len(GOLD) + "---|---|---|\n"
)


def newest_udpipe2(figures: list[dict[str, Any]], treebank: str, mode: str) -> dict[str, Any] | None:
    """Of UDPipe 2's published ``figures``, those for ``treebank`` in ``mode`` from its newest UD release (``None``: none)."""
    mine = [f for f in figures if f["treebank"] == treebank and f["mode"] == mode]
    return max(mine, key=lambda f: [int(x) for x in f["ud_version"].split(".")], default=None)


def result_system(model: ShippedModel) -> tuple[str, str]:
    """The treebank and system under which a shipped model's test results are in ``results/raw/`` (the module's
    docstring)."""
    folder = model.folder.name
    if model.model_treebank == folder:  # the pool fine-tuned for one treebank and cut to it (scripts/ship_treebank.sh)
        return folder, f"{folder}-pool-finetune"
    return SYSTEMS.get(folder, (folder, f"{folder}-{SHIPPED_PARSERS.get(folder, 'span')}"))


def render(results: Path = RESULTS) -> str:
    """The table, in the catalogue's order."""
    ours = {(r["treebank"], r["system"], r["mode"]): r for r in measured([results / "raw"])}
    published = PEERS / "udpipe2_published.json"
    figures = json.loads(published.read_text(encoding="utf-8"))["figures"] if published.is_file() else []
    lines = []
    for model in shipped_models():
        treebank, system = result_system(model)
        gold, raw = ours.get((treebank, system, "gold")), ours.get((treebank, system, "raw"))
        if gold is None or not model.installed():
            continue
        peer = [newest_udpipe2(figures, treebank, mode) for mode in ("gold", "raw")]
        release = next((f" (UD {p['ud_version']})" for p in peer if p is not None), "")
        cells = [
            f"`{model.name}`", model.treebank, f"{model.size() / 1e6:.1f} MB", *(lemma_cell(gold["scores"], m, treebank) for m in GOLD),
            "–" if raw is None else f1_cell(raw["scores"], "LAS"),
            " / ".join("–" if p is None else f1_cell(p["conll18"], "LAS") for p in peer) + release,
            ", ".join(f"`{r['source']}`" for r in (gold, raw) if r is not None),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return HEADER + "\n".join(lines) + "\n"


def main() -> None:
    table_main(__doc__, render, BEGIN, END, "the shipped-models table")


if __name__ == "__main__":
    main()
