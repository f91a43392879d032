"""Output formats: JSON Lines and displaCy pictures (SVG, HTML), as functions and through ``spandep parse``."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import DEV
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.data.writers import displacy_parse, sentence_record, tree_svg, write_sentences
from spandep.tokenization.inputs import read_input

runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}svg"


def parsed(forms: list[str], heads: list[int], deprels: list[str], comments: list[str] | None = None) -> Sentence:
    s = Sentence.from_tokens(forms)
    for w, h, r in zip(s.words, heads, deprels):
        w.head, w.deprel = h, r
    s.comments = comments or []
    return s


SENT = parsed(["I", "saw", "<her>"], [2, 0, 2], ["nsubj", "root", "obj"], ["# sent_id = s1", "# text = I saw <her>"])


def test_sentence_record():
    tagged = parsed(["I", "saw", "<her>"], [2, 0, 2], ["nsubj", "root", "obj"], ["# sent_id = s1", "# text = I saw <her>"])
    tagged.words[1].upos, tagged.words[1].lemma, tagged.words[1].feats = "VERB", "see", "Tense=Past"
    nothing = [None, None, None]
    assert sentence_record(tagged) == {
        "id": "s1", "text": "I saw <her>", "tokens": ["I", "saw", "<her>"], "heads": [2, 0, 2],
        "deprels": ["nsubj", "root", "obj"], "upos": [None, "VERB", None], "xpos": nothing,
        "feats": [None, "Tense=Past", None], "lemmas": [None, "see", None],
    }
    assert set(sentence_record(Sentence.from_tokens(["x"]))) == {"tokens", "heads", "deprels", "upos", "xpos", "feats", "lemmas"}


def test_confidence_in_jsonl_and_in_misc_on_request():
    s = parsed(["I", "saw", "<her>"], [2, 0, 2], ["nsubj", "root", "obj"])
    for w, p in zip(s.words, (0.5, 0.25, 1.0)):
        w.head_prob, w.label_prob = p, 1.0
    s.words[0].misc = "SpaceAfter=No"
    s.confidence = 0.58333333
    record = sentence_record(s)
    assert record["head_probs"] == [0.5, 0.25, 1.0] and record["label_probs"] == [1.0] * 3 and record["confidence"] == 0.5833
    plain = io.StringIO()
    write_sentences([s], plain)
    assert "HeadProb" not in plain.getvalue() and "confidence" not in plain.getvalue()
    marked = io.StringIO()
    write_sentences([s], marked, confidence=True)
    lines = marked.getvalue().splitlines()
    assert lines[0] == "# confidence = 0.5833"
    assert lines[1].split("\t")[9] == "SpaceAfter=No|HeadProb=0.5000|LabelProb=1.0000"
    assert lines[2].split("\t")[9] == "HeadProb=0.2500|LabelProb=1.0000"


def test_displacy_parse_arcs_point_from_head_to_dependent():
    parse = displacy_parse(SENT)
    assert parse["arcs"] == [
        {"start": 0, "end": 1, "label": "nsubj", "dir": "left"},
        {"start": 1, "end": 2, "label": "obj", "dir": "right"},
    ]
    assert [w["text"] for w in parse["words"]] == ["I", "saw", "<her>"]  # displaCy escapes words itself
    assert parse["title"] == "s1: I saw &lt;her&gt;"
    assert displacy_parse(parsed(["Go"], [0], ["root"]))["title"] is None


def test_svg_stacks_one_tree_per_sentence(tmp_path):
    pytest.importorskip("spacy")
    other = parsed(["Go", "!"], [0, 1], ["root", "punct"])
    out = tmp_path / "trees.svg"
    write_sentences([SENT, other], out, "svg")
    root = ET.parse(out).getroot()  # well-formed XML
    inner = root.findall(SVG)
    assert root.tag == SVG and len(inner) == 2
    assert float(inner[1].get("y")) > float(inner[0].get("height"))
    assert float(root.get("height")) == float(inner[1].get("y")) + float(inner[1].get("height"))
    labels = [e.text for e in root.iter("{http://www.w3.org/2000/svg}text") if e.get("class") == "displacy-label"]
    assert labels == ["nsubj", "obj", "punct"]
    captions = [e for e in root.findall("{http://www.w3.org/2000/svg}text")]
    assert [c.text for c in captions] == ["s1: I saw <her>", None]  # a sentence without id or text has an empty one
    assert float(captions[0].get("y")) < float(inner[0].get("y"))
    assert "&lt;her&gt;" in out.read_text()


def chain(forms: list[str]) -> Sentence:
    """Each word depends on the one before it."""
    return parsed(forms, list(range(len(forms))), ["root"] + ["dep"] * (len(forms) - 1))


def test_tree_width_follows_the_words():
    pytest.importorskip("spacy")
    from spacy import displacy

    short, long = chain(["a"] * 60), chain(["considerable"] * 60)
    displacy_width = float(_width(displacy.render(displacy_parse(short), style="dep", manual=True)))
    widths = {name: tree_svg(s)[1] for name, s in (("short", short), ("long", long))}
    print(f"60-word sentence: displaCy {displacy_width:g} px; now {widths['short']:g} px ('a'), {widths['long']:g} px ('considerable')")
    assert displacy_width == 50 + 60 * 175  # displaCy's fixed step
    assert widths["short"] < displacy_width / 3 and widths["long"] > 2 * widths["short"]
    svg = tree_svg(chain(["a", "considerable", "b", "c"]))[0]
    x = [float(v) for v in re.findall(r'class="displacy-word" fill="currentColor" x="([0-9.]+)"', svg)]
    steps = [b - a for a, b in zip(x, x[1:])]
    assert len(x) == 4 and min(steps[0], steps[1]) > steps[2] + 20  # the long word takes more room
    assert float(_width(svg)) == tree_svg(chain(["a", "considerable", "b", "c"]))[1]


def _width(svg: str) -> str:
    match = re.search(r'width="([0-9.]+)"', svg)
    assert match is not None
    return match.group(1)


def test_labels_are_level_under_the_top_of_their_arcs_and_ids_are_numbered():
    pytest.importorskip("spacy")
    svg = tree_svg(SENT, 7)[0]
    assert svg == tree_svg(SENT, 7)[0] and 'id="spandep-tree7-0"' in svg and "textPath" not in svg  # displaCy's ids are random
    arcs = re.findall(r'd="M([0-9.]+),([0-9.]+) C[0-9.]+,([0-9.]+) ([0-9.]+),', svg)
    labels = re.findall(r'<text class="displacy-label" x="([0-9.]+)" y="([0-9.]+)"', svg)
    assert len(arcs) == len(labels) == 2
    for (x0, y0, c, x3), (x, y) in zip(arcs, labels):  # the middle of the Bézier curve
        assert float(x) == pytest.approx((float(x0) + float(x3)) / 2, abs=0.01)
        assert float(y) == pytest.approx(0.25 * float(y0) + 0.75 * float(c), abs=0.01)


def test_lemmas_get_a_line_and_features_a_tooltip():
    pytest.importorskip("spacy")
    sentence = parsed(["I", "saw", "her"], [2, 0, 2], ["nsubj", "root", "obj"])
    plain_svg, _, plain_height = tree_svg(sentence)
    sentence.words[1].lemma, sentence.words[1].feats = "see", "Tense=Past"
    svg, _, height = tree_svg(sentence)
    assert "displacy-lemma" not in plain_svg and "<title>" not in plain_svg
    assert re.findall(r'class="displacy-lemma"[^>]*>([^<]*)<', svg) == ["", "see", ""] and "<title>Tense=Past</title>" in svg
    assert height == plain_height + 32 and f"height: {height:g}px" in svg


def test_arcs_stay_on_their_words():
    pytest.importorskip("spacy")
    sentence = parsed(["She", "quickly", "ran", "home", "."], [3, 3, 0, 3, 3], ["nsubj", "advmod", "root", "obj", "punct"])
    svg = tree_svg(sentence)[0]
    x = [float(v) for v in re.findall(r'class="displacy-word" fill="currentColor" x="([0-9.]+)"', svg)]
    paths = re.findall(r'class="displacy-arc" id="[^"]*" stroke-width="[^"]*" d="M([0-9.]+),[^ ]* C[^ ]* [^ ]* ([0-9.]+),', svg)
    arcs = displacy_parse(sentence)["arcs"]
    assert len(paths) == len(arcs) == 4
    for arc, (start, end) in zip(arcs, paths):  # each arc runs from its start word to its end word
        assert abs(float(start) - x[arc["start"]]) < abs(float(start) - x[arc["start"] + 1])
        assert abs(float(end) - x[arc["end"]]) < abs(float(end) - x[arc["end"] - 1])


def test_html_is_one_page_with_a_figure_per_tree(tmp_path):
    pytest.importorskip("spacy")
    out = tmp_path / "trees.html"
    write_sentences([SENT, SENT], out, "html")
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<figure") == 2 and page.count("<svg") == 2
    assert "I saw &lt;her&gt;</h2>" in page
    assert page.count('<div style="overflow-x: auto">') == 2  # a wide tree scrolls sideways


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        write_sentences([SENT], "-", "xml")


@pytest.fixture(scope="module")
def model(tiny_models) -> str:
    return str(tiny_models["biaffine"])


def test_cli_jsonl_matches_conllu(tmp_path, model):
    conllu, jsonl = tmp_path / "p.conllu", tmp_path / "p.jsonl"
    for out, fmt in ((conllu, "conllu"), (jsonl, "jsonl")):
        result = runner.invoke(app, ["parse", str(DEV), "-o", str(out), "--model", model, "--output-format", fmt])
        assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    for r in records:  # the confidence is not in plain CoNLL-U
        assert len(r.pop("head_probs")) == len(r.pop("label_probs")) == len(r["tokens"]) and 0 <= r.pop("confidence") <= 1
    assert records == [sentence_record(s) for s in read_conllu(conllu)]
    assert records[0]["id"] == next(read_conllu(DEV)).comment("sent_id")


def test_cli_pictures(tmp_path, model):
    pytest.importorskip("spacy")
    text = tmp_path / "raw.txt"
    text.write_text("The dog barked. It ran away.\n")
    svg = tmp_path / "out.svg"
    result = runner.invoke(app, ["parse", str(text), "-f", "text", "--output-format", "svg", "-o", str(svg), "--model", model])
    assert result.exit_code == 0, result.output
    assert len(ET.parse(svg).getroot().findall(SVG)) == 2
    result = runner.invoke(app, ["parse", str(text), "-f", "text", "--output-format", "html", "--model", model])
    assert result.exit_code == 0 and result.output.count("<figure") == 2
    assert [s.forms for s in read_input(text, "text")] == [["The", "dog", "barked", "."], ["It", "ran", "away", "."]]


def test_cli_output_errors(tmp_path, model):
    result = runner.invoke(app, ["parse", str(DEV), "--model", model, "--output-format", "xml"])
    assert result.exit_code == 2 and "use one of conllu, jsonl, svg, html" in result.output
    result = runner.invoke(app, ["parse", str(DEV), "--model", model, "--output-format", "svg", "-o", str(tmp_path / "no" / "x.svg")])
    assert result.exit_code == 4 and "does not exist" in result.output


def test_cli_pictures_without_spacy_say_what_to_install(monkeypatch, model):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "spacy" else find_spec(name, *a))
    result = runner.invoke(app, ["parse", str(DEV), "--model", model, "--output-format", "html"])
    message = " ".join(result.output.replace("│", " ").split())  # unwrap typer's error box
    assert result.exit_code == 2 and "pictures need spaCy: pip install 'spandep[spacy]'" in message
