"""End-to-end scores side by side, per treebank: ours, UDPipe 1 (trained here) and UDPipe 2 (published).

    .venv/bin/python -m benchmarks.scripts.peers_table                  # print the tables
    .venv/bin/python -m benchmarks.scripts.peers_table --doc benchmarks/results/peers/README.md

``--doc`` replaces the part of that file between ``<!-- peers:begin -->`` and ``<!-- peers:end -->``: first one table
of UDPipe 1 over every treebank it was trained on (raw text and gold tokens side by side, its training minutes; a
treebank of UD v1 is marked, scored against its gold converted to v2), then a table per treebank. Rows come from (a
missing file or folder is skipped):

- ``results/raw/<treebank>__<system>.json`` (our parsers from raw text) and
  ``results/peers/udpipe1/<treebank>__<mode>.json`` (``benchmarks.scripts.udpipe1``): any JSON file with a
  ``conll18`` object of CoNLL 2018 metrics (``{"LAS": {"precision": .., "recall": .., "f1": ..}, ...}``), beside
  ``treebank``, ``system``, ``mode`` (``raw`` when absent) and ``words_per_s`` (optional);
- ``results/tokenizer/<treebank>.json`` (``benchmarks/tokenizer_scores.py``): our trained tokenizer alone, the
  Tokens, Sentences and Words of the test split;
- ``results/peers/udpipe2_published.json``: UDPipe 2's published F1 of its released models, with their UD release, for
  the suite's treebanks (``DATASETS``; the file also holds the multilingual pool's).

Every cell is an F1 (percent) as written in those files.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from benchmarks.suite.report import table_main
from benchmarks.suite.systems import DATASETS, REPO
from spandep.data.udv1 import named_v1

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
SUMMARY = ("Words", "Sentences", "UPOS", "UFeats", "Lemmas", "UAS", "LAS")  # UDPipe 1's summary, from raw text
SUMMARY_GOLD = ("UPOS", "UFeats", "Lemmas", "UAS", "LAS")  # and from gold tokens (Words and Sentences: 100)


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
                "train_minutes": result.get("train_minutes"), "gold_labels": result.get("gold_labels"),
                "lemmas": result.get("gold_lemmas"),
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


def published(path: Path, treebanks: Collection[str]) -> Iterator[dict[str, Any]]:
    """Rows of UDPipe 2's published figures for ``treebanks``."""
    for fig in _load(path)["figures"] if path.is_file() else []:
        if fig["treebank"] not in treebanks:
            continue
        yield {
            "treebank": fig["treebank"], "system": f"UDPipe 2 (UD {fig['ud_version']}, published)",
            "mode": fig["mode"], "scores": fig["conll18"], "words_per_s": None, "source": fig["source"],
        }


def f1_cell(scores: dict[str, Any], metric: str) -> str:
    f1 = scores.get(metric, {}).get("f1")
    return "–" if f1 is None else f"{f1:.2f}"


def lemma_cell(scores: dict[str, Any], metric: str, treebank: str, lemmas: bool | None = None) -> str:
    """:func:`f1_cell`, but "–" for Lemmas and BLEX on a treebank without lemmas (``Dataset.lemmas``, or ``lemmas``
    False: a result file's ``gold_lemmas``)."""
    dataset = DATASETS.get(treebank)
    lemmaless = lemmas is False or (dataset is not None and not dataset.lemmas)
    return "–" if metric in ("Lemmas", "BLEX") and lemmaless else f1_cell(scores, metric)


def _row(r: dict[str, Any]) -> str:
    speed = "–" if r["words_per_s"] is None else f"{r['words_per_s']:,.0f}"
    cells = [NAMES.get(r["system"], r["system"]), MODES.get(r["mode"], r["mode"]), *(lemma_cell(r["scores"], c, r["treebank"], r.get("lemmas")) for c in COLUMNS), speed]
    source = f"[{Path(r['source']).name}]({r['source']})" if r["source"].startswith("http") else f"`{r['source']}`"
    return "| " + " | ".join([*cells, source]) + " |"


def udpipe1_summary(rows: list[dict[str, Any]]) -> str:
    """One row per treebank of UDPipe 1 (alphabetical): its raw-text and gold-token F1 of :data:`SUMMARY` and
    :data:`SUMMARY_GOLD`, and its training minutes; ``""`` when it has none. A UD v1 treebank says whether it was
    trained and scored converted to v2 (``gold_labels``, :mod:`benchmarks.scripts.udpipe1`) or with v1 labels as
    released (results from before the conversion: zh_gsd_v1's)."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        if r["system"] == "udpipe1":
            found.setdefault(r["treebank"], {})[r["mode"]] = r
    lines = []
    for treebank in sorted(found):
        raw, gold = found[treebank].get("raw"), found[treebank].get("gold")
        converted = "converted" in str((raw or gold or {}).get("gold_labels"))
        v1 = (" (UD v1 → v2)" if converted else " (UD v1 as released)") if named_v1(treebank) else ""
        minutes = next((r["train_minutes"] for r in (raw, gold) if r and r.get("train_minutes") is not None), None)
        cells = [
            *(lemma_cell(raw["scores"], c, treebank, raw.get("lemmas")) if raw else "–" for c in SUMMARY),
            *(lemma_cell(gold["scores"], c, treebank, gold.get("lemmas")) if gold else "–" for c in SUMMARY_GOLD),
            "–" if minutes is None else f"{minutes:.1f}",
        ]
        lines.append(f"| {treebank}{v1} | " + " | ".join(cells) + " |")
    if not lines:
        return ""
    header = (
        "#### UDPipe 1 (trained here), every treebank\n\n| treebank | " + " | ".join(f"{c} raw" for c in SUMMARY) + " | "
        + " | ".join(f"{c} gold tok." for c in SUMMARY_GOLD) + " | train min |\n|---|" + "---|" * (len(SUMMARY) + len(SUMMARY_GOLD) + 1) + "\n"
    )
    return header + "\n".join(lines) + "\n"


def render(rows: list[dict[str, Any]]) -> str:
    """The UDPipe 1 summary (:func:`udpipe1_summary`), then one table per treebank (in the suite's order), raw-text
    rows first."""
    order = {tb: i for i, tb in enumerate(DATASETS)}
    parts = [summary] if (summary := udpipe1_summary(rows)) else []
    for treebank in sorted({r["treebank"] for r in rows}, key=lambda tb: (order.get(tb, len(order)), tb)):
        mine = sorted((r for r in rows if r["treebank"] == treebank), key=lambda r: r["mode"] != "raw")
        parts.append(f"#### {treebank}\n\n{HEADER}" + "\n".join(map(_row, mine)) + "\n")
    return "\n".join(parts)


def main() -> None:
    def rows() -> list[dict[str, Any]]:
        return [
            *tokenizer_only(RESULTS / "tokenizer"), *measured([RESULTS / "raw", PEERS / "udpipe1"]),
            *published(PEERS / "udpipe2_published.json", DATASETS),
        ]

    table_main(__doc__, lambda: render(rows()), BEGIN, END, "the peers tables")


if __name__ == "__main__":
    main()
