"""Enhanced graphs through the front ends (``parse --enhanced``, ``enhanced=True`` in the API, JSON's ``deps``), and
the fill rule: without the option the input's DEPS is not touched by the enhancement."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import DEV
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.enhancement import enhance

runner = CliRunner()


@pytest.mark.slow  # child processes (--workers 2)
def test_parse_enhanced_writes_the_rules_graph_over_the_parse(tmp_path, tiny_models) -> None:
    plain, enhanced, workers = tmp_path / "plain.conllu", tmp_path / "enhanced.conllu", tmp_path / "workers.conllu"
    for out, flags in ((plain, []), (enhanced, ["--enhanced"]), (workers, ["--enhanced", "--workers", "2"])):
        result = runner.invoke(app, ["parse", str(DEV), "-o", str(out), "--model", str(tiny_models["biaffine"]), *flags])
        assert result.exit_code == 0, result.output
    assert workers.read_text(encoding="utf-8") == enhanced.read_text(encoding="utf-8")  # the option reaches the workers
    gold, before, after = (list(read_conllu(p)) for p in (DEV, plain, enhanced))
    assert any(s.extra_lines for s in gold) and any("." in line.split("\t")[0] for s in gold for _, line in s.extra_lines)
    for g, b, a in zip(gold, before, after):
        assert (b.heads, b.deprels) == (a.heads, a.deprels)  # the same parse
        assert [w.deps for w in a.words] == [w.deps for w in enhance(b).words]
        assert all(f"{w.head}:{w.deprel.split(':')[0]}" in w.deps for w in a.words)  # the basic arc is in the graph
        assert [e for e in a.extra_lines if "." in e[1].split("\t")[0]] == []  # the input's empty nodes replaced
        assert [e for e in a.extra_lines if "-" in e[1].split("\t")[0]] == [e for e in g.extra_lines if "-" in e[1].split("\t")[0]]
        if (g.heads, g.deprels) == (b.heads, b.deprels):  # without the option the fill rule keeps a given DEPS
            assert [w.deps for w in b.words] == [w.deps for w in g.words]


def test_api_and_json_expose_deps(tiny_models) -> None:
    import spandep

    nlp = spandep.load(tiny_models["biaffine"], threads=1)
    words = [["She", "came", "and", "saw", "the", "cat", "."]]
    plain = nlp.parse_tokens(words)
    doc = nlp.parse_tokens(words, enhanced=True)
    assert [w.deps for w in plain.words] == ["_"] * 7 and "deps" not in plain.to_json()[0]
    assert [w.deps for w in doc.words] == [w.deps for w in enhance(plain.data[0]).words]
    assert json.loads(json.dumps(doc.to_json()))[0]["deps"] == [w.deps for w in doc.words]
    assert [w.deps for w in spandep.load(tiny_models["biaffine"], threads=1, enhanced=True).parse_tokens(words).words] == [
        w.deps for w in doc.words
    ]


@pytest.mark.slow  # a live server
def test_the_service_parse_endpoint_takes_enhanced(tiny_models, tmp_path) -> None:
    import httpx
    from serve_live import live_server

    from spandep.serve.service import Service, ServiceSettings

    tiny = str(tiny_models["biaffine"])
    text = "She came and saw the cat."
    with live_server(Service.load([tiny], ServiceSettings(), threads=1)) as url:
        answers = [httpx.post(f"{url}/parse", json={"data": text, "output": "conllu", **extra}, timeout=60).json()
                   for extra in ({}, {"enhanced": True})]
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "out.conllu"
    result = runner.invoke(app, ["parse", str(source), "-f", "text", "-o", str(out), "--model", tiny, "--enhanced",
                                 "--batch-tokens", str(ServiceSettings().batch_tokens)])
    assert result.exit_code == 0, result.output
    assert answers[1]["result"] == out.read_text(encoding="utf-8")  # what spandep parse --enhanced writes
    assert "deps" not in answers[0]["sentences"][0] and answers[1]["sentences"][0]["deps"][0] != "_"
