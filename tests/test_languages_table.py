"""The table of every treebank (``benchmarks/scripts/languages_table.py``): rows from the result files that exist and
"–" for the others, UDPipe 2's figure from the UD release nearest ours, one short row per language, and BENCHMARKS.md
and README.md holding what the script writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.scripts import languages_table, peers_table
from benchmarks.suite.systems import REPO

POOL = {  # treebank -> (release, training split)
    "fr_sequoia": ("2.16", "train"),  # a shipped model's raw/ files
    "de_gsd": ("2.16", "dev (less the held-out part)"),  # languages/ files; UDPipe 2 at 2.15 and 2.17: a tie
    "es_ancora": ("2.8", "dev (less the held-out part)"),  # UDPipe 2 at 2.6, 2.12, 2.17: the nearest, not the newest
    "es_gsd": ("2.16", "dev (less the held-out part)"),  # gold tokens only
    "hy_armtdp": ("2.4", "train"),  # Armenian's other treebank, before its default by name
    "hy_bsut": ("2.16", "train"),  # Armenian's default: nothing measured
    "ar_padt_v1": ("1.2", "dev (less the held-out part)"),  # UD v1 against UDPipe 2's 2.6 and 2.15
    "hi_hdtb_v1_prerelease": (None, "dev (less the held-out part)"),  # a prerelease: UDPipe 2's newest
    "th_tud": ("2.17", "train"),  # our tokenizer alone
    "kk_ktb_v1": ("1.4", "train"),  # UDPipe 2's missing
}
PUBLISHED = {"de_gsd": ("2.15", "2.17"), "es_ancora": ("2.6", "2.12", "2.17"), "ar_padt_v1": ("2.6", "2.15"),
             "hi_hdtb_v1_prerelease": ("2.6", "2.10"), "hy_bsut": ("2.17",)}
WHY = "no Kazakh model at any version"


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _scores(base: float, metrics=languages_table.RAW) -> dict:
    return {m: {"f1": base + i} for i, m in enumerate(metrics)}


def _result(path: Path, treebank: str, mode: str, base: float) -> None:
    """A result file of ``benchmarks.suite.raw_text``'s schema (its system: the name's part after the treebank)."""
    system = path.stem.split("__")[1]
    _write(path, {"treebank": treebank, "system": system, "split": "test", "mode": mode, "conll18": _scores(base)})


@pytest.fixture
def results(tmp_path, monkeypatch) -> Path:
    """A results folder of synthetic files (the pool, UDPipe 2's figures, ours), sources named relative to it."""
    monkeypatch.setattr(peers_table, "REPO", tmp_path)
    pool = {tb: {"release": release, "train_split": split} for tb, (release, split) in POOL.items()}
    _write(tmp_path / "multilingual_pool.json", {"treebanks": pool})
    figures = [  # LAS: 10 × the version's minor number (+ 1 for gold), to tell which version was taken
        {"treebank": tb, "ud_version": v, "mode": mode, "conll18": {"LAS": {"f1": 10.0 * int(v.split(".")[1]) + (mode == "gold")}}}
        for tb, versions in PUBLISHED.items() for v in versions for mode in ("raw", "gold")
    ]
    _write(tmp_path / "peers" / "udpipe2_published.json", {"figures": figures, "missing": {"kk_ktb_v1": WHY}})
    _result(tmp_path / "raw" / "fr_sequoia__fr_sequoia-span.json", "fr_sequoia", "raw", 80.0)
    _result(tmp_path / "raw" / "fr_sequoia__fr_sequoia-span__gold.json", "fr_sequoia", "gold", 90.0)
    _result(tmp_path / "languages" / "fr_sequoia__raw.json", "fr_sequoia", "raw", 10.0)  # the shipped model's come first
    _result(tmp_path / "languages" / "de_gsd__raw.json", "de_gsd", "raw", 70.0)
    _result(tmp_path / "languages" / "de_gsd__gold.json", "de_gsd", "gold", 75.0)
    _write(tmp_path / "languages" / "de_gsd_dev__raw.json", {"treebank": "de_gsd", "split": "dev", "mode": "raw", "conll18": _scores(1.0)})
    _result(tmp_path / "languages" / "es_gsd__gold.json", "es_gsd", "gold", 60.0)
    for tb, base in (("th_tud", 50.0), ("fr_sequoia", 20.0)):  # fr_sequoia's: not used, its raw-text parse is there
        _write(tmp_path / "tokenizer" / f"{tb}.json", {"treebank": tb, "test": _scores(base, ("Tokens", "Sentences", "Words"))})
    return tmp_path


def _rows(table: str) -> dict[str, list[str]]:
    """A markdown table's rows by their second cell (the treebank), each as its cells."""
    lines = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| language")]
    return {cells[1]: cells for cells in (line.strip("| ").split(" | ") for line in lines)}


def test_rows_come_from_the_files_that_exist_and_the_others_are_dashes(results):
    text = languages_table.render(results)
    raw_part, gold_part = text.split("#### From gold tokens")
    raw, gold = _rows(raw_part), _rows(gold_part)
    assert list(raw) == list(gold) == [
        "ar_padt_v1", "hy_bsut", "hy_armtdp", "fr_sequoia", "de_gsd", "hi_hdtb_v1_prerelease", "kk_ktb_v1",
        "es_ancora", "es_gsd", "th_tud",
    ]  # by language (Arabic, Armenian, French, German, Hindi, Kazakh, Spanish, Thai), the default treebank first
    assert raw["fr_sequoia"][2:13] == ["2.16", "train", *(f"{80.0 + i:.2f}" for i in range(9))]
    assert raw["fr_sequoia"][-1] == "`raw/fr_sequoia__fr_sequoia-span.json`"
    assert gold["fr_sequoia"][2:9] == [f"{90.0 + i:.2f}" for i in range(2, 9)]  # UPOS to BLEX: the 3rd metric on
    assert raw["de_gsd"][3] == "dev (held-out part for model choice)" and raw["de_gsd"][4] == "70.00"
    assert raw["de_gsd"][-1] == "`languages/de_gsd__raw.json`" and gold["de_gsd"][-1] == "`languages/de_gsd__gold.json`"
    assert raw["es_gsd"][4:13] == ["–"] * 9 and raw["es_gsd"][-1] == "–" and gold["es_gsd"][2] == "62.00"
    assert raw["th_tud"][4:13] == ["52.00", "51.00", *["–"] * 7] and raw["th_tud"][-1] == "`tokenizer/th_tud.json`"
    assert gold["th_tud"][2:] == ["–"] * 10
    assert raw["hi_hdtb_v1_prerelease"][2] == "unreleased"
    assert "Measured so far, of 10 treebanks: 2 parsed from raw text, 1 more with our tokenizer alone, 3 parsed from gold tokens." in text


def test_udpipe2_is_taken_from_the_release_nearest_ours_with_the_gap(results):
    raw_part, gold_part = languages_table.render(results).split("#### From gold tokens")
    raw, gold = _rows(raw_part), _rows(gold_part)
    assert raw["de_gsd"][13:15] == ["170.00", "2.17 (+1)"] and gold["de_gsd"][9:11] == ["171.00", "2.17 (+1)"]  # a tie: the newer
    assert raw["es_ancora"][13:15] == ["60.00", "2.6 (−2)"]  # nearer than 2.12 and 2.17
    assert raw["ar_padt_v1"][13:15] == ["60.00", "2.6 (+9)"]  # 1.2, 1.3, 1.4, 2.0, ..., 2.6
    assert raw["hi_hdtb_v1_prerelease"][13:15] == ["100.00", "2.10 (ours unreleased)"]
    assert raw["kk_ktb_v1"][13:15] == ["–†", "–"] and raw["fr_sequoia"][13:15] == ["–", "–"]
    assert f"† kk_ktb_v1: {WHY}" in raw_part + gold_part


def test_the_release_sequence_runs_from_ud_1_to_ud_2():
    versions = ["1.0", "1.4", "2.0", "2.1", "2.10", "2.17"]
    assert [languages_table.release_index(v) for v in versions] == [0, 4, 5, 6, 15, 22]


def test_the_short_form_has_one_row_per_language_its_default_treebank(results):
    short = languages_table.render_short(results)
    rows = _rows(short)
    assert list(rows) == ["ar_padt_v1", "hy_bsut", "fr_sequoia", "de_gsd", "hi_hdtb_v1_prerelease", "kk_ktb_v1", "es_ancora", "th_tud"]
    assert rows["fr_sequoia"] == ["French (`fr`)", "fr_sequoia", f"{80.0 + 6:.2f}", "–", "–"]  # LAS: the 7th metric
    assert rows["hy_bsut"] == ["Armenian (`hy`)", "hy_bsut", "–", "170.00", "2.17 (+1)"]
    assert rows["kk_ktb_v1"][2:] == ["–", "–†", "–"] and f"† kk_ktb_v1: {WHY}" in short
    assert "Parsed from raw text so far: 2 of 8 languages." in short


def test_two_results_of_one_treebank_and_mode_in_languages_are_an_error(results):
    _result(results / "languages" / "de_gsd__raw_again.json", "de_gsd", "raw", 1.0)
    with pytest.raises(SystemExit, match="two raw results of de_gsd"):
        languages_table.render(results)


@pytest.mark.parametrize(("doc", "begin", "end", "render"), [
    ("BENCHMARKS.md", languages_table.BEGIN, languages_table.END, languages_table.render),
    ("README.md", languages_table.SHORT_BEGIN, languages_table.SHORT_END, languages_table.render_short),
], ids=["BENCHMARKS.md", "README.md"])
def test_the_documents_hold_what_the_script_writes(doc, begin, end, render):
    text = (REPO / doc).read_text(encoding="utf-8")
    written = text[text.index(begin) + len(begin) + 1: text.index(end)]
    command = f"python -m benchmarks.scripts.languages_table --doc {doc}" + (" --short" if "short" in begin else "")
    assert written == render(), f"{doc} is out of date with the result files: run {command}"


def test_the_gold_gap_line_counts_treebanks_at_our_ud_release_only(results):
    assert "Gold-token LAS against UDPipe 2 at our UD release: no treebank measured yet." in languages_table.render(results)
    published = json.loads((results / "peers" / "udpipe2_published.json").read_text(encoding="utf-8"))
    las = {"de_gsd": 90.0, "es_gsd": 70.0}  # ours (gold, LAS): de_gsd 75 + 6, es_gsd 60 + 6
    published["figures"] += [{"treebank": tb, "ud_version": "2.16", "mode": "gold", "conll18": {"LAS": {"f1": f}}} for tb, f in las.items()]
    _write(results / "peers" / "udpipe2_published.json", published)
    line = next(x for x in languages_table.render(results).splitlines() if x.startswith("Gold-token LAS"))
    assert "(2 treebanks;" in line and "mean gap 6.50, largest 9.00 (de_gsd), 1 more than 8.0 below." in line


def test_the_gold_gap_line_splits_treebanks_by_training_split(results):
    published = json.loads((results / "peers" / "udpipe2_published.json").read_text(encoding="utf-8"))
    # ours (gold, LAS): fr_sequoia (train) 90 + 6, de_gsd and es_gsd (dev) 75 + 6 and 60 + 6
    las = {"fr_sequoia": 100.0, "de_gsd": 90.0, "es_gsd": 70.0}
    published["figures"] += [{"treebank": tb, "ud_version": "2.16", "mode": "gold", "conll18": {"LAS": {"f1": f}}} for tb, f in las.items()]
    _write(results / "peers" / "udpipe2_published.json", published)
    line = next(x for x in languages_table.render(results).splitlines() if x.startswith("Gold-token LAS"))
    assert "(3 treebanks;" in line and "mean gap 5.67, largest 9.00 (de_gsd), 1 more than 8.0 below." in line
    assert "Trained on their train split: 1, mean gap 4.00, 0 more than 8.0 below;" in line
    assert "trained on dev (languages whose train split ../shared/data lacks): 2, mean gap 6.50, 1 more than 8.0 below." in line
    assert line.endswith("the mean gap would be 4.33.")  # (9 + 4) / 3: fr_sequoia's gap counted as 0
