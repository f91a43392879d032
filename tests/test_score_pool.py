"""Scoring a model of the multilingual pool (``benchmarks/scripts/score_pool.py`` over ``benchmarks.suite.raw_text``):
a tiny model of two treebanks scored on a fake pool (a manifest and its files in a temporary folder), into the
result files the languages table reads; a resumed run skips what is done; trained tokenizers copied in; a UD v1
test split scored with v2 relations; one-line errors."""

from __future__ import annotations

import json
import lzma
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from conftest import DEV, TINY_BIAFFINE, TRAIN, write_config

from benchmarks.scripts import languages_table, peers_table, score_pool
from benchmarks.suite import raw_text
from benchmarks.suite.record import TOKENIZER_FILES, weights_digest
from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.sentence import Sentence
from spandep.training.config import load_config
from spandep.training.trainer import Trainer
from test_tokenization import tiny_tokenizer

V1 = {"obj": "dobj", "nsubj:pass": "nsubjpass", "aux:pass": "auxpass", "CCONJ": "CONJ"}  # v2 → v1, what udv1 undoes


def as_v1(sentence: Sentence) -> Sentence:
    """``sentence`` as a UD v1 treebank would have it: v1 relation and UPOS names."""
    words = [replace(w, deprel=V1.get(w.deprel, w.deprel), upos=V1.get(w.upos, w.upos)) for w in sentence.words]
    return replace(sentence, words=words)


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny model of sq_staf and ar_padt_v1 (both EWT excerpts) and a fake pool of them: ar_padt_v1 UD v1 and
    dev-only, its released test (the training excerpt, in v1 names) xz-compressed; sq_staf's test as is."""
    root = tmp_path_factory.mktemp("pool")
    table = "".join(f'  {{ name = "{name}", train = "{TRAIN}", dev = "{DEV}" }},\n' for name in ("sq_staf", "ar_padt_v1"))
    config = write_config(root / "c.toml", root / "run", "bilstm", model=TINY_BIAFFINE + "treebank_dim = 4\n", epochs=2)
    config.write_text(re.sub(r"\[data\]\n[^\[]*", lambda _: f"[data]\ntreebanks = [\n{table}]\n\n", config.read_text())
                      + "\n[heads.upos]\ncasing = 4\n\n[heads.lemma]\nhidden = 8\n")
    Trainer(load_config(config)).run()
    released = root / "released"
    released.mkdir()
    v1_test = released / "ar-ud-test.conllu.xz"
    write_conllu([as_v1(s) for s in read_conllu(TRAIN)], released / "ar-v1.conllu")
    v1_test.write_bytes(lzma.compress((released / "ar-v1.conllu").read_bytes()))
    for name in ("sq_staf", "ar_padt_v1"):
        (root / "pool" / name).mkdir(parents=True)
        (root / "pool" / name / "dev.conllu").write_bytes(DEV.read_bytes())
    entries = {
        "sq_staf": {"release": "2.18", "train_split": "train", "ud_version": 2, "sources": {"test": str(DEV)}},
        "ar_padt_v1": {"release": "1.2", "train_split": "dev (less the held-out part)", "ud_version": 1, "sources": {"test": str(v1_test)}},
    }
    (root / "results").mkdir()
    (root / "results" / "multilingual_pool.json").write_text(json.dumps({"treebanks": entries}))
    tokenizers = root / "tokenizers" / "sq_staf" / "tokenizer"  # a trained tokenizer for sq_staf only
    tiny_tokenizer(hidden=32).save(tokenizers, {"note": "random weights, for tests (LSTM matrices of 4,096 values, stored in int8 rows by an --int8-all model)"})
    return {"root": root, "model": root / "run" / "model", "tokenizers": root / "tokenizers"}


def driver(pool: dict[str, Path], *extra: str) -> list[str]:
    root = pool["root"]
    return [str(pool["model"]), "--pool", str(root / "pool"), "--manifest", str(root / "results" / "multilingual_pool.json"),
            "--results", str(root / "results" / "languages"), *extra]


