"""Sentences longer than the encoder's position limit parse in full: the tiny transformer has 64 positions, so a
300-word sentence is encoded in overlapping windows (never truncated) by both the Biaffine and the span parser;
a faithful (per-query) span linker that cannot fit a query falls back to span scores, counted on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TINY_BIAFFINE, TINY_SPAN, write_config
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.conllu import read_conllu, read_tokens
from spandep.data.trees import is_valid_tree

runner = CliRunner()
WORDS = ["Unbelievably", ",", "the", "cat", "sat", "on", "a", "mat", "in", "Reykjavík", "and", "ran", "far", "."]
LONG = [WORDS[i % len(WORDS)] for i in range(300)]


def build(tmp_path: Path, encoder: str, model_table: str, encoder_dir: Path | None = None) -> Path:
    """Save an untrained tiny model (parsing needs no training to test shapes and trees)."""
    from spandep.storage.model_io import save_model
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    cfg = load_config(write_config(tmp_path / "c.toml", tmp_path / "run", encoder, encoder_dir, model=model_table))
    cfg["data"]["max_train_sentences"] = 8
    save_model(Trainer(cfg).model, tmp_path / "model")
    return tmp_path / "model"


def parse_tokens(model: Path, tmp_path: Path, decoder: str, lines: list[str]):
    """Parse pre-tokenised ``lines``; check every output tree and return the CLI result."""
    tokens = tmp_path / "in.txt"
    tokens.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out.conllu"
    result = runner.invoke(app, ["parse", str(tokens), "-f", "tokens", "-o", str(out), "--model", str(model), "--decoder", decoder])
    assert result.exit_code == 0, result.output
    parsed = list(read_conllu(out))
    assert [s.forms for s in parsed] == [s.forms for s in read_tokens(tokens)]
    assert all(is_valid_tree(s.heads) for s in parsed)
    return result


MODELS = pytest.mark.parametrize("model_table", [TINY_BIAFFINE, TINY_SPAN], ids=["biaffine", "span"])


@MODELS
@pytest.mark.parametrize("decoder", ["mst", "projective"])
def test_sentences_beyond_the_position_limit_are_windowed(tmp_path, tiny_transformer_dir, model_table, decoder):
    from spandep.storage.model_io import load_model

    model = build(tmp_path, "transformer", model_table, tiny_transformer_dir)
    encoder = load_model(model).encoder
    assert encoder.max_pieces == 64 and encoder.featurize(LONG)["cost"] > 4 * encoder.max_pieces
    result = parse_tokens(model, tmp_path, decoder, [" ".join(LONG)])
    too_long = "span" in model_table and len(LONG) > 200  # the late linker's max_words: a counted fallback beyond
    assert ("too long" in result.stderr) == too_long


@MODELS
def test_a_long_sentence_batched_with_short_ones(tmp_path, tiny_transformer_dir, model_table):
    model = build(tmp_path, "transformer", model_table, tiny_transformer_dir)
    parse_tokens(model, tmp_path, "mst", ["A short one .", " ".join(LONG), "And another ."])


def test_a_pad_token_word_does_not_shift_a_windowed_sentence(tiny_transformer_dir):
    import torch

    from spandep.encoders.transformer import TransformerEncoder

    torch.manual_seed(0)
    encoder = TransformerEncoder(str(tiny_transformer_dir), pretrained=False, max_pieces=16).eval()
    words = ["the", "[PAD]", "cat", "sat", "on", "a", "mat", "and", "dog", "ran"] * 4
    out = encoder(encoder.collate([encoder.featurize(words)]))
    suffix = encoder(encoder.collate([encoder.featurize(words[-14:])]))  # the last window, encoded alone
    assert torch.allclose(out[0, -4:], suffix[0, -4:], atol=1e-5)


def test_faithful_linker_fallback_is_counted_and_reported(tmp_path, tiny_transformer_dir):
    linker = f'linker = {{ format = "inline", model = "{tiny_transformer_dir}", pretrained = false, max_len = 64 }}\n'
    model = build(tmp_path, "bilstm", f'type = "span"\nspan_mlp = 16\n{linker}')
    result = parse_tokens(model, tmp_path, "mst", ["A short one .", " ".join(LONG), "And another ."])
    assert "note: 1 sentence(s) were too long for the span linker" in result.stderr


def test_a_windowed_sentence_raises_no_tokenizer_length_warning(tiny_transformer_dir, capfd):
    """transformers warns of "indexing errors" when a sentence has more pieces than the model takes; the encoder
    windows such sentences, so the warning would only mislead."""
    from spandep.encoders.transformer import TransformerEncoder

    encoder = TransformerEncoder(str(tiny_transformer_dir), pretrained=False, max_pieces=16)
    encoder.tokenizer.model_max_length = 16
    encoder.featurize(["the", "cat", "sat"] * 20)
    assert "longer than the specified maximum" not in capfd.readouterr().err
