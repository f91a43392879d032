"""``spandep serve`` over HTTP: UDPipe 2's API (with a real UDPipe client, udapi), the JSON endpoint, errors, and the
answers checked against what ``spandep parse`` writes for the same data and options (the shipped model)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from serve_live import live_server
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.serve.service import Service, ServiceSettings

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "examples" / "demo.txt"
MAX_BYTES = 20_000
UDPIPE = {"tokenizer": "", "tagger": "", "parser": ""}  # raw text in, tagged and parsed CoNLL-U out


@pytest.fixture(scope="module")
def served(tiny_models):
    """The shipped model (the default) and a tiny Biaffine model, on a live server: ``(url, tiny model's name)``."""
    tiny = str(tiny_models["biaffine"])
    with live_server(Service.load(["en", tiny], ServiceSettings(max_bytes=MAX_BYTES), threads=1, precision="float32")) as url:
        yield url, tiny


def spandep_parse(tmp_path: Path, data: str, *options: str) -> str:
    """What ``spandep parse FILE OPTIONS`` writes for a file holding ``data``, with the server's --batch-tokens and
    --precision (float32: bfloat16 parses depend in their last digits on how sentences are batched, and the server
    batches them in turns)."""
    source = tmp_path / "input.txt"
    source.write_bytes(data.encode("utf-8"))
    out = tmp_path / "out"
    fixed = ["--batch-tokens", str(ServiceSettings().batch_tokens), "--precision", "float32"]
    result = runner.invoke(app, ["parse", str(source), "-o", str(out), *fixed, *options])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_models_and_health(served):
    url, tiny = served
    assert httpx.get(f"{url}/models").json() == {
        "models": {"en": ["tokenizer", "tagger", "parser"], tiny: ["tokenizer", "parser"]}, "default_model": "en",
    }
    health = httpx.get(f"{url}/health").json()
    assert health["status"] == "ok" and health["models"] == ["en", tiny] and health["queued"] == 0


@pytest.mark.slow
def test_process_raw_text_is_what_spandep_parse_writes(served, tmp_path):
    url, _ = served
    text = DEMO.read_text(encoding="utf-8")
    expected = spandep_parse(tmp_path, text, "--input-format", "text")
    posted = httpx.post(f"{url}/process", data={**UDPIPE, "data": text}).json()
    assert posted["result"] == expected and posted["model"] == "en" and posted["acknowledgements"]
    assert httpx.get(f"{url}/process", params={**UDPIPE, "data": text, "model": "en"}).json()["result"] == expected
    uploaded = httpx.post(f"{url}/process", data=UDPIPE, files={"data": ("demo.txt", DEMO.read_bytes())}).json()
    assert uploaded["result"] == expected


@pytest.mark.slow
def test_udapi_client(served, tmp_path):
    """udapi's UDPipe client, pointed at the server: multipart (as udpipe2_client.py sends) and form requests."""
    from udapi.core.root import Root
    from udapi.tool.udpipeonline import UDPipeOnline

    url, tiny = served
    client = UDPipeOnline(model="en", server=url)
    assert client.list_models() == ["en", tiny]
    text = "The dog barked. It ran away."
    expected = spandep_parse(tmp_path, text, "--input-format", "text")
    assert client.perform_request({**UDPIPE, "model": "en", "data": text}) == expected
    root = Root()
    root.text = text
    trees = client.tokenize_tag_parse_tree(root, resegment=True)
    assert [t.compute_text() for t in trees] == ["The dog barked.", "It ran away."]
    words = [line.split("\t") for line in expected.splitlines() if line[:1].isdigit()]
    assert [(n.form, n.upos, n.deprel) for t in trees for n in t.descendants] == [(w[1], w[3], w[7]) for w in words]
    client.tag_parse_tree(trees[1])  # pre-tokenised: input=horizontal
    assert [n.deprel for n in trees[1].descendants] == [w[7] for w in words[4:]]


@pytest.mark.slow
def test_presegmented_text_is_a_sentence_a_line(served, tmp_path):
    """UDPipe's tokenizer=presegmented (udapi's default) is spandep parse --input-format lines."""
    from udapi.core.root import Root
    from udapi.tool.udpipeonline import UDPipeOnline

    url, _ = served
    text = "The dog barked. It ran away.\nFine.\n"
    expected = spandep_parse(tmp_path, text, "--input-format", "lines")
    assert expected.count("# text = ") == 2
    answer = httpx.post(f"{url}/process", data={**UDPIPE, "tokenizer": "presegmented;ranges", "data": text}).json()
    assert answer["result"] == expected
    root = Root()
    root.text = "The dog barked. It ran away."
    [tree] = UDPipeOnline(model="en", server=url).tokenize_tag_parse_tree(root)
    assert [n.form for n in tree.descendants] == ["The", "dog", "barked", ".", "It", "ran", "away", "."]


@pytest.mark.slow
@pytest.mark.parametrize(("output", "options"), [
    ("conllu", ["--confidence"]), ("jsonl", []), ("svg", []), ("html", []),
])
def test_parse_endpoint_writes_every_format_as_spandep_parse(served, tmp_path, output, options):
    url, _ = served
    text = DEMO.read_text(encoding="utf-8")
    body = {"data": text, "output": output, "confidence": bool(options)}
    answer = httpx.post(f"{url}/parse", json=body, timeout=60).json()
    assert answer["result"] == spandep_parse(tmp_path, text, "--input-format", "text", "--output-format", output, *options)
    if output == "jsonl":
        assert answer["sentences"] == [json.loads(line) for line in answer["result"].splitlines()]


@pytest.mark.slow
def test_parse_endpoint_inputs_options_and_trees(served, tmp_path):
    url, tiny = served
    conllu = (REPO / "tests" / "fixtures" / "en_ewt_excerpt.conllu").read_text(encoding="utf-8")
    answer = httpx.post(f"{url}/parse", json={"data": conllu, "input": "conllu", "output": "conllu", "decoder": "mst", "k": 3}, timeout=60).json()
    assert answer["result"] == spandep_parse(tmp_path, conllu, "--decoder", "mst", "--k", "3")
    tokens = "I saw her .\nShe ran\n"
    answer = httpx.post(f"{url}/parse", json={"data": tokens, "input": "tokens", "model": tiny, "trees": True}).json()
    assert answer["model"] == tiny and [s["tokens"] for s in answer["sentences"]] == [["I", "saw", "her", "."], ["She", "ran"]]
    assert all(s["svg"].count('class="displacy-token"') == len(s["tokens"]) for s in answer["sentences"])
    assert "head_probs" in answer["sentences"][0] and "result" not in answer


@pytest.mark.slow
def test_tagger_and_parser_switch_their_columns(served):
    url, _ = served
    columns = {}
    for switches in ((), ("tagger",), ("parser",), ("tagger", "parser")):
        params = {"tokenizer": "", "data": "I saw her.", **{s: "" for s in switches}}
        result = httpx.post(f"{url}/process", data=params).json()["result"]
        columns[switches] = [(w[3], w[6], w[7]) for w in (line.split("\t") for line in result.splitlines() if line[:1].isdigit())]
    assert columns[()] == [("_", "_", "_")] * 4
    assert columns[("tagger",)] == [(upos, "_", "_") for upos, _, _ in columns[("tagger", "parser")]]
    assert columns[("parser",)] == [("_", head, rel) for _, head, rel in columns[("tagger", "parser")]]
    assert columns[("tagger", "parser")][1] == ("VERB", "0", "root")


@pytest.mark.parametrize(("params", "message"), [
    ({"data": "x", "input": "vertical"}, "input 'vertical' is not supported; use conllu, conllx, horizontal"),
    ({"data": "x", "tokenizer": "presegmented;normalized_spaces"}, "tokenizer option 'normalized_spaces' is not supported"),
    ({"data": "x", "output": "matxin", **UDPIPE}, "output 'matxin' is not supported; use conllu, jsonl, svg, html"),
    ({"data": "x", "model": "nosuch", **UDPIPE}, "unknown model 'nosuch'; this server has en, "),
    ({"data": "1\tI\n", "parser": ""}, "data:1: expected 10 tab-separated columns"),
    ({"parser": ""}, "no data: send the text to parse in the 'data' parameter"),
    ({"data": "a\x00b", **UDPIPE}, "data:1: control character U+0000 in the text"),
])
def test_process_errors_are_one_line(served, params, message):
    url, _ = served
    response = httpx.post(f"{url}/process", data=params)
    assert response.status_code == 400 and response.text.startswith(message) and response.text.count("\n") == 1, response.text


@pytest.mark.parametrize(("body", "message"), [
    ({"data": "x", "k": "3"}, "k: Input should be a valid integer"),
    ({"data": "x", "output": "pdf"}, "output: Input should be 'conllu', 'jsonl', 'svg' or 'html'"),
    ({"data": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
    ({"data": "x", "k": 0}, "k must be an int in [1, 64], not 0"),
    ({"data": "x", "decoder": "greedy"}, "unknown decoder 'greedy'; use mst or projective"),
    ({"data": "x", "model": "TINY", "k": 2}, "model TINY: "),
])
def test_parse_errors_are_json(served, body, message):
    url, tiny = served
    body = {k: tiny if v == "TINY" else v for k, v in body.items()}
    response = httpx.post(f"{url}/parse", json=body)
    assert response.status_code == 400 and response.json()["error"].startswith(message.replace("TINY", tiny)), response.text


def test_uploaded_files_are_read_as_spandep_parse_reads_files(served):
    url, _ = served
    utf16 = httpx.post(f"{url}/process", data=UDPIPE, files={"data": ("a.txt", "I saw her.".encode("utf-16"))})
    assert utf16.status_code == 400 and "looks like UTF-16; convert it to UTF-8 with iconv" in utf16.text
    latin1 = httpx.post(f"{url}/process", data=UDPIPE, files={"data": ("a.txt", "Café au lait.".encode("latin-1"))})
    assert latin1.status_code == 400 and latin1.text.startswith("data:1: not valid UTF-8: byte 0xe9")
    bom = httpx.post(f"{url}/process", data=UDPIPE, files={"data": ("a.txt", "\ufeffI saw her.\r\n".encode())})
    assert bom.json()["result"] == httpx.post(f"{url}/process", data={**UDPIPE, "data": "I saw her.\n"}).json()["result"]


def test_oversized_requests_are_413(served):
    url, _ = served
    big = "word " * (MAX_BYTES // 5 + 1)
    response = httpx.post(f"{url}/process", data={**UDPIPE, "data": big})
    assert response.status_code == 413 and "at most 20000 (--max-bytes)" in response.text
    body = ("data=" + "x" * (4 * MAX_BYTES)).encode()
    streamed = httpx.post(f"{url}/process", content=iter([body[i : i + 8192] for i in range(0, len(body), 8192)]),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})  # chunked: no Content-Length
    assert streamed.status_code == 413 and "--max-bytes" in streamed.text
    answer = httpx.post(f"{url}/parse", json={"data": big})
    assert answer.status_code == 413 and "--max-bytes" in answer.json()["error"]
    assert httpx.post(f"{url}/process", data={**UDPIPE, "data": "Still fine."}).status_code == 200


def test_page_and_its_files_are_served(served):
    url, _ = served
    page = httpx.get(f"{url}/")
    assert page.status_code == 200 and "<title>spandep" in page.text
    for name in ("page.js", "page.css"):
        assert httpx.get(f"{url}/static/{name}").status_code == 200