def test_every_pool_treebank_is_scored_into_the_files_the_table_reads(pool, capsys, monkeypatch):
    monkeypatch.chdir(pool["root"])  # the driver runs from the repository's root; this puts the cwd back
    assert score_pool.main(driver(pool, "--tokenizers", str(pool["tokenizers"]))) == 0
    log = capsys.readouterr().out
    assert "copied in from" in log and "sq_staf" in log.splitlines()[0]
    assert re.search(r"ar_padt_v1 raw \(the RULE tokenizer \(no trained one\)\)", log)  # said, not hidden
    results = {p.name: json.loads(p.read_text()) for p in (pool["root"] / "results" / "languages").glob("*.json")}
    assert sorted(results) == [f"{t}__{m}.json" for t in ("ar_padt_v1", "sq_staf") for m in ("gold", "raw")]
    assert (pool["model"] / "tokenizers" / "sq_staf" / "config.json").is_file()
    assert not (pool["model"] / "tokenizers" / "ar_padt_v1").exists()
    assert results["sq_staf__raw.json"]["tokenizer"] == "trained" and results["ar_padt_v1__raw.json"]["tokenizer"] == "rules"
    assert results["sq_staf__raw.json"]["tokenizer_weights"] == weights_digest(pool["model"] / "tokenizers" / "sq_staf", TOKENIZER_FILES) is not None
    assert results["ar_padt_v1__raw.json"]["tokenizer_weights"] is None and "tokenizer_weights" not in results["ar_padt_v1__gold.json"]
    assert {r["weights"] for r in results.values()} == {weights_digest(pool["model"])}  # ship_pool.sh's staleness
    ar = results["ar_padt_v1__gold.json"]
    assert (ar["ud_release"], ar["train_split"], ar["split"], ar["model_treebank"]) == ("1.2", "dev (less the held-out part)", "test", "ar_padt_v1")
    assert "converted" in ar["gold_labels"] and ar["gold"].endswith(".conllu.xz") and ar["gold_lemmas"] is True
    assert ar["conll18"]["Words"]["f1"] == 100.0 and "speed" not in ar  # gold tokens; --rounds 0: no timing
    assert ar["command"].startswith("python -m benchmarks.suite.raw_text ") and "--out" in ar["command"]

    monkeypatch.setattr(peers_table, "REPO", pool["root"])  # the table names its sources relative to the repository
    rows, _ = languages_table.collect(pool["root"] / "results")  # the table reads them (the fake manifest beside them)
    by_name = {r.treebank: r for r in rows}
    assert set(by_name) == {"sq_staf", "ar_padt_v1"} and all(set(r.ours) == {"raw", "gold"} for r in rows)
    las = f"{results['sq_staf__raw.json']['conll18']['LAS']['f1']:.2f}"
    assert f"| {las} |" in languages_table.raw_line(by_name["sq_staf"], {})


def test_a_compact_model_gets_its_tokenizers_in_float16_as_an_export_writes_them(pool, tmp_path):
    from safetensors.torch import load_file

    from spandep.quantised import SCALE_SUFFIX
    from spandep.tokenization.trained import WEIGHTS_FILE as TOKENIZER_WEIGHTS

    given = load_file(str(pool["tokenizers"] / "sq_staf" / "tokenizer" / TOKENIZER_WEIGHTS))
    for compact in (False, True):
        model = tmp_path / f"compact_{compact}"
        model.mkdir()
        (model / "config.json").write_text(json.dumps({"compact": {"dtype": "float16"}} if compact else {}))
        assert score_pool.add_tokenizers(model, pool["tokenizers"], ["sq_staf", "ar_padt_v1"]) == ["sq_staf"]
        copied = load_file(str(model / "tokenizers" / "sq_staf" / TOKENIZER_WEIGHTS))
        assert copied.keys() == given.keys()
        for key, value in given.items():
            want = value.half() if compact and value.is_floating_point() else value
            assert copied[key].dtype == want.dtype and bool((copied[key] == want).all()), key
    model = tmp_path / "int8_all"  # an --int8-all export's: its matrices in int8 rows, as the export writes them
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"compact": {"dtype": "float16", "int8_scope": "all"}}))
    assert score_pool.add_tokenizers(model, pool["tokenizers"], ["sq_staf"]) == ["sq_staf"]
    copied = load_file(str(model / "tokenizers" / "sq_staf" / TOKENIZER_WEIGHTS))
    assert {k for k, v in copied.items() if v.dtype == torch.int8} == {k.removesuffix(SCALE_SUFFIX) for k in copied if k.endswith(SCALE_SUFFIX)} != set()


