"""Several treebanks in one model: the ``[data] treebanks`` config, joint training with per-treebank dev figures,
the label and class masks (no foreign label, no XPOS for a treebank without it), loading with and without a
treebank, per-treebank tokenizers, compact export, and shipped names that share one folder."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, TRAIN, write_config
from safetensors.torch import load_file
from typer.testing import CliRunner

import spandep
from spandep.cli.main import app
from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.sentence import Sentence
from spandep.errors import InputFormatError
from spandep.models.heads.lemma import lemma_lexicon
from spandep.options import InferenceOptions
from spandep.storage import catalogue
from spandep.tokenization.corpus import lossless_problems
from spandep.storage.model_io import load_model, read_model_config, save_inference, write_model_config
from spandep.pipeline.predict import parse_stream
from spandep.tokenization.trained import TrainedTokenizer
from spandep.training.config import load_config
from spandep.training.trainer import Trainer
from spandep.training.treebanks import epoch_sentences
from test_tokenization import tiny_tokenizer

HEADS = "\n[heads.upos]\ncasing = 4\n\n[heads.xpos]\nsuffix = 4\n\n[heads.feats]\n\n[heads.lemma]\nhidden = 8\n"
runner = CliRunner()


def relabelled(sentence: Sentence) -> Sentence:
    """Treebank ``b``: EWT with every relation but ``root`` renamed ``b_REL`` and no XPOS column."""
    words = [replace(w, deprel=w.deprel if w.deprel == "root" else f"b_{w.deprel}", xpos="_") for w in sentence.words]
    return replace(sentence, words=words)


def two_treebanks(folder: Path, tokenizer: Path | None = None) -> str:
    """The ``[data]`` table of treebanks ``a`` (EWT excerpts) and ``b`` (relabelled, no XPOS), written to ``folder``."""
    for split, source in (("train", TRAIN), ("dev", DEV)):
        write_conllu([relabelled(s) for s in read_conllu(source)], folder / f"b-{split}.conllu")
    tok = f', tokenizer = "{tokenizer}"' if tokenizer else ""
    return (
        f'[data]\ntreebanks = [\n  {{ name = "a", train = "{TRAIN}", dev = "{DEV}"{tok} }},\n'
        f'  {{ name = "b", train = "{folder / "b-train.conllu"}", dev = "{folder / "b-dev.conllu"}"{tok} }},\n]\n'
    )


def multi_config(folder: Path, model: str, data: str, **training: object) -> Path:
    """A tiny BiLSTM config over ``data`` (a ``[data]`` table) with every head and a treebank embedding."""
    single = write_config(folder / "single.toml", folder / "run", "bilstm", model=model + "treebank_dim = 4\n", epochs=1, **training)
    text = re.sub(r"\[data\]\n[^\[]*", lambda _: data + "\n", single.read_text()) + HEADS
    path = folder / "multi.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def tokenizer_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tok") / "tokenizer"
    tiny_tokenizer().save(folder, {"note": "random weights, for tests"})
    return folder


@pytest.fixture(scope="module", params=["biaffine", "span"])
def joint(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tokenizer_folder: Path) -> Path:
    """The run folder of a joint model of treebanks ``a`` and ``b``, one per parser type."""
    folder = tmp_path_factory.mktemp(f"joint_{request.param}")
    table = TINY_BIAFFINE if request.param == "biaffine" else TINY_SPAN
    data = two_treebanks(folder, tokenizer_folder) + "sampling_exponent = 0.5\n"
    Trainer(load_config(multi_config(folder, table, data))).run()
    return folder / "run"


def test_the_log_gives_each_treebank_and_selects_on_their_macro_average(joint: Path) -> None:
    lines = (joint / "train.log").read_text().splitlines()
    assert "macro-average LAS_nopunct" in lines[0] and "(a, b)" in lines[0]
    entry = dict(kv.split("=") for kv in lines[1].split() if "=" in kv)
    assert {"a:UAS", "a:LAS", "b:UAS", "b:LAS", "b:LAS_nopunct"} <= set(entry)
    assert float(entry["LAS"]) == pytest.approx((float(entry["a:LAS"]) + float(entry["b:LAS"])) / 2)
    config = json.loads((joint / "model" / "config.json").read_text())["model"]
    assert config["treebanks"]["names"] == ["a", "b"] and config["treebanks"]["dim"] == 4
    assert sorted(p.name for p in (joint / "model" / "tokenizers").iterdir()) == ["a", "b"]
    lemma = load_model(joint / "model").heads["lemma"]  # each treebank's own lexicons, from its own training words
    assert not lemma.lexicon and sorted(lemma.treebank_lexicons) == ["a", "b"] and lemma.fallback == "language"  # no lexicon of all
    assert lemma.treebank_lexicons["a"]["lexicon"] == lemma_lexicon(list(read_conllu(TRAIN)))


def test_each_treebank_gets_only_its_own_labels_and_columns(joint: Path) -> None:
    model = load_model(joint / "model")
    dev_a, dev_b = list(read_conllu(DEV)), [relabelled(s) for s in read_conllu(DEV)]
    blank = [replace(s, words=[replace(w, xpos="_", upos="_", lemma="_", feats="_") for w in s.words]) for s in dev_a]
    parsed_a = list(parse_stream(model, blank, InferenceOptions(treebank="a")))
    parsed_b = list(parse_stream(model, blank, InferenceOptions(treebank="b")))
    labels_a, labels_b = {r for s in dev_a for r in s.deprels}, {r for s in dev_b for r in s.deprels}
    assert all(not r.startswith("b_") for s in parsed_a for r in s.deprels)
    assert all(r == "root" or r.startswith("b_") for s in parsed_b for r in s.deprels)
    assert labels_a | labels_b <= set(model.labels)  # the vocabulary is the union
    assert all(w.xpos != "_" for s in parsed_a for w in s.words)  # a has XPOS
    assert all(w.xpos == "_" and w.upos != "_" for s in parsed_b for w in s.words)  # b has none: masked, not refused


def test_loading_asks_for_one_of_the_models_treebanks(joint: Path) -> None:
    with pytest.raises(ValueError, match=r"trained on several treebanks: choose one with treebank=.*: a, b$"):
        spandep.load(joint / "model")
    with pytest.raises(ValueError, match=r"treebank 'c' is not one of this model's: a, b$"):
        spandep.load(joint / "model", treebank="c")
    nlp = spandep.load(joint / "model", treebank="b")
    assert isinstance(nlp.tokenizer, TrainedTokenizer) and repr(nlp).endswith("treebank='b')")
    doc = nlp("The cat sat on the mat. It slept.")
    assert all(r == "root" or r.startswith("b_") for s in doc.data for r in s.deprels)
    result = runner.invoke(app, ["parse", str(DEV), "--model", str(joint / "model")])
    assert result.exit_code == 2 and "choose one with treebank=" in result.output and result.output.count("\n") == 1
    result = runner.invoke(app, ["parse", str(DEV), "--model", str(joint / "model"), "--treebank", "a", "-o", "-"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["calibrate", str(joint / "model"), str(DEV)])  # one mapping per treebank, on its dev
    assert result.exit_code == 2 and "several treebanks (a, b): name the one DEV belongs to with --treebank NAME" in result.output


def test_each_treebank_is_calibrated_on_its_own_dev(joint: Path, tmp_path: Path) -> None:
    shutil.copytree(joint / "model", tmp_path / "model")
    gold = list(read_conllu(DEV))
    probs = lambda tb: [w.head_prob for s in parse_stream(load_model(tmp_path / "model"), gold, InferenceOptions(treebank=tb)) for w in s.words]  # noqa: E731
    before = {tb: probs(tb) for tb in ("a", "b")}
    result = runner.invoke(app, ["calibrate", str(tmp_path / "model"), str(DEV), "--treebank", "a", "--write"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.splitlines()[0])
    saved = load_model(tmp_path / "model").calibration
    assert report["treebank"] == "a" and saved.to_dict()["treebanks"] == {"a": report["calibration"]}
    assert probs("b") == before["b"] and probs("a") != before["a"]  # b keeps the model's own (the identity here)


def test_several_treebanks_calibrated_at_once_lean_on_their_pooled_mapping(joint: Path, tmp_path: Path) -> None:
    shutil.copytree(joint / "model", tmp_path / "model")
    alone = {}
    for tb in ("a", "b"):  # from the identity, each treebank's own fit alone
        result = runner.invoke(app, ["calibrate", str(joint / "model"), str(DEV), "--treebank", tb, "--kind", "logit-platt"])
        alone[tb] = json.loads(result.output.splitlines()[0])["calibration"]
    both = ["calibrate", str(tmp_path / "model"), str(DEV), str(DEV), "--treebank", "a", "--treebank", "b"]
    result = runner.invoke(app, [*both, "--prior-words", "0", "--kind", "logit-platt"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert result.exit_code == 0 and [x["treebank"] for x in lines] == ["a", "b", None] and lines[2]["pooled"] == ["a", "b"]
    assert [x["calibration"] for x in lines[:2]] == [alone["a"], alone["b"]] and lines[0]["prior_words"] == 0
    result = runner.invoke(app, [*both, "--prior-words", "1e7", "--kind", "logit-platt", "--write"])  # the pooled mapping outweighs either dev
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()[:3]]
    saved = load_model(tmp_path / "model").calibration
    pooled = saved.to_dict()
    assert pooled["kind"] == "logit-platt" and pooled["head_scale"] == lines[2]["calibration"]["head_scale"]
    assert all(x["prior"]["head_scale"] == pooled["head_scale"] and x["prior_words"] == 1e7 for x in lines[:2])
    z = np.linspace(-5, 20, 50)  # (50,)
    for tb in ("a", "b"):
        assert saved.for_treebank(tb).to_dict() == lines[("a", "b").index(tb)]["calibration"]
        assert np.allclose(saved.for_treebank(tb).from_logits(z), saved.from_logits(z), atol=0.01)  # (50,)
    result = runner.invoke(app, [*both[:4], "--treebank", "a"])
    assert result.exit_code == 2 and "one --treebank per DEV file" in result.output and result.output.count("\n") == 1
    result = runner.invoke(app, [*both[:4], "--treebank", "a", "--treebank", "a"])
    assert result.exit_code == 2 and "each --treebank once" in result.output


def test_the_calibration_table_fits_and_measures_a_shipped_names_own_treebank(
    joint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks.scripts import calibration_table
    from benchmarks.suite.record import weights_digest
    from benchmarks.suite.systems import Dataset

    shutil.copytree(joint / "model", tmp_path / "model")
    lines = {f"{t}{t}": {"folder": str(tmp_path / "model"), "language": t.upper(), "treebank": f"UD_{t.upper()}", "model_treebank": t,
                         "code": f"xx_{t}"} for t in ("b", "a")}
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"default": "bb", "models": lines}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", path)
    monkeypatch.setattr(calibration_table, "OUT", tmp_path / "results")
    monkeypatch.setattr(calibration_table, "dataset", lambda name, pool: Dataset(TRAIN, DEV, DEV) if name in ("xx_a", "xx_b") else None)
    calibration_table.calibrate(["bb"])  # spandep calibrate MODEL DEV --treebank b --write
    assert calibration_table.stale(["bb", "aa"]) == ["bb", "aa"]
    calibration_table.measure(["bb"])
    saved = load_model(tmp_path / "model").calibration.to_dict()
    dev, test = (json.loads((tmp_path / "results" / f"bb{end}.json").read_text()) for end in (".dev", ""))
    assert dev["treebank"] == "b" and list(saved["treebanks"]) == ["b"] and dev["calibration"] == saved["treebanks"]["b"]
    assert test["treebank"] == "xx_b" and test["calibration"] == saved["treebanks"]["b"] != saved | {"treebanks": {}}
    assert test["words"] == sum(len(s.words) for s in read_conllu(DEV)) and len(test["head_ece_floor"]) == 2
    assert calibration_table.stale(["bb", "aa"]) == ["aa"]
    calibration_table.calibrate(["bb", "aa"])  # one call: spandep calibrate MODEL DEV DEV --treebank b --treebank a --write
    saved = load_model(tmp_path / "model").calibration.to_dict()
    reports = {n: json.loads((tmp_path / "results" / f"{n}.dev.json").read_text()) for n in ("aa", "bb")}
    assert saved["kind"] == "logit-platt" and sorted(saved["treebanks"]) == ["a", "b"]  # the pooled mapping, the model's own
    assert all(r["calibration"] == saved["treebanks"][r["treebank"]] and r["prior"]["head_scale"] == saved["head_scale"] for r in reports.values())
    assert {r["weights"] for r in reports.values()} == {weights_digest(tmp_path / "model")} != {None}  # ship_pool.sh's staleness
    assert calibration_table.stale(["bb", "aa"]) == ["bb", "aa"]  # bb's mapping moved with the pooled one


def test_a_compact_export_carries_the_treebanks_and_their_tokenizers(joint: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", str(joint / "model"), str(tmp_path / "shipped")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "shipped" / "tokenizers" / "a" / "config.json").is_file()
    full, compact = spandep.load(joint / "model", treebank="b"), spandep.load(tmp_path / "shipped", treebank="b")
    assert [s.deprels for s in compact.parse_file(DEV).data] == [s.deprels for s in full.parse_file(DEV).data]


def test_an_int8_all_export_stores_its_tokenizers_in_int8_rows_that_load_as_the_weights_within_half_a_step(joint: Path, tmp_path: Path) -> None:
    from spandep.quantised import SCALE_SUFFIX
    from spandep.tokenization.trained import load_tokenizer

    wider = tmp_path / "wider"  # matrices of 4,096 values and more, as a trained tokenizer's LSTM has
    tiny_tokenizer(hidden=32).save(wider, {"note": "a wider tokenizer, for treebank a"})
    result = runner.invoke(app, ["export", str(joint / "model"), str(tmp_path / "int8"), "--int8-all", "--tokenizer", f"a={wider}"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "int8" / "config.json").read_text())["compact"]["int8_scope"] == "all"
    given = load_file(str(wider / "model.safetensors"))
    stored = load_file(str(tmp_path / "int8" / "tokenizers" / "a" / "model.safetensors"))
    rows = [k for k in given if k + SCALE_SUFFIX in stored]
    assert rows and all(stored[k].dtype == torch.int8 and given[k].numel() >= 4096 for k in rows)  # the LSTM's matrices
    assert all(v.dtype == torch.float16 for k, v in stored.items() if k not in rows)  # the rest as a compact copy
    tokenizer = load_tokenizer(tmp_path / "int8" / "tokenizers" / "a")
    weights = dict(tokenizer.net.state_dict())
    for k in rows:  # each weight back within half a quantisation step of its row
        step = stored[k + SCALE_SUFFIX].float()[..., None]
        assert bool(((weights[k] - given[k]).abs() <= step / 2 + 1e-3).all()), k
    text = "Ein Satz hier. Noch einer, bitte!"
    assert lossless_problems(text, tokenizer.tokenize(text)) == []
    assert [s.forms for s in spandep.load(tmp_path / "int8", treebank="a").tokenizer.tokenize(text)] == [s.forms for s in tokenizer.tokenize(text)]


def test_export_replaces_one_treebanks_tokenizer(joint: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    tiny_tokenizer(seed=1).save(other, {"note": "another tokenizer, for treebank b"})
    shipped = tmp_path / "shipped"
    result = runner.invoke(app, ["export", str(joint / "model"), str(shipped), "--tokenizer", f"b={other}"])
    assert result.exit_code == 0, result.output
    weights = {name: load_file(str(shipped / "tokenizers" / name / "model.safetensors")) for name in ("a", "b")}
    given = {"a": load_file(str(joint / "model" / "tokenizers" / "a" / "model.safetensors")), "b": load_file(str(other / "model.safetensors"))}
    for name in ("a", "b"):  # each its own tokenizer's weights, in float16 (a compact copy)
        assert weights[name].keys() == given[name].keys() and all(t.dtype != torch.float32 for t in weights[name].values())
        assert all(torch.equal(weights[name][k], v.half() if v.is_floating_point() else v) for k, v in given[name].items())
    assert not torch.equal(weights["a"]["out.weight"], weights["b"]["out.weight"])
    for wrong in (str(other), f"c={other}"):
        result = runner.invoke(app, ["export", str(joint / "model"), str(tmp_path / "no"), "--tokenizer", wrong])
        assert result.exit_code == 2 and "TREEBANK=FOLDER" in result.output and not (tmp_path / "no").exists()


def test_two_shipped_names_share_one_folder(joint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = {
        "aa": {"folder": str(joint / "model"), "language": "A", "treebank": "UD_A", "model_treebank": "a"},
        "bb": {"folder": str(joint / "model"), "language": "B", "treebank": "UD_B", "model_treebank": "b"},
    }
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"default": "aa", "models": lines}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", path)
    assert spandep.load("aa").options.treebank == "a" and spandep.load("bb").options.treebank == "b"
    assert spandep.load("aa", treebank="b").options.treebank == "b"  # a treebank given wins
    result = runner.invoke(app, ["parse", str(DEV), "--model", "bb", "-o", "-"])
    assert result.exit_code == 0 and "\tb_" in result.output


def test_a_service_of_two_names_of_one_folder_holds_its_model_once(joint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spandep.serve.service import Service, ServiceSettings

    shutil.copytree(joint / "model", tmp_path / "copy")
    lines = {
        "aa": {"folder": str(joint / "model"), "language": "A", "treebank": "UD_A", "model_treebank": "a"},
        "bb": {"folder": str(joint / "model"), "language": "B", "treebank": "UD_B", "model_treebank": "b"},
        "cc": {"folder": str(tmp_path / "copy"), "language": "A", "treebank": "UD_A", "model_treebank": "a"},
    }
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"default": "aa", "models": lines}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", path)
    served = Service.load(["aa", "bb", "cc"], ServiceSettings(), threads=1).models
    assert served["aa"].model is served["bb"].model and served["cc"].model is not served["aa"].model  # one copy a folder
    assert (served["aa"].options.treebank, served["bb"].options.treebank) == ("a", "b")
    labels = {name: {w.deprel for s in served[name].parse_file(DEV).data for w in s.words} for name in ("aa", "bb")}
    assert all(label.startswith("b_") or label == "root" for label in labels["bb"]) and not any(label.startswith("b_") for label in labels["aa"])


def test_a_single_treebank_model_keeps_its_config_and_refuses_a_treebank(tiny_models: dict[str, Path]) -> None:
    config = json.loads((tiny_models["span"] / "config.json").read_text())
    assert "treebanks" not in config["model"]
    assert not {"treebanks", "sampling_exponent"} & set(config["training"]["config"]["data"])
    assert "treebank_dim" not in config["training"]["config"]["model"]
    model = load_model(tiny_models["span"])
    assert model.treebanks is None and model.width == model.encoder.out_dim
    assert not any("treebank" in name for name in model.state_dict())
    with pytest.raises(ValueError, match="trained on one treebank: leave treebank out"):
        spandep.load(tiny_models["span"], treebank="a")


def test_sampling_gives_each_treebank_its_share() -> None:
    chosen = epoch_sentences([100, 4], 0.5, seed=3)
    assert len(chosen) == 104 and chosen == epoch_sentences([100, 4], 0.5, seed=3)
    small = [i for i in chosen if i >= 100]
    assert len(small) == round(104 * 2 / 12) and set(small) == {100, 101, 102, 103}  # 17: every sentence 4 times, then 1
    assert sorted(epoch_sentences([3, 2], 1.0, seed=0)) == [0, 1, 2, 3, 4]


def test_config_errors_say_how_to_fix_them(tmp_path: Path) -> None:
    data = two_treebanks(tmp_path)
    bad = {
        data.replace('name = "b"', 'name = "a"'): "the name 'a' is given twice",
        data.replace("[data]\n", f'[data]\ntrain = "{TRAIN}"\n'): r"with \[data\] treebanks, give them in each treebank.s table",
        data.replace('name = "b", ', 'name = "b", test = "x", '): r"unknown key\(s\) test",
        f'[data]\ntreebanks = [{{ name = "a", train = "{TRAIN}", dev = "{DEV}" }}]\n': "two or more",
        f'[data]\ntrain = "{TRAIN}"\ndev = "{DEV}"\nsampling_exponent = 0.5\n': "apply to several treebanks",
    }
    for text, message in bad.items():
        with pytest.raises(InputFormatError, match=message):
            load_config(multi_config(tmp_path, TINY_BIAFFINE, text))


def test_the_treebank_embedding_and_masks() -> None:
    import torch

    from spandep.models.treebanks import Treebanks, restrict

    allowed = {"labels": {"a": [0, 2], "b": [1]}}
    with_embedding, masks_only = Treebanks(["a", "b"], 3, allowed, {"labels": 3}), Treebanks(["a", "b"], 0, allowed, {"labels": 3})
    x = torch.zeros(2, 4, 5)  # (batch, 1 + n, d)
    ids = torch.tensor([1, 0])  # (batch,)
    assert with_embedding.vectors(x, ids).shape == (2, 4, 8) and masks_only.vectors(x, ids) is x
    assert masks_only.mask("labels", "b").tolist() == [False, True, False] and not list(masks_only.state_dict())
    scores = torch.tensor([[3.0, 1.0, 2.0]])  # (1, labels)
    assert restrict(scores, masks_only.mask("labels", "b")).argmax(-1).item() == 1 and restrict(scores, None) is scores


@pytest.mark.slow
def test_the_raw_text_benchmark_parses_as_the_treebank_it_names(joint: Path, tmp_path: Path) -> None:
    from benchmarks.suite import raw_text
    from benchmarks.suite.systems import DATASETS

    if not DATASETS["cs_cltt"].dev.is_file():
        pytest.skip("needs ../shared/data")
    out = tmp_path / "result.json"
    args = ["--model", str(joint / "model"), "--dataset", "cs_cltt", "--split", "dev", "--mode", "gold", "--rounds", "1"]
    raw_text.main([*args, "--system", "joint", "--treebank", "b", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["model_treebank"] == "b" and result["conll18"]["Words"]["f1"] == 100.0
    assert 1 <= result["trained"]["best_epoch"] <= result["trained"]["epochs"]  # how the model was trained, from its config
    assert result["conll18"]["XPOS"]["f1"] < 1.0  # treebank b has no XPOS: the column stays empty
    assert result["ours"]["UAS"] == pytest.approx(result["conll18"]["UAS"]["f1"], abs=0.01)  # gold tokens: all words alike
    assert result["ours"]["LAS_nopunct"] is not None and result["ours"]["punct_rule"]
    with pytest.raises(ValueError, match="'cs_cltt' is not one of this model's: a, b"):
        raw_text.main([*args, "--system", "joint", "--out", str(out)])  # cs_cltt is none of them


@pytest.mark.parametrize("joint", ["span"], indirect=True)
def test_tune_chooses_and_saves_one_treebanks_settings(joint: Path, tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(joint / "model", model)
    dev_b = tmp_path / "b-dev.conllu"
    write_conllu([relabelled(s) for s in read_conllu(DEV)], dev_b)
    result = runner.invoke(app, ["tune", str(model), str(dev_b), "--ks", "1,2", "--lams", "0.5", "--write"])
    assert result.exit_code == 2 and "name the one DEV belongs to with --treebank NAME" in result.output
    result = runner.invoke(app, ["tune", str(model), str(dev_b), "--treebank", "c", "--ks", "1"])
    assert result.exit_code == 2 and "treebank 'c' is not one of this model's: a, b" in result.output
    out = tmp_path / "sweep.json"
    args = ["tune", str(model), str(dev_b), "--treebank", "b", "--ks", "1,2", "--lams", "3", "--write", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "for treebank b" in result.output, result.output
    sweep = json.loads(out.read_text())
    assert sweep["treebank"] == "b"
    best = sweep["best"]
    assert json.loads((model / "inference_choice-b.json").read_text())["best"] == best
    loaded = load_model(model)
    shared = loaded.settings(InferenceOptions(treebank="a"))
    chosen = loaded.settings(InferenceOptions(treebank="b"))
    assert (chosen.k, chosen.lam, chosen.decoder) == (best["k"], best["lam"], best["decoder"])
    assert (shared.k, shared.lam) == (loaded.inference.k, loaded.inference.lam) and shared.lam != 3.0  # a keeps the shared ones
    assert loaded.settings(InferenceOptions(treebank="b", lam=7.0)).lam == 7.0  # a run's own choice still wins
    compact = tmp_path / "shipped"
    assert runner.invoke(app, ["export", str(model), str(compact)]).exit_code == 0
    assert load_model(compact).settings(InferenceOptions(treebank="b")) == chosen  # the export keeps them


def test_a_run_of_the_same_treebanks_starts_from_a_model_of_several(joint: Path, tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(joint / "model", model)
    save_inference(model, InferenceOptions(decoder="mst"), {"rule": "a test"}, treebank="b")  # saved settings do not matter
    cfg = load_config(joint.parent / "multi.toml", {"training": {"output": str(tmp_path / "next"), "init": str(model)}})
    own, given = Trainer(cfg).model.state_dict(), load_model(model, merge_adapter=False).state_dict()
    assert own.keys() == given.keys() and all(torch.equal(own[k], given[k]) for k in own)


def test_max_dev_sentences_scores_each_treebank_on_its_first_n(tmp_path: Path) -> None:
    """``[data] max_dev_sentences = N``: each treebank's dev figures come from its first N sentences (a pool of
    eighty treebanks' dev splits takes half an hour a pass); 0 reads them all."""
    data = two_treebanks(tmp_path) + "max_dev_sentences = 3\n"
    trainer = Trainer(load_config(multi_config(tmp_path, TINY_BIAFFINE, data)))
    everything = list(read_conllu(DEV))
    assert {name: [s.forms for s in dev] for name, dev in trainer.devs.items()} == {
        "a": [s.forms for s in everything[:3]], "b": [s.forms for s in everything[:3]]}
    with pytest.raises(InputFormatError, match="max_dev_sentences"):
        load_config(multi_config(tmp_path, TINY_BIAFFINE, two_treebanks(tmp_path) + "max_dev_sentences = -1\n"))


