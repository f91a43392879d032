"""UDPipe 1 as a peer on the new treebanks: its input files (``benchmarks.scripts.udpipe1.split_files``: compressed
splits decompressed, UD v1 ones converted to v2 as the pool is) and its summary table (``peers_table``)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from benchmarks.scripts import peers_table
from spandep.data.conllu import read_conllu
from spandep.data.reading import InputBytes
from spandep.data.udv1 import to_v2
from spandep.tokenization.corpus import gold_tokens

FIXTURES = Path(__file__).parent / "fixtures"
SPLITS = ("train", "dev", "test")


def treebank(data: Path, name: str, source: Path, compress: bool) -> None:
    """A treebank folder ``data/name`` whose three splits are ``source`` (``.conllu.xz`` when ``compress``)."""
    (data / name).mkdir(parents=True)
    for split in SPLITS:
        target = data / name / f"{name}-ud-{split}.conllu{'.xz' if compress else ''}"
        target.write_bytes(lzma.compress(source.read_bytes()) if compress else source.read_bytes())


def test_udpipe_reads_plain_v2_files_compressed_ones_decompressed_and_v1_ones_converted(tmp_path) -> None:
    pytest.importorskip("ufal.udpipe")  # a bench dependency (pip install 'spandep[bench]')
    from benchmarks.scripts.udpipe1 import split_files

    data, runs = tmp_path / "data", tmp_path / "runs"
    excerpt, v1 = FIXTURES / "en_ewt_excerpt.conllu", FIXTURES / "udv1" / "eu_bdt_v1.conllu"
    treebank(data, "en_plain", excerpt, compress=False)
    treebank(data, "en_xz", excerpt, compress=True)
    treebank(data, "eu_bdt_v1", v1, compress=True)
    plain = split_files("en_plain", runs, data)
    assert plain["test"] == data / "en_plain" / "en_plain-ud-test.conllu" and not (runs / "en_plain").exists()  # read as released
    decompressed = split_files("en_xz", runs, data)
    assert all(decompressed[s] == runs / "en_xz" / f"{s}.conllu" and decompressed[s].read_bytes() == excerpt.read_bytes() for s in SPLITS)
    converted = split_files("eu_bdt_v1", runs, data)
    expected = [to_v2(s) for s in read_conllu(v1)]
    got = list(read_conllu(converted["test"]))
    assert [[(w.upos, w.deprel, w.feats) for w in s.words] for s in got] == [[(w.upos, w.deprel, w.feats) for w in s.words] for s in expected]
    assert "neg" in {w.deprel for s in read_conllu(v1) for w in s.words} and "neg" not in {w.deprel for s in got for w in s.words}
    decompressed["dev"].write_text("kept", encoding="utf-8")
    assert split_files("en_xz", runs, data)["dev"].read_text(encoding="utf-8") == "kept"  # written once, not again
    (data / "broken").mkdir()
    with pytest.raises(SystemExit, match="has no train/dev/test split"):
        split_files("broken", runs, data)


def test_the_udpipe1_summary_has_a_row_per_treebank_with_raw_and_gold_scores_and_train_minutes(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(peers_table, "REPO", tmp_path)  # sources are named relative to it
    folder = tmp_path / "udpipe1"
    folder.mkdir()

    def write(tb: str, mode: str, base: float, labels: str | None) -> None:
        scores = {m: {"f1": base + i} for i, m in enumerate(peers_table.SUMMARY)}
        result = {"system": "udpipe1", "treebank": tb, "split": "test", "mode": mode, "conll18": scores, "train_minutes": 12.34}
        (folder / f"{tb}__{mode}.json").write_text(json.dumps({**result, **({"gold_labels": labels} if labels else {})}))

    write("ta_ttb", "raw", 50.0, "UD v2 as released")
    write("ta_ttb", "gold", 70.0, "UD v2 as released")
    write("kk_ktb_v1", "raw", 40.0, "UD v2, converted from the released UD v1 (spandep.data.udv1)")
    write("zh_gsd_v1", "gold", 60.0, None)  # a result from before the conversion, gold tokens only
    write("te_mtg", "raw", 80.0, "UD v2 as released")
    te_file = folder / "te_mtg__raw.json"
    te_file.write_text(json.dumps({**json.loads(te_file.read_text()), "gold_lemmas": False}))  # LEMMA all "_"
    rows = [line.split(" | ") for line in peers_table.udpipe1_summary(list(peers_table.measured([folder]))).splitlines()[4:]]
    assert [r[0] for r in rows] == ["| kk_ktb_v1 (UD v1 → v2)", "| ta_ttb", "| te_mtg", "| zh_gsd_v1 (UD v1 as released)"]
    kk, ta, te, zh = rows
    assert te[5] == "–" and te[4] == f"{80.0 + 3:.2f}"  # no lemmas in its gold file: Lemmas "–", UFeats kept
    assert ta[1:8] == [f"{50.0 + i:.2f}" for i in range(7)] and ta[13] == "12.3 |"
    gold_columns = [peers_table.SUMMARY.index(m) for m in peers_table.SUMMARY_GOLD]
    assert ta[8:13] == [f"{70.0 + i:.2f}" for i in gold_columns]
    assert kk[8:13] == ["–"] * 5 and zh[1:8] == ["–"] * 7 and zh[5] == "–"  # no raw file; zh_gsd_v1 has no lemmas
    assert peers_table.udpipe1_summary([]) == ""


def test_a_training_sentence_without_text_gets_it_multiword_tokens_included() -> None:
    """kk_ktb_v1 has no ``# text`` and has multiword tokens: each sentence gets the text our raw text has for it, a
    multiword token's range line stays as read, and UDPipe reads the result as the same words."""
    pytest.importorskip("ufal.udpipe")
    from benchmarks.scripts.udpipe1 import read_sentences, training_text

    source = FIXTURES / "udv1" / "kk_ktb_v1.conllu"
    original = list(read_conllu(source))
    assert any(s.extra_lines for s in original) and all(s.comment("text") is None for s in original)
    rebuilt = list(read_conllu(InputBytes("rebuilt", training_text(source).encode())))
    assert [s.comment("text") for s in rebuilt] == [" ".join(gold.form for gold in gold_tokens(s)) for s in original]
    assert [s.extra_lines for s in rebuilt] == [s.extra_lines for s in original]
    assert [[w.form for w in s.words] for s in rebuilt] == [[w.form for w in s.words] for s in original]
    assert [len(s.words) for s in read_sentences(source)] == [len(s.words) + 1 for s in original]  # with UDPipe's root
