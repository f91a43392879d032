"""The Biaffine twin of ``benchmarks/scripts/twin_speed.py``: a span model's encoder, heads and word-level scorer as a
Biaffine parser, which parses every sentence into a tree and fills the heads' columns as the span model does."""

from __future__ import annotations

import pytest

from benchmarks.scripts.twin_speed import twin_of
from conftest import DEV, TINY_SPAN, write_config
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_valid_tree
from spandep.models.biaffine import BiaffineParser
from spandep.storage.model_io import load_model
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

HEADS = "\n[heads.upos]\n\n[heads.lemma]\nchars = 6\ncontext = 4\n"


def _trained(tmp_path, model: str):
    Trainer(load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=model, epochs=1))).run()
    return load_model(tmp_path / "run" / "model")


def test_the_twin_is_the_span_models_parts_as_a_biaffine_parser(tmp_path) -> None:
    span = _trained(tmp_path, TINY_SPAN + "word_scorer = { arc_mlp = 16, rel_mlp = 8 }\n" + HEADS)
    twin = twin_of(span)
    assert isinstance(twin, BiaffineParser)
    assert twin.encoder is span.encoder and twin.scorer is span.word_scorer and twin.heads is span.heads
    assert twin.inference.decoder == span.inference.decoder and twin.inference.precision == span.inference.precision
    sentences = list(read_conllu(DEV))[:30]
    by_twin, by_span = twin.parse(sentences), span.parse(sentences)
    for sentence, parse in zip(sentences, by_twin):
        assert len(parse.heads) == len(sentence) and is_valid_tree(parse.heads)
    assert [p.columns for p in by_twin] == [p.columns for p in by_span]  # the same heads over the same vectors


def test_a_span_model_without_a_word_scorer_has_no_twin(tmp_path) -> None:
    with pytest.raises(SystemExit, match="no word-level Biaffine scorer"):
        twin_of(_trained(tmp_path, TINY_SPAN))


def test_the_document_holds_the_table_the_script_writes() -> None:
    from benchmarks.scripts import twin_speed
    from benchmarks.suite.systems import REPO

    text = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    written = text[text.index(twin_speed.BEGIN) + len(twin_speed.BEGIN) + 1: text.index(twin_speed.END)]
    assert written == twin_speed.render(), "BENCHMARKS.md is out of date: run python -m benchmarks.scripts.twin_speed table --doc BENCHMARKS.md"
