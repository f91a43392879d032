"""The transformer_chars encoder: a character BiLSTM's word vectors beside a transformer's (tiny random BERT, CPU)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from conftest import DEV, TINY_SPAN, write_config
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.encoders import ENCODERS
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

LORA = 'adapter = { type = "lora", r = 4, alpha = 8, targets = ["query", "value"] }\nchar_dim = 8\nchar_out = 12\n'


def test_character_vectors_tell_apart_words_the_transformer_reads_alike(tiny_transformer_dir) -> None:
    cls = ENCODERS.get("transformer_chars")
    sentences = list(read_conllu(DEV))
    config = cls.config_from_data({**cls.config_defaults, "model": str(tiny_transformer_dir), "char_out": 12}, sentences)
    assert config["char_vocab"][:3] == ["<pad>", "<unk>", "<root>"] and "e" in config["char_vocab"]
    encoder = cls.from_config({"type": "transformer_chars", **config}).eval()
    hidden = encoder.transformer.config.hidden_size
    assert encoder.out_dim == hidden + 12
    batch = encoder.collate([encoder.featurize(["The", "dog"]), encoder.featurize(["the", "dog", "barked"])])
    assert batch["chars"].shape[:2] == batch["word_mask"].shape  # (batch, 1 + words, max_chars)
    with torch.no_grad():
        out = encoder(batch)  # (2, 4, out_dim)
    assert torch.equal(batch["input_ids"][0, 1:3], batch["input_ids"][1, 1:3])  # the uncased vocabulary: same pieces
    assert not torch.allclose(out[0, 1, hidden:], out[1, 1, hidden:])  # "The" and "the" spelled apart
    assert torch.allclose(out[0, 2, hidden:], out[1, 2, hidden:])  # "dog": one spelling, one vector, in any sentence
    assert out[0, 3].abs().sum() == 0  # padding


@pytest.mark.slow
def test_a_lora_model_with_character_vectors_ships_compact_and_parses_the_same(tmp_path, tiny_transformer_dir) -> None:
    path = write_config(tmp_path / "c.toml", tmp_path / "run", "transformer", tiny_transformer_dir, pretrained=True,
                        model=TINY_SPAN + "\n[heads.upos]\n", encoder_extra=LORA, epochs=1)
    path.write_text(path.read_text().replace('type = "transformer"', 'type = "transformer_chars"', 1))
    Trainer(load_config(path)).run()
    folder = tmp_path / "run" / "model"
    result = CliRunner().invoke(app, ["export", str(folder), str(tmp_path / "shipped")])
    assert result.exit_code == 0, result.output
    stored = load_file(str(tmp_path / "shipped" / "model.safetensors"))
    assert any(k.startswith("encoder.char_lstm.") for k in stored) and not any(".base_layer." in k for k in stored)
    assert json.loads((tmp_path / "shipped" / "config.json").read_text())["encoder"]["type"] == "transformer_chars"
    model = load_model(folder)
    pretrained = {id(p) for p in model.pretrained_parameters()}
    with torch.no_grad():  # the weights a compact copy stores (float16), for exact equality
        for p in model.parameters():
            if id(p) not in pretrained:
                p.copy_(p.half().float())
    blank = [replace(s, words=[replace(w, upos="_") for w in s.words]) for s in read_conllu(DEV)]
    expected = [[(w.head, w.deprel, w.upos) for w in s.words] for s in parse_stream(model.eval(), blank)]
    shipped = load_model(tmp_path / "shipped")
    assert [[(w.head, w.deprel, w.upos) for w in s.words] for s in parse_stream(shipped, blank)] == expected
