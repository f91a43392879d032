"""Registries: an unknown name is a clear error naming the known ones, and a new encoder is one class plus one
registry line, trained, saved, loaded and parsed with through the one build path."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from conftest import DEV, TINY_SPAN, write_config
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_valid_tree
from spandep.encoders import ENCODERS, WordEncoder
from spandep.errors import InputFormatError
from spandep.models import PARSERS
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.registry import Registry, UnknownNameError
from spandep.training.config import load_config
from spandep.training.trainer import Trainer


class ToyEncoder(WordEncoder):
    """Hashed word embeddings and one linear layer: the smallest encoder there is."""

    name = "toy"
    config_defaults = {"dim": 8, "buckets": 64}

    def __init__(self, dim: int = 8, buckets: int = 64, upos_vocab: Sequence[str] | None = None) -> None:
        super().__init__()
        self.dim, self.buckets, self.out_dim = dim, buckets, dim
        self.embed = nn.Embedding(buckets + 1, dim)  # row 0: ROOT and padding
        self.mix = nn.Linear(dim, dim)

    def featurize(self, forms: list[str], upos: list[str] | None = None) -> dict[str, Any]:
        ids = [1 + zlib.crc32(f.encode()) % self.buckets for f in forms]
        return {"n_words": len(forms), "ids": np.asarray([0, *ids], dtype=np.int64)}

    def collate(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        width = 1 + max(f["n_words"] for f in features)
        ids = torch.zeros(len(features), width, dtype=torch.long)  # (batch, 1 + n)
        mask = torch.zeros(len(features), width, dtype=torch.bool)  # (batch, 1 + n)
        for b, f in enumerate(features):
            ids[b, : len(f["ids"])] = torch.from_numpy(f["ids"])
            mask[b, : len(f["ids"])] = True
        return {"ids": ids, "word_mask": mask}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.tanh(self.mix(self.embed(batch["ids"])))  # (batch, 1 + n, dim)

    def export_config(self) -> dict[str, Any]:
        return {"type": self.name, "dim": self.dim, "buckets": self.buckets}


@pytest.fixture
def toy_encoder():
    ENCODERS.add("toy", ToyEncoder)
    yield
    ENCODERS.remove("toy")


@pytest.mark.slow
@pytest.mark.parametrize("parser", [TINY_SPAN, 'type = "biaffine"\narc_mlp = 16\nrel_mlp = 8\n'], ids=["span", "biaffine"])
def test_a_registered_encoder_trains_loads_and_parses(tmp_path, toy_encoder, parser: str) -> None:
    path = write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model=parser, epochs=1)
    path.write_text(path.read_text().split("[encoder]")[0] + '[encoder]\ntype = "toy"\ndim = 12\n\n[model]' + path.read_text().split("[model]")[1])
    trainer = Trainer(load_config(path))
    trainer.run()
    model = load_model(tmp_path / "run" / "model")
    assert isinstance(model.encoder, ToyEncoder) and model.encoder.dim == 12
    sentences = list(read_conllu(DEV))
    ours = [(s.heads, s.deprels) for s in parse_stream(model, sentences)]
    theirs = [(s.heads, s.deprels) for s in parse_stream(trainer.model, sentences)]
    assert ours == theirs and all(is_valid_tree(heads) for heads, _ in ours)


def test_unknown_names_list_the_known_ones(tmp_path) -> None:
    with pytest.raises(UnknownNameError, match="unknown parser type 'tree'; known: biaffine, span"):
        PARSERS.get("tree")
    path = write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm", model='type = "tree"\n')
    with pytest.raises(InputFormatError, match="known: biaffine, span"):
        load_config(path)
    path.write_text(path.read_text().replace('type = "bilstm"', 'type = "lstm"').replace('type = "tree"', ""))
    with pytest.raises(InputFormatError, match="unknown encoder type 'lstm'; known: bilstm, transformer"):
        load_config(path)


def test_a_class_must_answer_to_its_registered_name() -> None:
    registry: Registry[type[WordEncoder]] = Registry("encoder type")
    registry.add("toy", ToyEncoder)
    assert registry.get("toy") is ToyEncoder
    registry.add("lazy", "test_registries:ToyEncoder")
    with pytest.raises(TypeError, match="answers to"):
        registry.get("lazy")
    with pytest.raises(ValueError, match="registered already"):
        registry.add("toy", ToyEncoder)
