"""Every treebank of the multilingual pool: our test scores from raw text and from gold tokens beside UDPipe 2's.

    .venv/bin/python -m benchmarks.scripts.languages_table --doc BENCHMARKS.md           # the two full tables
    .venv/bin/python -m benchmarks.scripts.languages_table --doc README.md --short       # one row per language

One row per treebank of ``results/multilingual_pool.json`` (``scripts/multilingual_pool.py``: its UD release and
training split), grouped by language (languages by English name, each one's default treebank first:
:mod:`spandep.data.languages`), in two tables: from raw text (Words, Sentences, UPOS, UFeats, Lemmas, UAS, LAS, MLAS,
BLEX) and with gold tokens (UPOS to BLEX). Every score is an official CoNLL 2018 F1 on the treebank's test split (all
words, universal LAS) as written in the result files the row's last column names (under ``benchmarks/results/``):

- a treebank the catalogue ships a model of: its first such model's ``raw/`` files, found as ``shipped_table`` finds
  them (``result_system``; en_ewt: ``en``'s);
- else ``languages/<treebank>__raw.json`` and ``languages/<treebank>__gold.json`` (``benchmarks.suite.raw_text
  --out ...``, without and with ``--mode gold``);
- no raw-text parse but our trained tokenizer's scores (``tokenizer/<treebank>.json``): its Words and Sentences.

"–": not measured yet (Lemmas and BLEX also on a treebank without lemmas). UDPipe 2: its published LAS
(``results/peers/udpipe2_published.json``) from the UD release nearest ours (ties: the newer; our release unknown, a
prerelease: its newest), with the gap in UD releases; "–†" where it publishes no model of the treebank (the reason
below the table). ``--doc`` replaces the part of that file between ``<!-- languages:begin -->`` and
``<!-- languages:end -->``; with ``--short`` (one row per language: its default treebank's raw-text LAS beside
UDPipe 2's) between ``<!-- languages-short:begin -->`` and ``<!-- languages-short:end -->``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.scripts.peers_table import RESULTS, f1_cell, lemma_cell, measured, tokenizer_only
from benchmarks.scripts.shipped_table import newest_udpipe2, result_system
from benchmarks.suite.report import print_or_replace
from spandep.data.languages import Language, treebank_language
from spandep.storage.catalogue import read_catalogue

BEGIN, END = "<!-- languages:begin -->", "<!-- languages:end -->"
SHORT_BEGIN, SHORT_END = "<!-- languages-short:begin -->", "<!-- languages-short:end -->"
RAW = ("Words", "Sentences", "UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS", "BLEX")
GOLD = RAW[2:]
TOKENIZER = ("Words", "Sentences")  # what our tokenizer's own file gives a row without a raw-text parse
V1_RELEASES = 5  # UD 1.0 to 1.4 came before 2.0: where UD 2.x starts in the sequence of releases
MISSING = "–†"


@dataclass(frozen=True)
class Row:
    """One treebank: its ``language``, its pool entry (``pool``: release, training split), our result rows by mode
    (``ours``: ``raw``, ``gold``, as :func:`peers_table.measured` reads them), our tokenizer's (``tokenizer``) and
    UDPipe 2's figures by mode (``peer``)."""

    treebank: str
    language: Language
    pool: dict[str, Any]
    ours: dict[str, dict[str, Any]]
    tokenizer: dict[str, Any] | None
    peer: dict[str, dict[str, Any] | None]


def release_index(version: str) -> int:
    """A UD release's place in the sequence of releases (1.0 → 0, 1.4 → 4, 2.0 → 5, 2.17 → 22)."""
    major, minor = (int(x) for x in version.split("."))
    return {1: 0, 2: V1_RELEASES}[major] + minor


def nearest_udpipe2(figures: list[dict[str, Any]], treebank: str, mode: str, release: str | None) -> dict[str, Any] | None:
    """Of UDPipe 2's published ``figures``, those for ``treebank`` in ``mode`` from the UD release nearest ``release``
    (ties: the newer; ``release`` ``None``, a prerelease: the newest); ``None``: none."""
    if release is None:
        return newest_udpipe2(figures, treebank, mode)
    mine = [f for f in figures if f["treebank"] == treebank and f["mode"] == mode]
    ours = release_index(release)
    return min(mine, key=lambda f: (abs(release_index(f["ud_version"]) - ours), -release_index(f["ud_version"])), default=None)


