"""The benchmark suite end to end on tiny models: the runner trains or reuses, parses, scores and times, and writes
a result file with every required field; the report renders its numbers into the marked section of a document."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, TRAIN, write_config

from benchmarks.scripts.extra_training_data import main as extra_data_main
from benchmarks.scripts.nonprojectivity import nonprojective_share
from benchmarks.scripts.tokenizer_tuning_split import main as tuning_split_main
from benchmarks.suite import record
from benchmarks.suite.record import REQUIRED
from benchmarks.suite.report import BEGIN, END, load_results, render, replace_section
from benchmarks.suite.run import ensure_model, parse_args, run_suite
from benchmarks.suite.systems import DATASETS, E5_SETS, REPO, SYSTEMS, Dataset, System
from spandep.data.conllu import read_conllu
from spandep.storage.model_io import CHOICE_FILE
from spandep.training.config import load_config


@pytest.mark.slow
def test_runner_writes_results_and_report_renders_them(tmp_path, tiny_models):
    span_model = tiny_models["span"]
    fresh = write_config(tmp_path / "biaffine.toml", tmp_path / "run", "bilstm", model=TINY_BIAFFINE, epochs=1)
    systems = {
        "tiny-biaffine": System({"tiny": str(fresh)}),  # no model yet: the runner trains it
        "tiny-span-mst": System({"tiny": str(span_model.parent.parent / "span.toml")}, "mst"),  # trained: reused
        "tiny-other": System({"elsewhere": str(fresh)}),  # no config for this dataset: skipped
    }
    args = parse_args(["--out", str(tmp_path / "results"), "--threads", "1", "--limit", "3"])
    files = run_suite([(name, "tiny") for name in systems], systems, {"tiny": Dataset(TRAIN, DEV, DEV)}, args)

    assert [f.name for f in files] == ["tiny__tiny-biaffine.json", "tiny__tiny-span-mst.json"]
    results = {r["system"]: r for r in load_results(tmp_path / "results")}
    for r in results.values():
        assert all(key in r for key in REQUIRED)
        assert (r["dataset"], r["split"], r["sentences"], r["limit"]) == ("tiny", "test", 3, 3)
        assert all(0 <= r[key] <= 100 for key in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "CLAS"))
        assert r["parse_sent_per_s"] > 0 and r["peak_rss_mb"] > 0 and r["machine"]["cores"] >= 1
        assert r["train_minutes"] is not None and r["train_epochs"] == 1 and r["train_finished"] is True
        assert r["encoder"] == "BiLSTM word+char" and "--systems" in r["command"] and "limit" in r["notes"]
    span = results["tiny-span-mst"]
    saved = json.loads((span_model / "config.json").read_text())["model"]["inference"]
    assert span["decoder"] == "mst" and span["inference"] == {**saved, "decoder": "mst"}
    assert results["tiny-biaffine"]["decoder"] == "mst" and results["tiny-biaffine"]["inference"] == {"decoder": "mst", "precision": "float32"}
    assert results["tiny-biaffine"]["train_device"] == "cpu" and "--train-device" not in results["tiny-biaffine"]["command"]
    assert results["tiny-biaffine"]["parse_device"] == "cpu" and "--parse-device" not in results["tiny-biaffine"]["command"]

    doc = f"# Title\n\nhand-written\n\n{BEGIN}\nold table\n{END}\n\nmore hand-written\n"
    new = replace_section(doc, render(list(results.values())))
    assert new.startswith("# Title\n\nhand-written\n\n") and new.endswith(f"{END}\n\nmore hand-written\n")
    assert "old table" not in new and "PUNCT or SYM" in new
    for r in results.values():
        [row] = [line for line in new.splitlines() if line.startswith(f"| `{r['system']}` |")]
        numbers = (f"{r['UAS']:.2f} / {r['LAS']:.2f}", f"{r['UAS_nopunct']:.2f} / {r['LAS_nopunct']:.2f}", f"{r['CLAS']:.2f}",
                   f"{r['parse_sent_per_s']:,.1f}", f"{r['peak_rss_mb']:,.0f} MB")
        assert all(f" {n} |" in row for n in numbers), row
    coverage = render(list(results.values()), {**systems, "tiny-untrained": System({"tiny": str(fresh)})})
    r = results["tiny-biaffine"]
    assert "| system | elsewhere | tiny |" in coverage  # datasets outside the suite's list: by name
    assert f"| `tiny-biaffine` |  | {r['UAS_nopunct']:.2f} / {r['LAS_nopunct']:.2f} |" in coverage
    assert "| `tiny-untrained` |  | not run |" in coverage and "| `tiny-other` | not run |  |" in coverage
    unlabelled = render([{**r, "labelled": False}], {"tiny-biaffine": systems["tiny-biaffine"]})
    assert f" {r['UAS_nopunct']:.2f} / – | – |" in unlabelled and f"| `tiny-biaffine` | {r['UAS_nopunct']:.2f} / – |" in unlabelled
    on_gpu = render([{**results["tiny-biaffine"], "train_device": "cuda"}])
    assert " epochs on cuda |" in on_gpu and " epochs on cuda |" not in new
    r = results["tiny-biaffine"]
    gpu_parse = {**r, "parse_device": "cuda", "machine": {**r["machine"], "gpu": "NVIDIA H100 80GB HBM3"}}
    both = render([r], gpu=[gpu_parse])
    cpu_part, gpu_part = both.split("### Test parses timed on a GPU")
    assert "NVIDIA H100" not in cpu_part and f"| {r['threads']} |" in cpu_part
    assert "#### tiny (test" in gpu_part and "| NVIDIA H100 80GB HBM3 |" in gpu_part
    assert "Test parses timed on a GPU" not in new  # no GPU results: no GPU section


@pytest.mark.slow
def test_runner_measures_a_shipped_model_as_it_is(tmp_path, tiny_models):
    """A system with a finished model folder is measured with that model and its own settings, never trained; an
    unlabelled treebank is recorded as one."""
    config = write_config(tmp_path / "span.toml", tmp_path / "never-trained", "bilstm", model=TINY_SPAN, epochs=1)
    shipped = tmp_path / "shipped"
    shutil.copytree(tiny_models["span"], shipped)
    saved_config = json.loads((shipped / "config.json").read_text())
    saved_config["training"]["config"]["training"]["device"] = "cuda"  # as if trained on a GPU
    (shipped / "config.json").write_text(json.dumps(saved_config))
    systems = {"tiny-shipped": System({"tiny": str(config)}, "mst", ("--ks", "1"), model=str(shipped))}
    args = parse_args(["--out", str(tmp_path / "results"), "--threads", "1", "--limit", "3"])
    run_suite([("tiny-shipped", "tiny")], systems, {"tiny": Dataset(TRAIN, DEV, DEV, labelled=False)}, args)

    [result] = load_results(tmp_path / "results")
    assert not (tmp_path / "never-trained").exists() and result["model"].endswith("shipped")
    assert result["train_minutes"] is None and "not trained by the suite" in result["notes"]["train_minutes"]
    saved = json.loads((shipped / "config.json").read_text())["model"]["inference"]
    assert result["inference"] == {**saved, "decoder": "mst"} and result["inference_chosen_by"] is None
    assert not (shipped / CHOICE_FILE).exists()  # its settings are the ones it ships with: never re-tuned
    assert result["labelled"] is False and "UAS only" in result["notes"]["LAS"]
    assert result["train_device"] == "cuda" and "--train-device" not in result["command"]  # the model's, not the suite's


def test_commit_of_a_tree_without_git_comes_from_the_environment(monkeypatch):
    from spandep.evaluation import provenance

    monkeypatch.setattr(provenance, "git", lambda *args, root: "")  # record.checkout is provenance's, on the repository
    monkeypatch.delenv("SPANDEP_COMMIT", raising=False)
    assert record.checkout() == {"git_commit": None, "git_dirty": None}
    monkeypatch.setenv("SPANDEP_COMMIT", "a57e607")
    assert record.checkout() == {"git_commit": "a57e607", "git_dirty": None}  # a copy: whether it differs is unknown
    monkeypatch.setattr(provenance, "git", lambda *args, root: "0123abc" if root == record.REPO else "")
    assert record.checkout()["git_commit"] == "0123abc"  # a real checkout wins


def test_trained_on_reads_the_saved_config(tmp_path, tiny_models):
    assert record.trained_on(tiny_models["span"]) == "cpu"
    assert record.trained_on(tmp_path) is None  # no config.json: unknown


def test_every_suite_config_loads_and_trains_on_its_own_treebank(monkeypatch):
    """Each system's config is valid and names its dataset's train and dev files; no two configs share a run folder."""
    monkeypatch.chdir(REPO)
    outputs: dict[str, str] = {}
    for system in SYSTEMS.values():
        for dataset_name, config_path in system.configs.items():
            config = load_config(config_path)
            dataset = DATASETS[dataset_name]
            assert Path(config["data"]["train"]) == dataset.train.resolve(), config_path
            assert Path(config["data"]["dev"]) == dataset.dev.resolve(), config_path
            assert outputs.setdefault(config["training"]["output"], config_path) == config_path
    assert len(outputs) >= len(E5_SETS) * 2


@pytest.mark.slow
def test_runner_tunes_a_span_model_on_dev_once(tmp_path, tiny_models):
    """A span system with a grid gets its inference settings chosen on dev before it is measured, and only once."""
    config = write_config(tmp_path / "span.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=1)
    shutil.copytree(tiny_models["span"], tmp_path / "run" / "model")
    systems = {"tiny-span": System({"tiny": str(config)}, "projective", ("--ks", "1,2", "--lams", "1"))}
    args = parse_args(["--out", str(tmp_path / "results"), "--threads", "1", "--limit", "3"])
    run_suite([("tiny-span", "tiny")], systems, {"tiny": Dataset(TRAIN, DEV, DEV)}, args)

    choice = json.loads((tmp_path / "run" / "model" / CHOICE_FILE).read_text())
    sweep = json.loads((tmp_path / "results" / "tiny_dev__span_sweep__span.json").read_text())
    assert choice["best"] == sweep["best"] and {row["k"] for row in sweep["sweep"]} == {1, 2}
    saved = json.loads((tmp_path / "run" / "model" / "config.json").read_text())["model"]["inference"]
    assert all(saved[key] == choice["best"][key] for key in ("k", "lam", "decoder", "retrieval"))
    [result] = load_results(tmp_path / "results")
    assert "spandep tune" in result["inference_chosen_by"] and result["inference"]["k"] == choice["best"]["k"]

    (tmp_path / "results" / "tiny_dev__span_sweep__span.json").unlink()
    run_suite([("tiny-span", "tiny")], systems, {"tiny": Dataset(TRAIN, DEV, DEV)}, args)
    assert not (tmp_path / "results" / "tiny_dev__span_sweep__span.json").exists()  # tuned already: not swept again


def test_nonprojective_share_counts_sentences_with_crossing_arcs(tmp_path):
    rows = {"projective": [2, 0, 2], "crossing": [3, 4, 0, 3]}  # the second: arcs 1←3 and 2←4 cross
    text = "".join(
        "".join(f"{i}\tw{i}\t_\tX\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_\n" for i, h in enumerate(heads, 1)) + "\n"
        for heads in rows.values()
    )
    (tmp_path / "t.conllu").write_text(text)
    assert nonprojective_share(str(tmp_path / "t.conllu")) == (2, 50.0)


def test_runner_resumes_an_unfinished_run_instead_of_measuring_it(tmp_path, tiny_models, monkeypatch):
    """`reuse` takes a finished run's model as it is, but an unfinished one (train.log short of the epochs) is trained on."""
    run = tmp_path / "run"
    shutil.copytree(tiny_models["biaffine"].parent, run)  # its train.log: epoch 1 of 1
    calls: list[list[str]] = []
    monkeypatch.setattr("subprocess.run", lambda cmd, **kwargs: calls.append(cmd))  # no training here
    for epochs, trains in ((1, False), (2, True)):
        config = write_config(tmp_path / f"e{epochs}.toml", run, "bilstm", model=TINY_BIAFFINE, epochs=epochs)
        calls.clear()
        assert ensure_model(load_config(config), config, True, 1, "cpu") == run / "model"
        assert [cmd[3:5] for cmd in calls] == ([["train", str(config)]] if trains else []), epochs


