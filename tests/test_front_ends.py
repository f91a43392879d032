"""One entry point: a tiny model of two treebanks parses each treebank the same through every front end (the API by
name and by folder, ``spandep parse`` in one process and with workers, the service, Ray, spaCy), and per-call
settings keep the pipeline's treebank; ``spandep parse`` resolves a model's name once."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from conftest import DEV, TINY_SPAN
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import spandep
from spandep.api import ModelSpec, Pipeline
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.options import InferenceOptions
from spandep.storage import catalogue, model_io
from spandep.serve.app import create_app
from spandep.serve.service import Service, ServiceSettings, render
from spandep.training.config import load_config
from spandep.training.trainer import Trainer
from test_tokenization import tiny_tokenizer
from test_treebanks import multi_config, two_treebanks

pytestmark = pytest.mark.slow  # trains a two-treebank model, starts workers, Ray and a service

runner = CliRunner()
TREEBANKS = ("a", "b")
BATCH = ServiceSettings().batch_tokens  # every front end parses with the service's batch size


@pytest.fixture(scope="module")
def joint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a tiny span model trained on treebanks ``a`` and ``b`` (each with a tokenizer), also shipped
    under the names ``tiny-a`` and ``tiny-b`` (a catalogue of this test's own: the names carry the treebanks)."""
    root = tmp_path_factory.mktemp("front_ends")
    tiny_tokenizer().save(root / "tokenizer", {"note": "random weights, for tests"})
    Trainer(load_config(multi_config(root, TINY_SPAN, two_treebanks(root, root / "tokenizer")))).run()
    folder = root / "run" / "model"
    lines = {f"tiny-{tb}": {"folder": str(folder), "language": "English", "treebank": tb, "model_treebank": tb} for tb in TREEBANKS}
    (root / "catalogue.json").write_text(json.dumps({"default": "tiny-a", "models": lines}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(catalogue, "CATALOGUE_FILE", root / "catalogue.json")
        yield folder


def expected(joint: Path, treebank: str, **settings) -> str:
    """CoNLL-U of DEV parsed through the API, by folder and treebank: what every front end must write."""
    nlp = spandep.load(joint, treebank=treebank, batch_tokens=BATCH, **settings)
    return render(nlp.parse_file(DEV).data, "conllu")


@pytest.fixture(scope="module")
def reference(joint: Path) -> dict[str, str]:
    parsed = {tb: expected(joint, tb) for tb in TREEBANKS}
    assert parsed["a"] != parsed["b"]  # the treebanks' labels differ, so the comparisons below can tell them apart
    assert "b_" in parsed["b"] and "b_" not in parsed["a"]
    return parsed


@pytest.mark.parametrize("treebank", TREEBANKS)
def test_the_api_by_name_and_by_folder(joint: Path, reference: dict[str, str], treebank: str) -> None:
    by_name = spandep.load(f"tiny-{treebank}", batch_tokens=BATCH)
    assert by_name.options.treebank == treebank and by_name.spec is not None and by_name.spec.folder == joint
    assert render(by_name.parse_file(DEV).data, "conllu") == reference[treebank]
    sentences = list(read_conllu(DEV))
    assert render(list(by_name.parse_sentences(sentences)), "conllu") == reference[treebank]
    assert [s.deprels for s in by_name.parse_tokens([s.forms for s in sentences]).data] == [
        s.deprels for s in spandep.load(joint, treebank=treebank, batch_tokens=BATCH).parse_tokens([s.forms for s in sentences]).data
    ]


@pytest.mark.parametrize("treebank", TREEBANKS)
def test_per_call_settings_keep_the_pipelines_treebank(joint: Path, treebank: str) -> None:
    nlp = spandep.load(f"tiny-{treebank}", batch_tokens=BATCH)
    assert nlp.options_for(k=1, decoder="mst").treebank == treebank
    assert render(nlp.parse_file(DEV, k=1, decoder="mst").data, "conllu") == expected(joint, treebank, k=1, decoder="mst")
    assert render(nlp.parse_file(DEV).data, "conllu") == expected(joint, treebank)  # the call's settings were its own
    with pytest.raises(ValueError, match="treebank 'c' is not one of this model's: a, b"):
        nlp.parse_file(DEV, treebank="c")


@pytest.mark.parametrize("treebank", TREEBANKS)
@pytest.mark.parametrize("how", [[], ["--workers", "2"]], ids=["one process", "workers"])
def test_spandep_parse(joint: Path, reference: dict[str, str], treebank: str, how: list[str], tmp_path: Path) -> None:
    for model in (["--model", f"tiny-{treebank}"], ["--model", str(joint), "--treebank", treebank]):
        out = tmp_path / "out.conllu"
        result = runner.invoke(app, ["parse", str(DEV), *model, "-o", str(out), "--batch-tokens", str(BATCH), *how])
        assert result.exit_code == 0, result.output
        assert out.read_text(encoding="utf-8") == reference[treebank]


def test_spandep_parse_resolves_the_models_name_once(joint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    resolve = model_io.resolve_model
    monkeypatch.setattr(model_io, "resolve_model", lambda model: calls.append(model) or resolve(model))
    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat. It slept.\n", encoding="utf-8")
    result = runner.invoke(app, ["parse", str(text), "--model", "tiny-b", "--input-format", "text", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert [str(c) for c in calls] == ["tiny-b"]


def test_a_spec_pickles_without_a_live_model(joint: Path) -> None:
    spec = ModelSpec.resolve("tiny-b", threads=1)
    assert spec == ModelSpec(joint, InferenceOptions(treebank="b"), threads=1)
    assert pickle.loads(pickle.dumps(spec)) == spec and len(pickle.dumps(spec)) < 1000
    nlp = spec.load()
    assert isinstance(nlp, Pipeline) and nlp.options.treebank == "b" and nlp.worker_spec(nlp.options_for(k=1)).options.k == 1


@pytest.mark.parametrize("treebank", TREEBANKS)
def test_the_service_parses_each_treebank_as_the_api_does(joint: Path, reference: dict[str, str], treebank: str) -> None:
    service = Service.load([f"tiny-{tb}" for tb in TREEBANKS], ServiceSettings(), threads=1)
    data = DEV.read_text(encoding="utf-8")
    with TestClient(create_app(service), base_url="http://127.0.0.1") as http:
        answer = http.post("/parse", json={"data": data, "model": f"tiny-{treebank}", "input": "conllu", "output": "conllu"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"] == reference[treebank]
        answer = http.post("/parse", json={"data": data, "model": f"tiny-{treebank}", "input": "conllu", "output": "conllu", "k": 1})
        assert answer.status_code == 200 and answer.json()["result"] == expected(joint, treebank, k=1)  # the request's k, the model's treebank
        udpipe = http.post("/process", data={"data": data, "model": f"tiny-{treebank}", "input": "conllu", "parser": ""})  # the given tags kept
        assert udpipe.status_code == 200 and udpipe.json()["result"] == reference[treebank]


def test_ray_parses_each_treebank_as_the_api_does(joint: Path) -> None:
    ray = pytest.importorskip("ray")
    from spandep.integrations.ray_data import parse_dataset

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        sentences = list(read_conllu(DEV))
        rows = [{"id": i, "tokens": s.forms} for i, s in enumerate(sentences)]
        for treebank in TREEBANKS:
            api = spandep.load(joint, treebank=treebank).parse_tokens([s.forms for s in sentences]).data
            out = sorted(parse_dataset(ray.data.from_items(rows), f"tiny-{treebank}", actors=1).take_all(), key=lambda r: r["id"])
            assert [list(r["deprels"]) for r in out] == [s.deprels for s in api]
            assert [[int(h) for h in r["heads"]] for r in out] == [s.heads for s in api]
    finally:
        ray.shutdown()


@pytest.mark.parametrize("treebank", TREEBANKS)
def test_spacy_parses_each_treebank_as_the_api_does(joint: Path, treebank: str) -> None:
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc

    sentences = list(read_conllu(DEV))
    api = spandep.load(joint, treebank=treebank).parse_tokens([s.forms for s in sentences]).data
    for config in ({"model": f"tiny-{treebank}"}, {"model": str(joint), "treebank": treebank}):
        nlp = spacy.blank("en")
        nlp.add_pipe("spandep", config=config)
        words = [f for s in sentences for f in s.forms]
        starts = [i == 0 for s in sentences for i in range(len(s))]
        doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
        deps = [t.dep_ for t in doc]
        assert deps == [r for s in api for r in s.deprels]
        heads = [[0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent] for sent in doc.sents]
        assert heads == [s.heads for s in api]
