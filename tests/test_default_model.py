"""The shipped default model loads offline (frozen weights from the base package) and gives sensible trees."""

import pytest

from spandep.data.sentence import Sentence
from spandep.data.trees import is_valid_tree
from spandep.storage.catalogue import default_model
from spandep.storage.model_io import load_model, resolve_model_dir
from spandep.pipeline.predict import parse_stream


@pytest.mark.slow
def test_default_model_parses_offline(monkeypatch):
    monkeypatch.delenv("SPANDEP_MODEL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = default_model().folder
    assert resolve_model_dir(None) == folder == resolve_model_dir("en")
    model = load_model(folder)
    assert model.config["compact"]["from_base"], "the shipped model leaves frozen base weights out"
    [parsed] = parse_stream(model, [Sentence.from_tokens("The dog chased the cat .".split())])
    assert is_valid_tree(parsed.heads)
    assert parsed.heads == [2, 3, 0, 5, 3, 3]
    assert parsed.deprels == ["det", "nsubj", "root", "det", "obj", "punct"]