def test_a_run_trains_on_the_treebanks_it_names_and_keeps_every_label(joint: Path, tmp_path: Path) -> None:
    """``[data] train_treebanks``: a model of several treebanks fine-tuned for one (issue 46's per-treebank step):
    an epoch samples that treebank's sentences alone and dev scores it alone, while every treebank still gives the
    labels and classes, so the run starts from the joint model's weights as they are."""
    cfg = load_config(joint.parent / "multi.toml", {"data": {"train_treebanks": ["b"]}, "training": {"output": str(tmp_path / "b")}})
    trainer = Trainer(cfg)
    b_train = list(read_conllu(TRAIN))
    assert list(trainer.devs) == ["b"] and len(trainer.train_feats) == len(b_train) == trainer.sizes[0]
    assert all(i < len(b_train) for batch in trainer.epoch_batches(0) for i in batch)
    assert sum(len(batch) for batch in trainer.epoch_batches(0)) == len(b_train)
    assert trainer.model.labels == load_model(joint / "model").labels  # a's labels too: the init below needs them
    started = load_config(joint.parent / "multi.toml", {
        "data": {"train_treebanks": ["b"]}, "training": {"output": str(tmp_path / "b2"), "init": str(joint / "model")}})
    own, given = Trainer(started).model.state_dict(), load_model(joint / "model", merge_adapter=False).state_dict()
    assert all(torch.equal(own[k], given[k]) for k in own)
    for value, message in ((["c"], "'c' not in \\[data\\] treebanks"), (["b", "b"], "given twice"), ([], "a list of treebank names")):
        with pytest.raises(InputFormatError, match=message):
            load_config(multi_config(tmp_path, TINY_BIAFFINE, two_treebanks(tmp_path) + f"train_treebanks = {json.dumps(value)}\n"))
    with pytest.raises(InputFormatError, match="apply to several treebanks"):
        load_config(multi_config(tmp_path, TINY_BIAFFINE, f'[data]\ntrain = "{TRAIN}"\ndev = "{DEV}"\ntrain_treebanks = ["a"]\n'))


