"""End-to-end scores side by side, per treebank: ours, UDPipe 1 (trained here) and UDPipe 2 (published).

    .venv/bin/python -m benchmarks.scripts.peers_table                  # print the tables
    .venv/bin/python -m benchmarks.scripts.peers_table --doc benchmarks/results/peers/README.md

``--doc`` replaces the part of that file between ``<!-- peers:begin -->`` and ``<!-- peers:end -->``. Rows come
from (a missing file or folder is skipped):

- ``results/raw/<treebank>__<system>.json`` (our parsers from raw text) and
  ``results/peers/udpipe1/<treebank>__<mode>.json`` (``benchmarks.scripts.udpipe1``): any JSON file with a
  ``conll18`` object of CoNLL 2018 metrics (``{"LAS": {"precision": .., "recall": .., "f1": ..}, ...}``), beside
  ``treebank``, ``system``, ``mode`` (``raw`` when absent) and ``words_per_s`` (optional);
- ``results/tokenizer/<treebank>.json`` (``benchmarks/tokenizer_scores.py``): our trained tokenizer alone, the
  Tokens, Sentences and Words of the test split;
- ``results/peers/udpipe2_published.json``: UDPipe 2's published F1 of its released models, with their UD release.

Every cell is an F1 (percent) as written in those files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import DATASETS, REPO

RESULTS = REPO / "benchmarks" / "results"
PEERS = RESULTS / "peers"
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"
COLUMNS = ("Tokens", "Sentences", "Words", "UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS", "BLEX")
HEADER = (
    "| system | mode | " + " | ".join("Sents" if c == "Sentences" else c for c in COLUMNS) + " | words/s | source |\n"
    "|---|---|" + "---|" * len(COLUMNS) + "---|---|\n"
)
MODES = {"raw": "raw text", "gold": "gold tok."}
NAMES = {"udpipe1": "UDPipe 1 (trained here)"}  # display names of systems, by the name in their files


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def measured(folders: list[Path]) -> Iterator[dict[str, Any]]:
    """Rows of the files with a ``conll18`` object in ``folders``, test split only (a file without ``split`` is one)."""
    for folder in folders:
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            result = _load(path)
            if "conll18" not in result or result.get("split", "test") != "test":
                continue
            treebank, _, system = path.stem.partition("__")
            yield {
                "treebank": result.get("treebank", treebank), "system": result.get("system", system),
                "mode": result.get("mode", "raw"), "scores": result["conll18"],
                "words_per_s": result.get("words_per_s"), "source": _rel(path),
            }


def tokenizer_only(folder: Path) -> Iterator[dict[str, Any]]:
    """Rows of our trained tokenizers' test scores (``<treebank>.json``; the rule fallback's files are left out)."""
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if "__" not in path.stem:
            result = _load(path)
            yield {
                "treebank": result["treebank"], "system": "spandep tokenizer alone", "mode": "raw",
                "scores": result["test"], "words_per_s": None, "source": _rel(path),
            }


def published(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of UDPipe 2's published figures."""
    for fig in _load(path)["figures"] if path.is_file() else []:
        yield {
            "treebank": fig["treebank"], "system": f"UDPipe 2 (UD {fig['ud_version']}, published)",
            "mode": fig["mode"], "scores": fig["conll18"], "words_per_s": None, "source": fig["source"],
        }


def f1_cell(scores: dict[str, Any], metric: str) -> str:
    f1 = scores.get(metric, {}).get("f1")
    return "–" if f1 is None else f"{f1:.2f}"


def lemma_cell(scores: dict[str, Any], metric: str, treebank: str) -> str:
    """:func:`f1_cell`, but "–" for Lemmas and BLEX on a treebank without lemmas (``Dataset.lemmas``)."""
    dataset = DATASETS.get(treebank)
    return "–" if metric in ("Lemmas", "BLEX") and dataset is not None and not dataset.lemmas else f1_cell(scores, metric)


def _row(r: dict[str, Any]) -> str:
    speed = "–" if r["words_per_s"] is None else f"{r['words_per_s']:,.0f}"
    cells = [NAMES.get(r["system"], r["system"]), MODES.get(r["mode"], r["mode"]), *(lemma_cell(r["scores"], c, r["treebank"]) for c in COLUMNS), speed]
    source = f"[{Path(r['source']).name}]({r['source']})" if r["source"].startswith("http") else f"`{r['source']}`"
    return "| " + " | ".join([*cells, source]) + " |"


def render(rows: list[dict[str, Any]]) -> str:
    """One table per treebank (in the suite's order), raw-text rows first."""
    order = {tb: i for i, tb in enumerate(DATASETS)}
    parts = []
    for treebank in sorted({r["treebank"] for r in rows}, key=lambda tb: order.get(tb, len(order))):
        mine = sorted((r for r in rows if r["treebank"] == treebank), key=lambda r: r["mode"] != "raw")
        parts.append(f"#### {treebank}\n\n{HEADER}" + "\n".join(map(_row, mine)) + "\n")
    return "\n".join(parts)


def main() -> None:
    def rows() -> list[dict[str, Any]]:
        return [
            *tokenizer_only(RESULTS / "tokenizer"), *measured([RESULTS / "raw", PEERS / "udpipe1"]),
            *published(PEERS / "udpipe2_published.json"),
        ]

    table_main(__doc__, lambda: render(rows()), BEGIN, END, "the peers tables")


if __name__ == "__main__":
    main()
