"""Tests for the from-scratch BiLSTM word encoder (kept small: the machine is shared)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from spandep.data.vocab import build_vocab
from spandep.encoders.base import WordEncoder
from spandep.encoders.bilstm import BiLSTMEncoder

TRAIN = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    ["A", "dog", "sat", "on", "the", "log", "."],
    ["The", "dog", "saw", "the", "cat", "."],
]
UPOS = [
    ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
    ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
    ["DET", "NOUN", "VERB", "DET", "NOUN", "PUNCT"],
]
SMALL = dict(word_dim=8, char_dim=6, char_out=10, hidden=12, layers=2, upos_dim=5)


def make(upos: bool = False, **kw) -> BiLSTMEncoder:
    torch.manual_seed(0)
    words, chars = BiLSTMEncoder.build_vocab(TRAIN, min_freq=2)
    upos_vocab = build_vocab((t for tags in UPOS for t in tags), specials=["<unk>"]) if upos else None
    return BiLSTMEncoder(words, chars, upos_vocab=upos_vocab, **{**SMALL, **kw})


def test_build_vocab():
    words, chars = BiLSTMEncoder.build_vocab(TRAIN, min_freq=2)
    assert words[:3] == ["<pad>", "<unk>", "<root>"]
    assert chars[:3] == ["<pad>", "<unk>", "<root>"]
    # lowercased counts: the=5, sat=2, on=2, dog=2, cat=2, .=3; a/mat/log/saw seen once
    assert set(words[3:]) == {"the", ".", "sat", "on", "dog", "cat"}
    assert words[3] == "the" and words[4] == "."  # most frequent first
    assert "The" not in words
    assert {"T", "h", "e", "."} <= set(chars) and len(set(chars)) == len(chars)
    all_words, _ = BiLSTMEncoder.build_vocab(TRAIN, min_freq=1)
    assert {"a", "mat", "log", "saw"} <= set(all_words)
    cased, _ = BiLSTMEncoder.build_vocab(TRAIN, min_freq=1, lowercase=False)
    assert "The" in cased and "the" in cased


def test_bad_vocab_rejected():
    with pytest.raises(ValueError):
        BiLSTMEncoder(["the", "<pad>", "<unk>"], ["<pad>", "<unk>"])


def test_featurize_and_collate_shapes():
    enc = make(max_chars=4)
    assert isinstance(enc, WordEncoder) and enc.out_dim == 2 * SMALL["hidden"]
    f = enc.featurize(["THE", "zebra", "Ω", ""])
    assert f["words"].dtype == np.int64 and f["words"].shape == (5,)
    assert f["words"][0] == 2  # <root>
    assert f["words"][1] == enc.word_vocab.index("the")  # lowercased lookup
    assert f["words"][2] == 1 and f["words"][3] == 1  # unknown words
    assert f["chars"].shape == (5, 4)  # "zebra" capped at 4 chars
    assert list(f["chars"][0]) == [enc.char_vocab.index("<root>"), 0, 0, 0]
    assert f["chars"][3, 0] == 1 and f["chars"][3, 1] == 0  # unknown char
    assert f["chars"][4, 0] == 1  # empty form -> one <unk> char
    assert enc.featurize(["<pad>"])["words"][1] == 1  # never becomes padding

    feats = [enc.featurize(s) for s in TRAIN] + [enc.featurize([])]
    batch = enc.collate(feats)
    assert batch["words"].shape == (4, 8) and batch["words"].dtype == torch.long
    assert batch["chars"].shape == (4, 8, 3)  # longest word in TRAIN has 3 chars
    assert batch["word_mask"].dtype == torch.bool
    assert batch["word_mask"].sum(1).tolist() == [8, 8, 7, 1]
    out = enc.eval()(batch)
    assert out.shape == (4, 8, enc.out_dim)
    assert torch.all(out[~batch["word_mask"]] == 0)


def test_batch_equals_single_in_eval():
    enc = make().eval()
    sents = [["The", "cat", "sat"], TRAIN[0], ["dog", "."], ["supercalifragilisticexpialidocious", "x"]]
    feats = [enc.featurize(s) for s in sents]
    with torch.no_grad():
        batched = enc(enc.collate(feats))
        for i, f in enumerate(feats):
            alone = enc(enc.collate([f]))
            n = len(f["words"])
            assert alone.shape[1] == n
            torch.testing.assert_close(batched[i, :n], alone[0], rtol=1e-5, atol=1e-6)


def test_config_round_trip(tmp_path):
    enc = make(upos=True, max_chars=25, variational=False, out_dropout=0.1).eval()
    cfg = json.loads(json.dumps(enc.export_config()))
    assert cfg["type"] == "bilstm"
    torch.save(enc.state_dict(), tmp_path / "enc.pt")
    torch.manual_seed(123)  # different random init before loading
    rebuilt = BiLSTMEncoder.from_config(cfg)
    rebuilt.load_state_dict(torch.load(tmp_path / "enc.pt"))
    rebuilt.eval()
    assert rebuilt.export_config() == cfg
    batch = enc.collate([enc.featurize(s, u) for s, u in zip(TRAIN, UPOS)])
    with torch.no_grad():
        assert torch.equal(enc(batch), rebuilt(batch))
    with pytest.raises(ValueError):
        BiLSTMEncoder.from_config({**cfg, "type": "bert"})


def test_gradients_flow_and_dropout_active():
    enc = make(upos=True).train()
    batch = enc.collate([enc.featurize(s, u) for s, u in zip(TRAIN, UPOS)])
    out = enc(batch)
    out[batch["word_mask"]].pow(2).sum().backward()
    for name, p in enc.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name
    with torch.no_grad():
        assert not torch.equal(enc(batch), enc(batch))  # dropout is on in training mode
        enc.eval()
        assert torch.equal(enc(batch), enc(batch))


def test_upos_input():
    enc = make(upos=True)
    assert enc.upos_vocab[:3] == ["<pad>", "<unk>", "<root>"] and "NOUN" in enc.upos_vocab
    with pytest.raises(ValueError):
        enc.featurize(TRAIN[0])  # tags required
    with pytest.raises(ValueError):
        enc.featurize(["a", "b"], ["DET"])  # length mismatch
    f = enc.featurize(["the", "cat"], ["DET", "XYZ"])
    assert f["upos"].tolist() == [2, enc.upos_vocab.index("DET"), 1]
    batch = enc.collate([f, enc.featurize(["x"], ["NOUN"])])
    assert batch["upos"].shape == batch["words"].shape == (2, 3)
    enc.eval()
    with torch.no_grad():
        a = enc(batch)
        batch2 = dict(batch, upos=batch["upos"].clone())
        batch2["upos"][0, 1] = enc.upos_vocab.index("NOUN")
        b = enc(batch2)
    assert not torch.allclose(a[0], b[0])  # the tag changes the output
    # a tag list that already carries the specials is not duplicated
    same = BiLSTMEncoder(enc.word_vocab, enc.char_vocab, upos_vocab=enc.upos_vocab, **SMALL)
    assert same.upos_vocab == enc.upos_vocab
    # without UPOS the encoder ignores tags and has no upos tensor
    plain = make()
    assert "upos" not in plain.collate([plain.featurize(["the"], ["DET"])])