def test_one_treebank_exports_as_a_model_of_its_own_that_parses_alike(joint: Path, tmp_path: Path) -> None:
    """``spandep export --treebank b``: b's labels, classes and weight rows only (the pool model's one language, or a
    treebank fine-tuned apart, as a small folder), the same parses as the model's as b, and parsed as b untold."""
    full_out, one_out, source = tmp_path / "full", tmp_path / "b", tmp_path / "source"
    shutil.copytree(joint / "model", source)
    dev_b = tmp_path / "b-dev.conllu"
    write_conllu([relabelled(s) for s in read_conllu(DEV)], dev_b)
    assert runner.invoke(app, ["calibrate", str(source), str(dev_b), "--treebank", "b", "--write"]).exit_code == 0  # b's own mapping
    saved = read_model_config(source)
    saved["model"]["heads"]["lemma"]["treebank_dictionaries"] = {t: {"language": "en", "mode": "prefer"} for t in ("a", "b")}
    write_model_config(source, saved)
    assert runner.invoke(app, ["export", str(source), str(full_out), "--full"]).exit_code == 0
    result = runner.invoke(app, ["export", str(source), str(one_out), "--full", "--treebank", "b"])
    assert result.exit_code == 0, result.output
    config = json.loads((one_out / "config.json").read_text())["model"]
    model, cut = load_model(source), load_model(one_out)
    assert config["calibration"]["treebanks"] == {"b": model.calibration.to_dict()["treebanks"]["b"]}
    b_labels = {r for s in read_conllu(DEV) for r in relabelled(s).deprels} | {r for s in read_conllu(TRAIN) for r in relabelled(s).deprels}
    assert config["treebanks"]["names"] == ["b"] and set(cut.labels) <= b_labels < set(model.labels)
    assert "xpos" not in cut.heads and set(cut.heads) == set(model.heads) - {"xpos"}  # b has no XPOS: nothing to keep
    assert len(cut.heads["upos"].tags) < len(model.heads["upos"].tags) or model.heads["upos"].tags == cut.heads["upos"].tags
    assert cut.heads["lemma"].treebank_lexicons == {"b": model.heads["lemma"].treebank_lexicons["b"]}  # b's (no kin: no language)
    assert cut.heads["lemma"].treebank_dictionaries == {"b": {"language": "en", "mode": "prefer"}}  # b's dictionary only
    assert sorted(p.name for p in (one_out / "tokenizers").iterdir()) == ["b"]
    size = {f: sum(p.stat().st_size for p in (f / "model.safetensors",)) for f in (full_out, one_out)}
    assert size[one_out] < size[full_out]
    blank = [replace(s, words=[replace(w, xpos="_", upos="_", lemma="_", feats="_") for w in s.words]) for s in read_conllu(DEV)]
    ours = list(parse_stream(model, blank, InferenceOptions(treebank="b")))
    theirs = list(parse_stream(cut, blank, InferenceOptions()))  # its one treebank, untold: its settings and calibration
    for a, b in zip(ours, theirs):
        assert [(w.head, w.deprel, w.upos, w.xpos, w.feats, w.lemma) for w in a.words] == [(w.head, w.deprel, w.upos, w.xpos, w.feats, w.lemma) for w in b.words]
        assert np.allclose([w.head_prob for w in a.words], [w.head_prob for w in b.words], atol=1e-5)  # b's calibration
    nlp = spandep.load(one_out)  # a folder path: parsed as its one treebank, with its tokenizer and settings
    assert nlp.options.treebank == "b" and isinstance(nlp.tokenizer, TrainedTokenizer)
    assert spandep.load(joint / "model", treebank="b").options.treebank == "b" and spandep.load(full_out, treebank="a")
    for args, message in ((["--treebank", "c"], "'c' is not one of this model's: a, b"),):
        result = runner.invoke(app, ["export", str(joint / "model"), str(tmp_path / "no"), *args])
        assert result.exit_code == 2 and message in result.output and not (tmp_path / "no").exists()