def gap(figure: dict[str, Any], release: str | None) -> str:
    """How many UD releases UDPipe 2's ``figure`` is newer (``+1``) or older (``−4``) than ours: ``same``, or ``ours
    unreleased`` (a prerelease)."""
    if release is None:
        return "ours unreleased"
    n = release_index(figure["ud_version"]) - release_index(release)
    return "same" if n == 0 else f"+{n}" if n > 0 else f"−{-n}"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def our_results(results: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Per treebank, our test result rows by mode: the shipped model's (the catalogue's first of the treebank with
    results), else ``languages/<treebank>__<mode>.json``; two files of ``languages/`` for one treebank and mode are
    an error."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for r in measured([results / "languages"]):
        if r["mode"] in found.setdefault(r["treebank"], {}):
            raise SystemExit(f"two {r['mode']} results of {r['treebank']}: {found[r['treebank']][r['mode']]['source']}, {r['source']}")
        found[r["treebank"]][r["mode"]] = r
    shipped = {(r["treebank"], r["system"], r["mode"]): r for r in measured([results / "raw"])}
    taken: set[str] = set()
    for model in read_catalogue()[1].values():
        treebank, system = result_system(model)
        mine = {mode: r for mode in ("raw", "gold") if (r := shipped.get((treebank, system, mode))) is not None}
        if mine and treebank not in taken:
            taken.add(treebank)
            found[treebank] = mine
    return found


def collect(results: Path = RESULTS) -> tuple[list[Row], dict[str, str]]:
    """Every pool treebank's row (in the tables' order) and UDPipe 2's ``missing`` (treebank → why)."""
    pool = _load(results / "multilingual_pool.json")["treebanks"]
    path = results / "peers" / "udpipe2_published.json"
    published = _load(path) if path.is_file() else {}
    figures = published.get("figures", [])
    ours = our_results(results)
    tokenizers = {r["treebank"]: r for r in tokenizer_only(results / "tokenizer")}
    rows = [
        Row(treebank, lang, entry, ours.get(treebank, {}), tokenizers.get(treebank),
            {mode: nearest_udpipe2(figures, treebank, mode, entry["release"]) for mode in ("raw", "gold")})
        for treebank, entry in pool.items() if (lang := treebank_language(treebank)) is not None
    ]
    unknown = sorted(set(pool) - {r.treebank for r in rows})
    if unknown:
        raise SystemExit(f"pool treebanks of no language in spandep.data.languages: {', '.join(unknown)}")
    rows.sort(key=lambda r: (r.language.name, r.treebank != r.language.treebank, r.treebank))
    return rows, published.get("missing", {})


def _source(r: dict[str, Any] | None) -> list[str]:
    return [] if r is None else [f"`{r['source'].removeprefix('benchmarks/results/')}`"]


def _split(entry: dict[str, Any]) -> str:
    return "train" if entry["train_split"] == "train" else "dev (held-out part for model choice)"


def _peer(row: Row, mode: str, missing: dict[str, str]) -> list[str]:
    """UDPipe 2's LAS and UD release cells of ``row`` in ``mode``."""
    figure = row.peer[mode]
    if figure is None:
        return [MISSING if row.treebank in missing else "–", "–"]
    return [f1_cell(figure["conll18"], "LAS"), f"{figure['ud_version']} ({gap(figure, row.pool['release'])})"]


def raw_line(row: Row, missing: dict[str, str]) -> str:
    """The raw-text table's line of ``row``: our parse's F1, else our tokenizer's Words and Sentences, else "–"."""
    parse, tokenizer = row.ours.get("raw"), None if "raw" in row.ours else row.tokenizer
    if parse is not None:
        scores = [lemma_cell(parse["scores"], m, row.treebank, parse.get("lemmas")) for m in RAW]
    else:
        scores = [f1_cell(tokenizer["scores"], m) if tokenizer is not None and m in TOKENIZER else "–" for m in RAW]
    cells = [row.language.name, row.treebank, row.pool["release"] or "unreleased", _split(row.pool), *scores,
             *_peer(row, "raw", missing), ", ".join(_source(parse) + _source(tokenizer)) or "–"]
    return "| " + " | ".join(cells) + " |"


def gold_line(row: Row, missing: dict[str, str]) -> str:
    """The gold-token table's line of ``row``."""
    parse = row.ours.get("gold")
    scores = [lemma_cell(parse["scores"], m, row.treebank, parse.get("lemmas")) if parse else "–" for m in GOLD]
    cells = [row.language.name, row.treebank, *scores, *_peer(row, "gold", missing), ", ".join(_source(parse)) or "–"]
    return "| " + " | ".join(cells) + " |"


def _header(first: list[str], metrics: tuple[str, ...]) -> str:
    names = [*first, *("Sents" if m == "Sentences" else m for m in metrics), "UDPipe 2 LAS", "UDPipe 2 UD", "source"]
    return "| " + " | ".join(names) + " |\n|" + "---|" * len(names) + "\n"


