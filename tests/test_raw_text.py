"""Raw text through a model folder: its trained tokenizer is copied in by training, kept when the folder is saved
again, carried by ``spandep export``, and used by ``spandep.load()`` and ``spandep parse -f text``."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

import spandep
from conftest import write_config
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.errors import InputFormatError
from spandep.storage.model_io import load_model, save_model
from spandep.tokenization import RuleTokenizer
from spandep.tokenization.corpus import lossless_problems
from spandep.tokenization.trained import TrainedTokenizer
from spandep.training.config import load_config
from spandep.training.trainer import Trainer
from test_tokenization import tiny_tokenizer

TEXT = "Don't stop. We've e-mailed Dr. Smith at x_y@b.org!\n\nA new paragraph, with a URL www.test-site.org."


@pytest.fixture()
def tokenizer_dir(tmp_path):
    folder = tmp_path / "tok"
    tiny_tokenizer().save(folder, {"note": "random weights, for tests"})
    return folder


@pytest.mark.slow
def test_a_model_folder_keeps_ships_and_uses_its_tokenizer(tiny_models, tokenizer_dir, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(tiny_models["biaffine"], model)
    save_model(load_model(model), model, tokenizer=tokenizer_dir)
    assert (model / "tokenizer" / "config.json").is_file()
    save_model(load_model(model), model)  # written again without naming it: kept
    assert (model / "tokenizer" / "mwt.json").is_file()

    runner = CliRunner()
    shipped = tmp_path / "shipped"
    result = runner.invoke(app, ["export", str(model), str(shipped)])
    assert result.exit_code == 0, result.output
    nlp = spandep.load(shipped)
    assert isinstance(nlp.tokenizer, TrainedTokenizer)
    doc = nlp(TEXT)
    assert lossless_problems(TEXT, doc.data) == []
    assert all(w.head is not None for s in doc.data for w in s.words)

    raw = tmp_path / "raw.txt"
    raw.write_text(TEXT, encoding="utf-8")
    for choice, expected in (("model", nlp.tokenizer), ("rules", RuleTokenizer()), (str(tokenizer_dir), nlp.tokenizer)):
        out = tmp_path / f"out-{len(choice)}.conllu"
        result = runner.invoke(app, ["parse", str(raw), "-f", "text", "--tokenizer", choice, "--model", str(shipped), "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert [s.forms for s in read_conllu(out)] == [s.forms for s in expected.tokenize(TEXT)]
    result = runner.invoke(app, ["parse", str(raw), "-f", "text", "--tokenizer", str(tmp_path / "none"), "--model", str(shipped)])
    assert result.exit_code == 2 and "--tokenizer" in result.output


def test_export_ships_a_tokenizer_trained_after_the_model(tiny_models, tokenizer_dir, tmp_path):
    assert not (tiny_models["span"] / "tokenizer").exists()
    runner = CliRunner()
    shipped = tmp_path / "shipped"
    result = runner.invoke(app, ["export", str(tiny_models["span"]), str(shipped), "--tokenizer", str(tokenizer_dir)])
    assert result.exit_code == 0, result.output
    shipped_config = json.loads((shipped / "tokenizer" / "config.json").read_text(encoding="utf-8"))
    assert shipped_config == json.loads((tokenizer_dir / "config.json").read_text(encoding="utf-8"))  # packed: unindented
    assert isinstance(spandep.load(shipped).tokenizer, TrainedTokenizer)
    result = runner.invoke(app, ["export", str(tiny_models["span"]), str(tmp_path / "no"), "--tokenizer", str(tmp_path)])
    assert result.exit_code == 2 and "not a tokenizer folder" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "no").exists()


@pytest.mark.slow
def test_training_copies_the_configured_tokenizer(tokenizer_dir, tmp_path):
    config = write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", epochs=1)
    config.write_text(config.read_text().replace("[data]\n", f'[data]\ntokenizer = "{tokenizer_dir}"\n', 1))
    Trainer(load_config(config)).run()
    assert isinstance(spandep.load(tmp_path / "run" / "model").tokenizer, TrainedTokenizer)
    config.write_text(config.read_text().replace(str(tokenizer_dir), str(tmp_path)))
    with pytest.raises(InputFormatError, match="not a tokenizer folder"):
        load_config(config)


@pytest.mark.parametrize("tokenizer", ["rules", "trained"])
def test_a_sentence_a_line_is_tokenized_but_never_split(tokenizer):
    split = RuleTokenizer() if tokenizer == "rules" else tiny_tokenizer()
    text = "Hello there. How are you?\nFine.\n\n  A new paragraph.  \r\nLast one\u2029After a separator."
    kept = list(split.iter_lines(text))
    if tokenizer == "rules":
        assert len(split.tokenize(text)) == 6  # the first line holds two sentences
    assert [s.comment("text") for s in kept] == ["Hello there. How are you?", "Fine.", "A new paragraph.", "Last one", "After a separator."]
    assert ["# newpar" in s.comments for s in kept] == [True, False, True, False, True]
    assert [s.line for s in kept] == [1, 2, 4, 5, 5]
    assert not lossless_problems(text, kept)  # every character in one token, offsets into the whole text
    if tokenizer != "trained":
        assert kept[0].forms == ["Hello", "there", ".", "How", "are", "you", "?"]


@pytest.mark.slow
def test_parse_lines_of_raw_text(tmp_path):
    source = tmp_path / "lines.txt"
    source.write_text("The dog barked. It ran away.\nFine.\n")
    out = tmp_path / "out.conllu"
    result = CliRunner().invoke(app, ["parse", str(source), "-f", "lines", "-o", str(out)])
    assert result.exit_code == 0, result.output
    parsed = list(read_conllu(out))
    assert [s.comment("text") for s in parsed] == ["The dog barked. It ran away.", "Fine."]
    assert [w.head for w in parsed[0].words].count(0) == 1  # one tree over both clauses
    doc = spandep.load().parse_file(source, "lines")
    assert doc.text == source.read_text() and [len(s) for s in doc] == [len(s) for s in parsed]
