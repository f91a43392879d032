"""An output head reading a transformer layer beside the parser's word vectors (a head's ``layer`` setting:
``WordEncoder.tap``, ``Parser.head_vectors``, ``spandep train-heads --set feats.layer=N``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.options import InferenceOptions
from spandep.storage.model_io import load_model, save_model
from spandep.training.heads import HeadsSettings, HeadsTrainer
from spandep.training.trainer import read_treebank
from tests.conftest import DEV, TINY_SPAN, TRAIN, write_config
from tests.test_train_heads import column_accuracy, compact_span  # noqa: F401  (compact_span: a BiLSTM model with heads)
from tests.test_transformer_encoder import make

HEADS = "\n[heads.upos]\n\n[heads.feats]\nlayer = 1\nchars = 6\n\n[heads.lemma]\n"


def test_a_tapped_layer_comes_after_the_word_vectors_pooled_as_they_are(tiny_transformer_dir: Path) -> None:
    enc = make(tiny_transformer_dir, mix_layers=1, upos_vocab=["<unk>", "NOUN"], upos_dim=4)
    batch = enc.collate([enc.featurize("The cat sat on the mat .".split()), enc.featurize(["Unbelievably"])])
    plain = enc(batch)  # (2, 8, 36)
    enc.tap([1])
    tapped = enc(batch)  # (2, 8, 36 + 32)
    assert enc.taps == (1,) and enc.tap_dim == 32 and tapped.shape == (2, 8, 68)
    assert torch.equal(tapped[..., :36], plain)  # the parser's vectors are untouched
    states = enc.transformer(input_ids=batch["input_ids"], attention_mask=batch["piece_mask"].long(), output_hidden_states=True).hidden_states
    layer1 = states[1]  # (2, pieces, 32): the first layer's output
    # word 1 of sentence 2 ("Unbelievably") is several pieces: its tapped vector is their mean, as the mix's is
    pieces = batch["piece_word"][1] == 1  # (pieces,)
    assert pieces.sum() > 1
    assert torch.allclose(tapped[1, 1, 36:], layer1[1, pieces].mean(0), atol=1e-6)
    enc.tap([])
    assert torch.equal(enc(batch), plain)
    with pytest.raises(ValueError, match="layers 1 to 2"):
        enc.tap([3])


@pytest.fixture(scope="module")
def layered(tmp_path_factory: pytest.TempPathFactory, tiny_transformer_dir: Path) -> Path:
    """A tiny span model over the tiny transformer whose FEATS head reads layer 1 (one epoch), saved compact."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("layered")
    config = write_config(root / "span.toml", root / "run", "transformer", model_dir=tiny_transformer_dir, model=TINY_SPAN + HEADS, epochs=1)
    Trainer(load_config(config)).run()
    save_model(load_model(root / "run" / "model", merge_adapter=False), root / "span", compact=True)
    return root / "span"


def test_a_model_trains_saves_and_parses_with_a_head_that_reads_a_layer(layered: Path) -> None:
    config = json.loads((layered / "config.json").read_text(encoding="utf-8"))
    assert config["model"]["heads"]["feats"]["layer"] == 1 and "layer" not in config["model"]["heads"]["upos"]
    model = load_model(layered)
    assert model.encoder.taps == (1,)
    assert model.heads["feats"].layer == 1 and model.heads["upos"].layer == 0
    w = model.width  # the FEATS head's input: the parser's vectors and the layer's 32 values
    assert model.heads["feats"].chars is not None
    first = next(m for m in model.heads["feats"].modules() if isinstance(m, torch.nn.Linear))
    assert first.in_features >= w + 32
    dev = read_treebank(str(DEV), "conllu")
    parses = model.parse(dev, InferenceOptions())
    assert all(len(p.columns["feats"]) == len(s) for p, s in zip(parses, dev))
    # the parser reads only its own vectors: without the tap (and the head that needs it) the trees are the same
    del model.heads["feats"]
    model.encoder.tap([])
    assert [(p.heads, p.labels) for p in model.parse(dev, InferenceOptions())] == [(p.heads, p.labels) for p in parses]


def test_train_heads_rebuilds_a_head_with_a_layer(layered: Path, tmp_path: Path) -> None:
    settings = HeadsSettings(str(layered), str(TRAIN), str(DEV), str(tmp_path / "run"), epochs=2, lr=1e-2, batch_words=300,
                             rebuild={"lemma": {"layer": 2}, "feats": {"layer": 2}})
    record = HeadsTrainer(settings, layered).run()
    new = tmp_path / "run" / "model"
    heads = json.loads((new / "config.json").read_text(encoding="utf-8"))["model"]["heads"]
    model = load_model(new)
    for name in ("lemma", "feats"):  # a rebuilt head kept reads layer 2; one that lost to the input's reads what it did
        assert model.heads[name].layer == (2 if record["chosen_epochs"][name] else {"lemma": 0, "feats": 1}[name])
        assert heads[name].get("layer", 0) == model.heads[name].layer
    assert model.encoder.taps == tuple(sorted({h.layer for h in model.heads.values()} - {0}))
    dev = read_treebank(str(DEV), "conllu")
    parses = model.parse(dev, InferenceOptions())
    assert column_accuracy(model, dev, parses, record["dev_after"]) == record["dev_after"]  # scored as it parses


def test_a_layer_is_one_line_error_where_there_is_none(layered: Path, tmp_path: Path, compact_span: Path) -> None:  # noqa: F811
    runner = CliRunner()
    cases = [
        (layered, "feats.layer=9", "layers 1 to 2"),
        (compact_span, "upos.layer=1", "no transformer layers"),
        (layered, "feats.layer=1.5", "whole number"),
    ]
    for i, (model, change, words) in enumerate(cases):
        result = runner.invoke(app, ["train-heads", str(model), str(TRAIN), str(DEV), "-o", str(tmp_path / f"o{i}"), "--set", change])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("spandep: error:") and words in lines[0], result.stderr


def test_a_multi_treebank_model_puts_the_treebank_embedding_before_the_tapped_layer(tmp_path: Path, tiny_transformer_dir: Path) -> None:
    import re

    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer
    from tests.conftest import TINY_BIAFFINE
    from tests.test_treebanks import two_treebanks

    single = write_config(tmp_path / "single.toml", tmp_path / "run", "transformer", model_dir=tiny_transformer_dir, model=TINY_BIAFFINE + "treebank_dim = 4\n" + HEADS, epochs=1)
    config = tmp_path / "multi.toml"
    config.write_text(re.sub(r"\[data\]\n[^\[]*", lambda _: two_treebanks(tmp_path) + "\n", single.read_text()))
    Trainer(load_config(config)).run()
    model = load_model(tmp_path / "run" / "model")
    assert model.encoder.taps == (1,) and model.width == 32 + 4
    dev = read_treebank(str(DEV), "conllu")[:4]
    options = InferenceOptions(treebank="a")
    batch = model.inference_batch([model.encoder.featurize(s.forms) for s in dev], options)
    x = model.word_vectors(batch)  # (4, 1 + n, 32 + 4 + 32)
    assert x.shape[-1] == 68
    embedding = model.treebanks.vectors(torch.zeros(1, 1, 32), torch.tensor([model.treebanks.index("a")]))[0, 0, 32:]  # (4,)
    assert torch.equal(x[0, 1, 32:36], embedding)  # the treebank's embedding right after the encoder's vectors
    parses = model.parse(dev, options)
    assert all(len(p.columns["feats"]) == len(s) for p, s in zip(parses, dev))