def test_a_resumed_run_skips_finished_files_unless_again(pool, capsys, monkeypatch):
    monkeypatch.chdir(pool["root"])
    args = driver(pool, "--treebanks", "sq_staf", "--mode", "gold")
    assert score_pool.main(args) == 0
    out = pool["root"] / "results" / "languages" / "sq_staf__gold.json"
    out.write_text(json.dumps({**json.loads(out.read_text()), "marker": 1}))
    capsys.readouterr()
    assert score_pool.main(args) == 0
    assert "is there, skipped" in capsys.readouterr().out and json.loads(out.read_text())["marker"] == 1
    assert score_pool.main([*args, "--again"]) == 0
    assert "marker" not in json.loads(out.read_text())


def test_the_dev_split_comes_from_the_pool_and_has_its_own_name(pool, monkeypatch):
    monkeypatch.chdir(pool["root"])
    assert score_pool.main(driver(pool, "--treebanks", "ar_padt_v1", "--mode", "gold", "--split", "dev")) == 0
    result = json.loads((pool["root"] / "results" / "languages" / "ar_padt_v1__gold__dev.json").read_text())
    assert result["split"] == "dev" and Path(result["gold"]) == pool["root"] / "pool" / "ar_padt_v1" / "dev.conllu"
    monkeypatch.setenv("SPANDEP_POOL", str(pool["root"] / "elsewhere"))  # without --pool: $SPANDEP_POOL's folder
    (pool["root"] / "elsewhere" / "sq_staf").mkdir(parents=True)
    (pool["root"] / "elsewhere" / "sq_staf" / "dev.conllu").write_bytes(TRAIN.read_bytes())
    out = pool["root"] / "env.json"
    raw_text.main(["--model", str(pool["model"]), "--dataset", "sq_staf", "--system", "t", "--mode", "gold", "--split", "dev",
                   "--rounds", "0", "--manifest", str(pool["root"] / "results" / "multilingual_pool.json"), "--out", str(out)])
    assert Path(json.loads(out.read_text())["gold"]) == pool["root"] / "elsewhere" / "sq_staf" / "dev.conllu"


def test_a_v1_test_split_is_scored_with_v2_relations(pool, tmp_path, monkeypatch):
    """A parser of v2 names (an oracle: the v2 gold itself) scores 100 against the v1 gold read converted, as against
    the v2 file, and less against the v1 names as released."""
    real = raw_text.model_parser
    monkeypatch.setattr(raw_text, "model_parser", lambda model, treebank: (lambda _: list(read_conllu(TRAIN)), real(model, treebank)[1]))
    manifest = json.loads((pool["root"] / "results" / "multilingual_pool.json").read_text())
    v1 = manifest["treebanks"]["ar_padt_v1"]
    manifest["treebanks"]["as_v2"] = {**v1, "ud_version": 2, "sources": {"test": str(TRAIN)}}  # the same sentences in v2
    manifest["treebanks"]["unconverted"] = {**v1, "ud_version": 2}  # the v1 file, read as it is
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    scores = {}
    for name in ("ar_padt_v1", "as_v2", "unconverted"):
        out = tmp_path / f"{name}.json"
        raw_text.main(["--model", str(pool["model"]), "--dataset", name, "--treebank", "ar_padt_v1", "--system", "t", "--mode", "gold",
                       "--rounds", "0", "--manifest", str(tmp_path / "m.json"), "--pool", str(pool["root"] / "pool"), "--out", str(out)])
        scores[name] = {m: json.loads(out.read_text())["conll18"][m]["f1"] for m in ("LAS", "UPOS")}
    assert scores["ar_padt_v1"] == scores["as_v2"] == {"LAS": 100.0, "UPOS": 100.0}
    assert scores["unconverted"]["LAS"] < 100.0 and scores["unconverted"]["UPOS"] < 100.0


def test_unknown_treebanks_are_one_line_errors(pool, monkeypatch):
    monkeypatch.chdir(pool["root"])
    with pytest.raises(SystemExit, match=r"^score_pool: error: xx_none: not a treebank of the pool's manifest \(2 treebanks\)") as caught:
        score_pool.main(driver(pool, "--treebanks", "sq_staf", "xx_none"))
    assert "\n" not in str(caught.value)
    with pytest.raises(SystemExit, match=r"^raw_text: error: no dataset 'xx_none': give one of the suite's .* or one of the 2 treebanks") as caught:
        raw_text.main(["--model", str(pool["model"]), "--dataset", "xx_none", "--system", "t",
                       "--manifest", str(pool["root"] / "results" / "multilingual_pool.json")])
    assert "\n" not in str(caught.value)