def legend(rows: list[Row], missing: dict[str, str]) -> list[str]:
    """The notes under a table: the gap's notation, and why UDPipe 2 has no figure of those of ``rows`` it has none of."""
    shown = {r.treebank for r in rows}
    return [
        "UDPipe 2 UD: the UD release its figure is from, and how many releases newer (+) or older (−) than ours.",
        *(f"† {treebank}: {why}" for treebank, why in sorted(missing.items()) if treebank in shown),
    ]


def gold_gap(rows: list[Row]) -> str:
    """Issue 46's accuracy bar over the measured rows: our gold-token LAS against UDPipe 2's where its figure is of the
    same UD release as ours, the mean gap and the largest; then the same by training split (train, or dev for a
    language whose train split we lack) and the mean the gaps of the dev-trained ones alone would give."""
    gaps = sorted(
        (peer["conll18"]["LAS"]["f1"] - ours["scores"]["LAS"]["f1"], row.treebank, row.pool["train_split"] == "train")
        for row in rows
        if (ours := row.ours.get("gold")) is not None and (peer := row.peer["gold"]) is not None
        and gap(peer, row.pool["release"]) == "same"
    )
    if not gaps:
        return "Gold-token LAS against UDPipe 2 at our UD release: no treebank measured yet."

    def summary(part: list[tuple[float, str, bool]]) -> str:
        return f"mean gap {sum(g for g, *_ in part) / len(part):.2f}, {sum(g > 8.0 for g, *_ in part)} more than 8.0 below"

    line = (f"Gold-token LAS against UDPipe 2 at our UD release ({len(gaps)} treebanks; issue 46's bar: a mean gap of at most "
            f"3.0, none more than 8.0 below): mean gap {sum(g for g, *_ in gaps) / len(gaps):.2f}, largest {gaps[-1][0]:.2f} "
            f"({gaps[-1][1]}), {sum(g > 8.0 for g, *_ in gaps)} more than 8.0 below.")
    on_train, on_dev = [x for x in gaps if x[2]], [x for x in gaps if not x[2]]
    if not (on_train and on_dev):
        return line
    return (f"{line} Trained on their train split: {len(on_train)}, {summary(on_train)}; trained on dev (languages whose "
            f"train split ../shared/data lacks): {len(on_dev)}, {summary(on_dev)}. With every train-split treebank at "
            f"UDPipe 2's LAS and the others as they are, the mean gap would be {sum(g for g, *_ in on_dev) / len(gaps):.2f}.")


def render(results: Path = RESULTS) -> str:
    """The two full tables (raw text, gold tokens) and their notes."""
    rows, missing = collect(results)
    raw = _header(["language", "treebank", "UD", "trained on"], RAW) + "\n".join(raw_line(r, missing) for r in rows)
    gold = _header(["language", "treebank"], GOLD) + "\n".join(gold_line(r, missing) for r in rows)
    measured_so_far = (
        f"Measured so far, of {len(rows)} treebanks: {sum('raw' in r.ours for r in rows)} parsed from raw text, "
        f"{sum('raw' not in r.ours and r.tokenizer is not None for r in rows)} more with our tokenizer alone, "
        f"{sum('gold' in r.ours for r in rows)} parsed from gold tokens."
    )
    return f"#### From raw text\n\n{raw}\n\n#### From gold tokens\n\n{gold}\n\n" + "\n\n".join([measured_so_far, gold_gap(rows), *legend(rows, missing)]) + "\n"


def render_short(results: Path = RESULTS) -> str:
    """One row per language: its default treebank, our raw-text LAS and UDPipe 2's."""
    rows, missing = collect(results)
    defaults = [r for r in rows if r.treebank == r.language.treebank]
    lines = ["| language | treebank | raw-text LAS | UDPipe 2 raw-text LAS | UDPipe 2 UD |", "|---|---|---|---|---|"]
    for row in defaults:
        parse = row.ours.get("raw")
        cells = [f"{row.language.name} (`{row.language.code}`)", row.treebank,
                 "–" if parse is None else f1_cell(parse["scores"], "LAS"), *_peer(row, "raw", missing)]
        lines.append("| " + " | ".join(cells) + " |")
    measured_so_far = f"Parsed from raw text so far: {sum('raw' in r.ours for r in defaults)} of {len(defaults)} languages."
    return "\n".join(lines) + "\n\n" + "\n\n".join([measured_so_far, *legend(defaults, missing)]) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", type=Path, help=f"write the tables between {BEGIN} and {END} of this file")
    ap.add_argument("--short", action="store_true", help=f"one row per language, between {SHORT_BEGIN} and {SHORT_END}")
    args = ap.parse_args()
    if args.short:
        print_or_replace(render_short(), args.doc, SHORT_BEGIN, SHORT_END, "the languages table (short)")
    else:
        print_or_replace(render(), args.doc, BEGIN, END, "the languages tables")


if __name__ == "__main__":
    main()