def test_several_treebanks_export_as_a_model_that_parses_each_alike(joint: Path, tmp_path: Path) -> None:
    """``spandep export --treebank b --treebank a``: the classes of both, each treebank's allowed ids renumbered to
    them, each parsed as the model parses it."""
    out = tmp_path / "ab"
    result = runner.invoke(app, ["export", str(joint / "model"), str(out), "--full", "--treebank", "b", "--treebank", "a"])
    assert result.exit_code == 0, result.output
    model, cut = load_model(joint / "model"), load_model(out)
    assert cut.treebanks.names == ["a", "b"] and sorted(p.name for p in (out / "tokenizers").iterdir()) == sorted(p.name for p in (joint / "model" / "tokenizers").iterdir())
    assert cut.labels == model.labels and cut.treebanks.allowed == model.treebanks.allowed  # both keep every label
    blank = [replace(s, words=[replace(w, xpos="_", upos="_", lemma="_", feats="_") for w in s.words]) for s in read_conllu(DEV)]
    for treebank in ("a", "b"):
        ours = list(parse_stream(model, blank, InferenceOptions(treebank=treebank)))
        theirs = list(parse_stream(cut, blank, InferenceOptions(treebank=treebank)))
        for x, y in zip(ours, theirs):
            assert [(w.head, w.deprel, w.upos, w.xpos, w.feats, w.lemma) for w in x.words] == [(w.head, w.deprel, w.upos, w.xpos, w.feats, w.lemma) for w in y.words]
            assert np.allclose([w.head_prob for w in x.words], [w.head_prob for w in y.words], atol=1e-5)


def test_a_model_of_one_treebank_is_not_cut(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", str(tiny_models["span"]), str(tmp_path / "no"), "--treebank", "a"])
    assert result.exit_code == 2 and "trained on one treebank" in result.output and not (tmp_path / "no").exists()