@pytest.mark.slow
def test_serve_load_checks_every_answer_and_overloads(tmp_path):
    """The load test of spandep serve, tiny: two clients for a second, then a burst against a queue of 2."""
    out = tmp_path / "load.json"
    command = [sys.executable, "-m", "benchmarks.scripts.serve_load", "--data", str(DEV), "--clients", "2", "--seconds", "1",
               "--warmup", "0.5", "--burst", "12", "--max-queue", "2", "--text-share", "0.5", "--big-share", "0.3",
               "--max-sentences", "6", "--out", str(out)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["sentences"] == 4 and result["served"]["requests"] > 0 and result["served"]["words_per_s"] > 0
    assert result["served"]["errors"] == result["served"]["mismatches"] == 0
    assert result["overload"]["statuses"]["503"] > 0 and result["overload"]["errors"] == result["overload"]["mismatches"] == 0
    assert result["settings"]["text_share"] == 0.5 and result["served"]["kinds"]  # raw text and CoNLL-U (seeded)
    assert result["memory"]["samples_mb"] and set(result["bars"]) >= {"no_errors", "memory_flat_10_percent"}
    assert result["spandep_parse"]["sentences_that_differ_default_vs_same_batch_tokens"] == 0
    assert json.loads(done.stdout)["throughput_ratio"] == result["throughput_ratio"]  # the numbers are printed too


@pytest.mark.slow
def test_serve_memory_samples_the_service_under_load(tmp_path):
    """The in-process memory probe of spandep serve, tiny: two clients for three seconds, a sample a second."""
    out = tmp_path / "memory.json"
    command = [sys.executable, "-m", "benchmarks.scripts.serve_memory", "--data", str(DEV), "--clients", "2", "--seconds", "3",
               "--sample-s", "1", "--warmup", "0", "--kernel-cache", "8", "--max-sentences", "6", "--out", str(out)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["requests"] > 0 and len(result["samples"]) >= 2 and str(REPO) not in result["command"]
    summary = result["summary_after_warmup"]
    assert 0 < summary["malloc_in_use"]["min"] <= summary["malloc_in_use"]["max"] and summary["vmrss"]["mean"] > 0
    assert result["settings"]["kernel_cache"] == 8

def test_peers_table_takes_test_split_results_only(tmp_path, monkeypatch):
    from benchmarks.scripts import peers_table

    monkeypatch.setattr(peers_table, "REPO", tmp_path)  # sources are named relative to it

    scores = {"LAS": {"precision": 80.0, "recall": 80.0, "f1": 80.0}}
    for name, split in (("en_ewt__a", "test"), ("en_ewt_dev__a", "dev"), ("en_ewt__b", None)):
        record = {"conll18": scores, "treebank": "en_ewt", "system": name, **({"split": split} if split else {})}
        (tmp_path / f"{name}.json").write_text(json.dumps(record))
    assert sorted(r["system"] for r in peers_table.measured([tmp_path])) == ["en_ewt__a", "en_ewt__b"]


def test_recipe_table_compares_each_step_with_the_one_it_builds_on(tmp_path, monkeypatch):
    from benchmarks.scripts import recipe_table

    monkeypatch.setattr(recipe_table, "REPO", tmp_path)  # sources are named relative to it
    configs, results = tmp_path / "configs", tmp_path / "results"
    (configs / "steps").mkdir(parents=True)
    results.mkdir()
    (configs / "xx-plain.toml").write_text('base = "recipe.toml"\n')
    (configs / "steps" / "xx-more.toml").write_text('base = ["../xx-plain.toml", "../heads.toml"]\n')
    (configs / "steps" / "xx-other.toml").write_text('base = "xx-more.toml"\n')
    for step, las, trained in (("xx-other", 71.5, {}), ("xx-more", 70.25, {"epochs": 40, "best_epoch": 31}), ("xx-plain", 68.0, {})):
        record = {"conll18": {"LAS": {"f1": las}, "UAS": {"f1": las + 5}}, "trained": trained}
        (results / f"cs_cltt__{step}.json").write_text(json.dumps(record))
    (results / "cs_cltt__xx-more__tune.json").write_text("{}")  # a sweep, not a row
    (results / "cs_cltt__shipped.json").write_text(json.dumps({"conll18": {}}))  # a shipped copy: no step config
    rows = recipe_table.read_rows(results, configs)
    assert sorted(r["step"] for r in rows) == ["xx-more", "xx-other", "xx-plain"]
    table = recipe_table.render(rows, configs).splitlines()
    assert [line.split(" | ")[1] for line in table[2:]] == ["`xx-plain`", "`xx-more`", "`xx-other`"]
    plain, more, other = table[2:]
    assert "| `recipe` |" in plain and plain.split(" | ")[-3] == "–"  # its base was not measured
    assert "| `xx-plain` |" in more and more.split(" | ")[-3] == "+2.25" and more.split(" | ")[-2] == "40 (31)"
    assert other.split(" | ")[-3] == "+1.25"
    (configs / "multi-e5-span.toml").write_text('base = ["recipes/e5-span.toml", "recipes/six.toml"]\n')
    (configs / "cs_cltt-span.toml").write_text('base = "xx-more.toml"\n')
    for step, las in (("multi-e5-span", 72.0), ("cs_cltt-span", 71.0)):
        (results / f"cs_cltt__{step}.json").write_text(json.dumps({"conll18": {"LAS": {"f1": las}}, "trained": {}}))
    multi = [line for line in recipe_table.render(recipe_table.read_rows(results, configs), configs).splitlines() if "`multi-e5-span`" in line]
    assert "| `cs_cltt-span` |" in multi[0] and multi[0].split(" | ")[-3] == "+1.00"  # against the treebank's own model


def test_parsers_table_sets_each_span_model_beside_its_biaffine_twin(tmp_path, monkeypatch):
    from benchmarks.scripts import parsers_table

    monkeypatch.setattr(parsers_table, "REPO", tmp_path)  # sources are named relative to it

    def write(treebank: str, parser: str, split: str, las: float, ours: bool = True) -> None:
        path = parsers_table.result_path(treebank, parser, split, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"conll18": {"LAS": {"f1": las}, "UAS": {"f1": las + 3}}, **({"ours": {"LAS_nopunct": las - 1}} if ours else {})}
        path.write_text(json.dumps(record))

    write("fr_sequoia", "span", "dev", 90.5)
    write("fr_sequoia", "biaffine", "dev", 90.0)
    write("fr_sequoia", "span", "test", 89.0)
    write("fr_sequoia", "biaffine", "test", 89.75, ours=False)  # an older result without our own scores
    write("en_ewt", "span", "test", 93.0)
    write("en_ewt", "biaffine", "test", 92.0)
    write("fr_sequoia", "span", "test, raw text", 88.0, ours=False)
    write("fr_sequoia", "biaffine", "test, raw text", 87.0, ours=False)  # the span parser ahead: not counted (raw text)
    write("cs_cltt", "span", "test", 80.0)  # its twin not measured yet
    (tmp_path / "significance").mkdir()
    (tmp_path / "significance" / "fr_sequoia__test.json").write_text(json.dumps({"ci95": [-1.5, 0.1]}))
    assert parsers_table.result_path("en_ewt", "biaffine", "dev", tmp_path).name == "en_ewt_dev__accurate-biaffine__gold.json"
    assert parsers_table.result_path("en_ewt", "span", "test, raw text", tmp_path).name == "en_ewt__accurate.json"
    assert parsers_table.result_path("zh_gsd_v1", "span", "dev", tmp_path).name == "zh_gsd_v1__zh_gsd_v1-12ep.json"  # DEV_STEP
    assert parsers_table.result_path("zh_gsd_v1", "span", "test", tmp_path).name == "zh_gsd_v1__zh_gsd_v1-span__gold.json"
    table = parsers_table.render(tmp_path).splitlines()
    rows = [line.split(" | ") for line in table[2:] if line.startswith("| ")]
    assert [(r[0], r[1]) for r in rows] == [
        ("| en_ewt", "test"), ("| fr_sequoia", "dev"), ("| fr_sequoia", "test"), ("| fr_sequoia", "test, raw text"), ("| cs_cltt", "test")
    ]
    en, fr_dev, fr_test, fr_raw, cs = rows
    assert en[2:10] == ["96.00", "95.00", "93.00", "92.00", "+1.00", "–", "92.00", "91.00"]
    assert fr_dev[6:8] == ["+0.50", "–"] and fr_test[6:8] == ["-0.75", "-1.50 to +0.10"] and fr_test[9] == "–"
    assert cs[5] == "–" and cs[6] == "–"
    assert fr_raw[2:8] == ["91.00", "90.00", "88.00", "87.00", "+1.00", "–"] and "raw/fr_sequoia__fr_sequoia-biaffine.json" in fr_raw[10]
    assert "raw/fr_sequoia__fr_sequoia-span__gold.json" in fr_test[10] and "multilingual/fr_sequoia__fr_sequoia-biaffine.json" in fr_dev[10]
    assert table[-1] == "The span parser ≥ Biaffine (test LAS, official) on 0 of the 1 treebanks of issue 25 with both parsers scored (en_ewt apart)."


def test_shipped_table_has_a_row_per_installed_model_with_test_results(tmp_path, monkeypatch):
    from benchmarks.scripts import peers_table, shipped_table

    monkeypatch.setattr(peers_table, "REPO", tmp_path)  # sources are named relative to it
    raw = tmp_path / "raw"
    raw.mkdir()

    def write(name: str, mode: str, las: float) -> None:
        treebank, system = name.split("__")[:2]
        scores = {m: {"f1": las + i} for i, m in enumerate(shipped_table.GOLD)}
        (raw / f"{name}.json").write_text(json.dumps({"treebank": treebank, "system": system, "mode": mode, "conll18": scores}))

    write("en_ewt__default__gold", "gold", 80.0)
    write("en_ewt__default", "raw", 70.0)
    write("en_ewt__accurate", "raw", 75.0)  # raw text only: no row (the gold-token scores make the row)
    write("zh_gsd_v1__zh_gsd_v1-span__gold", "gold", 60.0)  # a model without a lemma head
    write("ko_gsd__ko_gsd-pool-finetune__gold", "gold", 50.0)  # a treebank of the pool in a folder of its own
    rows = [line.split(" | ") for line in shipped_table.render(tmp_path).splitlines()[2:]]
    assert [r[0] for r in rows] == ["| `en`", "| `zh`", "| `ko`"]
    row, zh, _ = rows
    assert row[3:10] == [f"{80.0 + i:.2f}" for i in range(7)] and row[10] == f"{70.0 + 4:.2f}"  # raw LAS: the 5th metric
    assert row[11].endswith("(UD 2.17)") and "raw/en_ewt__default__gold.json" in row[12]
    assert zh[3:10] == ["60.00", "61.00", "–", "63.00", "64.00", "65.00", "–"]  # no Lemmas, no BLEX: "_" against "_"


def test_tokenizer_tuning_split_moves_every_tenth_train_sentence_and_loses_none(tmp_path):
    tuning_split_main([str(TRAIN), str(DEV), str(tmp_path)])
    train, dev = list(read_conllu(TRAIN)), list(read_conllu(DEV))
    kept, tune = list(read_conllu(tmp_path / "train.conllu")), list(read_conllu(tmp_path / "tune.conllu"))
    held = tune[len(dev):]
    assert [s.forms for s in tune[: len(dev)]] == [s.forms for s in dev]
    assert [s.forms for s in held] == [s.forms for s in train[9::10]] and held
    assert len(kept) + len(held) == len(train)
    assert sorted(map(tuple, (s.forms for s in kept + held))) == sorted(map(tuple, (s.forms for s in train)))
    newdocs = (tmp_path / "tune.conllu").read_text(encoding="utf-8").count("# newdoc")
    assert newdocs == Path(DEV).read_text(encoding="utf-8").count("# newdoc") + 1  # the held-out part, a document


def test_extra_training_data_leaves_out_every_sentence_that_overlaps_the_excluded_splits(tmp_path, capsys):
    out = tmp_path / "train.conllu"
    extra_data_main([str(out), str(TRAIN), str(TRAIN), str(DEV), "--exclude", str(DEV)])  # DEV overlaps itself
    train, dev, written = (list(read_conllu(p)) for p in (TRAIN, DEV, out))
    dev_forms = [d.forms for d in dev]
    assert [s.forms for s in written] == [s.forms for s in train] + [s.forms for s in train if s.forms not in dev_forms]
    assert not any(s.forms in dev_forms for s in written[len(train):])  # every extra copy of a dev sentence is out
    assert f"+ {len(written) - len(train)} of {len(train) + len(dev)} extra" in capsys.readouterr().out
