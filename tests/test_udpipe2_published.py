"""UDPipe 2's published figures (``benchmarks/results/peers/udpipe2_published.json``): each entry's schema, its
source pinned to a commit, one raw and one gold entry per treebank and release, and every treebank of the
multilingual pool either there or named under ``missing``; ``peers_table`` shows them for the treebanks it is given."""

import json
import re
from collections import Counter

import pytest

from benchmarks.scripts import peers_table
from benchmarks.suite.systems import REPO

PUBLISHED = json.loads((REPO / "benchmarks/results/peers/udpipe2_published.json").read_text(encoding="utf-8"))
POOL = json.loads((REPO / "benchmarks/results/multilingual_pool.json").read_text(encoding="utf-8"))["treebanks"]
FIGURES = PUBLISHED["figures"]
FIELDS = {"treebank", "our_release", "ud_version", "model", "mode", "source", "conll18", "note"}
METRICS = {"UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "MLAS", "BLEX"}
SOURCE = re.compile(r"https://github\.com/ufal/udpipe/blob/[0-9a-f]{40}/docs/models_ud(\d)(\d+)\.md")


@pytest.mark.parametrize("fig", FIGURES, ids=lambda f: f"{f['treebank']}-{f['ud_version']}-{f['mode']}")
def test_an_entry_has_the_schema_a_pinned_source_and_f1_in_range(fig):
    assert set(fig) == FIELDS and all(isinstance(fig[k], str) and fig[k] for k in FIELDS - {"conll18"})
    assert fig["mode"] in ("raw", "gold")
    source = SOURCE.fullmatch(fig["source"])
    assert source is not None and ".".join(source.groups()) == fig["ud_version"]
    assert f"-ud-{fig['ud_version']}-" in fig["model"]
    # words and sentences are scored only from raw text; the tags and the tree always (LAS, at least)
    tokens = {"Words", "Sentences"} if fig["mode"] == "raw" else set()
    assert tokens | {"LAS"} <= set(fig["conll18"]) <= tokens | METRICS
    assert all(set(score) == {"f1"} and 0 <= score["f1"] <= 100 for score in fig["conll18"].values())


def test_one_raw_and_one_gold_entry_per_treebank_and_release():
    counts = Counter((f["treebank"], f["ud_version"], f["mode"]) for f in FIGURES)
    releases = {(tb, version) for tb, version, _ in counts}
    assert {(tb, v, mode): counts[tb, v, mode] for tb, v in releases for mode in ("raw", "gold")} == {
        (tb, v, mode): 1 for tb, v in releases for mode in ("raw", "gold")
    }


def test_every_pool_treebank_is_there_or_missing_with_a_reason():
    present, missing = {f["treebank"] for f in FIGURES}, PUBLISHED["missing"]
    assert set(POOL) <= present | set(missing)
    assert not present & set(missing) and set(missing) <= set(POOL)
    assert all(isinstance(reason, str) and reason for reason in missing.values())


@pytest.mark.parametrize("treebank", sorted(POOL))
def test_a_note_says_when_we_train_on_dev_or_on_converted_v1_labels(treebank):
    notes = [f["note"] for f in FIGURES if f["treebank"] == treebank]
    if POOL[treebank]["train_split"] != "train":
        assert notes and all("dev split" in note for note in notes)
    if POOL[treebank]["ud_version"] == 1:
        assert all("v1" in note for note in notes)


def test_the_peers_tables_show_the_published_figures_of_the_treebanks_asked_for():
    rows = list(peers_table.published(REPO / "benchmarks/results/peers/udpipe2_published.json", {"en_ewt", "sq_staf"}))
    assert {r["treebank"] for r in rows} == {"en_ewt", "sq_staf"}
    assert len(rows) == sum(f["treebank"] in ("en_ewt", "sq_staf") for f in FIGURES)
