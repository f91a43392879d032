"""The tokenizer's opt-in character features (issue 47): hashed n-grams, training-word lexicon and dictionary flags."""

from __future__ import annotations

import json
import lzma

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from conftest import DEV, FIXTURES, TRAIN
from spandep.cli.main import app
from spandep.checks import Range
from spandep.errors import InputFormatError
from spandep.limits import LIMITS, Limit
from spandep.tokenization.corpus import lossless_problems, read_dictionary, read_paragraphs
from spandep.tokenization.features import CharFeatures
from spandep.tokenization.model import CharTagger, CharVocab, NetConfig
from spandep.tokenization.mwt import MwtLexicon
from spandep.storage.model_io import copy_tokenizer
from spandep.tokenization.trained import Thresholds, TrainedTokenizer, bound_sentences, load_tokenizer, packed

OLD = FIXTURES / "tokenizer_before_features"


def test_a_tokenizer_saved_before_the_features_tokenizes_as_before():
    config = json.loads((OLD / "config.json").read_text(encoding="utf-8"))
    assert "ngram_buckets" not in config["net"] and not (OLD / "words.json").exists()
    expected = json.loads((FIXTURES / "tokenizer_before_features.json").read_text(encoding="utf-8"))
    tokenizer = load_tokenizer(OLD)
    assert tokenizer.vocab.encode("ab c").shape == (4, 2)
    got = [[w.form for w in s.words] for s in tokenizer.tokenize(expected["text"])]
    assert got == expected["sentences"]


def test_ngram_ids_are_stable_and_in_range():
    features = CharFeatures(buckets=50, lengths=0)
    ids = features.encode("中文分词。")
    assert ids.shape == (5, 4) and ids.min() >= 1 and ids.max() <= 50
    assert np.array_equal(ids, CharFeatures(50, 0).encode("中文分词。"))  # CRC-32: no per-process salt
    shifted = features.encode("x中文")
    assert shifted[2, 0] == ids[1, 0] and shifted[1, 1] == ids[0, 1]  # 中文 ending at 文, starting at 中: same ids
    assert len({*ids[1].tolist()}) > 1  # the four roles of one character are hashed apart


def test_lexicon_flags():
    features = CharFeatures(buckets=0, lengths=2, words=["ab", "abc", "c"])
    flags = features.encode("xabcab").reshape(6, 3, 2)  # (n_chars, starts / ends / goes on, length bucket)
    starts, ends, inside = flags[:, 0], flags[:, 1], flags[:, 2]
    assert starts.tolist() == [[0, 0], [0, 1], [0, 0], [1, 0], [0, 1], [0, 0]]  # ab and abc at 1 (abc in bucket 2+)
    assert ends.tolist() == [[0, 0], [0, 0], [0, 1], [1, 1], [0, 0], [0, 1]]
    assert inside.tolist() == [[0, 0], [0, 0], [0, 1], [0, 0], [0, 0], [0, 0]]


def test_lexicon_keeps_words_seen_twice():
    features = CharFeatures.learn(0, 3, ["的", "的", "中文", "中文", "分词", "x" * 40, "x" * 40])
    assert features.words == ["中文", "的"]


def test_dictionary_flags_follow_the_lexicon_flags():
    features = CharFeatures(buckets=0, lengths=2, words=["ab"], dictionary=["bc", "x" * 40])
    assert features.dictionary == ["bc"] and features.columns == 12
    flags = features.encode("abc").reshape(3, 2, 3, 2)  # (n_chars, lexicon / dictionary, starts / ends / goes on, length bucket)
    assert flags[:, 0, 0, 1].tolist() == [1, 0, 0] and flags[:, 0, 1, 1].tolist() == [0, 1, 0]  # ab: the lexicon's
    assert flags[:, 1, 0, 1].tolist() == [0, 1, 0] and flags[:, 1, 1, 1].tolist() == [0, 0, 1]  # bc: the dictionary's
    assert CharFeatures(0, 2, ["ab"], dictionary=[]).columns == 12  # an empty dictionary still has its columns
    assert CharFeatures(0, 2, ["ab"]).columns == 6


def test_read_dictionary(tmp_path):
    path = tmp_path / "dict.txt.xz"
    with lzma.open(path, "wt", encoding="utf-8") as f:
        f.write("# a comment\n中文 12 N\n\n分詞\n")
    assert read_dictionary(path) == ["中文", "分詞"]
    (tmp_path / "empty.txt").write_text("\n# nothing\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="no words"):
        read_dictionary(tmp_path / "empty.txt")


def test_a_dictionary_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setitem(LIMITS, "tokenizer_dictionary_words", Limit("tokenizer_dictionary_words", Range(1, 2), "test"))
    (tmp_path / "dict.txt").write_text("a\nb\n\nc\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"dict.txt:4: more than 2 words \(limit tokenizer_dictionary_words\)"):
        read_dictionary(tmp_path / "dict.txt")


def _tokenizer(config: NetConfig) -> TrainedTokenizer:
    torch.manual_seed(0)
    texts = [p.text for p in read_paragraphs(TRAIN)]
    dictionary = ["ou", "to"] if config.dictionary else None
    features = CharFeatures.learn(config.ngram_buckets, config.lexicon_lengths, (w for t in texts for w in t.split()), dictionary)
    vocab = CharVocab.build(texts, min_count=1, features=features)
    return TrainedTokenizer(vocab, CharTagger(len(vocab), config), MwtLexicon.learn([]), window=16, context=4)


def test_features_reach_the_network_and_survive_saving(tmp_path):
    config = NetConfig(embedding=8, hidden=8, layers=1, dropout=0.0, ngram_buckets=64, lexicon_lengths=3)
    tokenizer = _tokenizer(config)
    text = "The the of of the the. And so on, to the end!\n\nA new one."
    ids = torch.from_numpy(tokenizer.vocab.encode(text))[None]  # (1, n_chars, 2 + 4 + 9)
    assert ids.shape[2] == 2 + 4 + 9 and int(ids[0, :, 6:].sum()) > 0
    lengths = torch.tensor([ids.shape[1]])  # (1,)
    with torch.no_grad():
        logits = tokenizer.net(ids, lengths)  # (1, n_chars, 3)
        no_ngrams = tokenizer.net(torch.cat([ids[..., :2], torch.zeros_like(ids[..., 2:6]), ids[..., 6:]], dim=2), lengths)  # (1, n_chars, 3)
        no_lexicon = tokenizer.net(torch.cat([ids[..., :6], torch.zeros_like(ids[..., 6:])], dim=2), lengths)  # (1, n_chars, 3)
    assert not torch.allclose(logits, no_ngrams) and not torch.allclose(logits, no_lexicon)
    tokenizer.save(tmp_path / "tok", {})
    assert json.loads((tmp_path / "tok" / "words.json").read_text(encoding="utf-8")) == tokenizer.vocab.features.words
    loaded = load_tokenizer(tmp_path / "tok")
    paras = [(0, len(text))]
    assert np.array_equal(loaded.probabilities(text, paras)[0][0], tokenizer.probabilities(text, paras)[0][0])
    assert lossless_problems(text, loaded.tokenize(text)) == []


def test_a_packed_copy_loads_as_the_folder_it_was_copied_from(tmp_path):
    """A compact model's copy (copy_tokenizer -> packed): word list and lexicon xz-compressed, the same tokenizer."""
    tokenizer = _tokenizer(NetConfig(embedding=8, hidden=8, layers=1, dropout=0.0, lexicon_lengths=3))
    tokenizer.lexicon = MwtLexicon.learn([("au", ("à", "le")), ("au", ("à", "le")), ("du", ("de", "le"))])  # kept packed
    text = "Il va au marché, au bout du monde.\n\nEt puis au revoir."
    tokenizer.save(tmp_path / "tok", {})
    copy_tokenizer(tmp_path / "tok", tmp_path / "copy", compact=True)
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["config.json", "model.safetensors", "mwt.json.xz", "words.json.xz"]
    packed(tmp_path / "copy")  # packing again leaves it as it is
    original, copy = load_tokenizer(tmp_path / "tok"), load_tokenizer(tmp_path / "copy")
    assert copy.vocab.features.words == original.vocab.features.words and copy.lexicon.to_json() == original.lexicon.to_json()
    assert copy.tokenize(text) == original.tokenize(text)


def test_dictionary_reaches_the_network_and_survives_saving(tmp_path):
    tokenizer = _tokenizer(NetConfig(embedding=8, hidden=8, layers=1, dropout=0.0, lexicon_lengths=2, dictionary=True))
    text = "You want to go out to the end."
    ids = torch.from_numpy(tokenizer.vocab.encode(text))[None]  # (1, n_chars, 2 + 6 + 6)
    assert ids.shape[2] == 2 + 12 and int(ids[0, :, 8:].sum()) > 0
    lengths = torch.tensor([ids.shape[1]])  # (1,)
    with torch.no_grad():
        no_dictionary = tokenizer.net(torch.cat([ids[..., :8], torch.zeros_like(ids[..., 8:])], dim=2), lengths)  # (1, n_chars, 3)
        assert not torch.allclose(tokenizer.net(ids, lengths), no_dictionary)
    tokenizer.save(tmp_path / "tok", {})
    loaded = load_tokenizer(tmp_path / "tok")
    assert loaded.vocab.features.dictionary == ["ou", "to"]
    paras = [(0, len(text))]
    assert np.array_equal(loaded.probabilities(text, paras)[0][0], tokenizer.probabilities(text, paras)[0][0])


def test_train_tokenizer_with_features(tmp_path):
    out = tmp_path / "run"
    args = ["train-tokenizer", str(TRAIN), "--dev", str(DEV), "-o", str(out), "--embedding", "8", "--hidden", "8",
            "--layers", "1", "--window", "64", "--epochs", "1", "--ngram-buckets", "128", "--lexicon-lengths", "2"]
    (tmp_path / "dict.txt").write_text("zebra 3 N\nthe\n", encoding="utf-8")
    result = CliRunner().invoke(app, [*args, "--dictionary", str(tmp_path / "dict.txt")])
    assert result.exit_code == 0, result.output
    tokenizer = load_tokenizer(out)
    assert tokenizer.net.config.ngram_buckets == 128 and "the" in tokenizer.vocab.features.words
    assert tokenizer.net.config.dictionary and tokenizer.vocab.features.dictionary == ["the", "zebra"]
    text = "Don't stop. We've e-mailed Dr. Smith!"
    assert lossless_problems(text, tokenizer.tokenize(text)) == []


@pytest.mark.parametrize("option,value", [("--ngram-buckets", "-1"), ("--lexicon-lengths", "33")])
def test_feature_options_are_bounded(tmp_path, option, value):
    result = CliRunner().invoke(app, ["train-tokenizer", str(TRAIN), "--dev", str(DEV), "-o", str(tmp_path), option, value])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and option in result.output


def test_a_dictionary_needs_the_lexicon_flags_and_a_file(tmp_path):
    base = ["train-tokenizer", str(TRAIN), "--dev", str(DEV), "-o", str(tmp_path / "run")]
    (tmp_path / "dict.txt").write_text("word\n", encoding="utf-8")
    result = CliRunner().invoke(app, [*base, "--dictionary", str(tmp_path / "dict.txt")])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "--lexicon-lengths" in result.output
    result = CliRunner().invoke(app, [*base, "--lexicon-lengths", "2", "--dictionary", str(tmp_path / "missing.txt")])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "missing.txt" in result.output


def test_bound_sentences_cuts_long_sentences_at_their_likeliest_end():
    ends = np.array([False] * 9 + [True, False, True])  # (12,): sentences of 10 and 2 tokens
    scores = np.array([0.0, 0.9, 0.1, 0.0, 0.3, 0.2, 0.0, 0.4, 0.1, 1.0, 0.0, 1.0])  # (12,)
    cut = bound_sentences(ends, scores, 4)
    # tokens 0-3: the best of tokens 2-3 (0-based) is 2 (0.1 > 0.0); then 3-6: best of 5-6 is 5; then 6-9 fits
    assert np.flatnonzero(cut).tolist() == [2, 5, 9, 11]
    assert np.array_equal(bound_sentences(ends, scores, 10), ends)


def test_max_tokens_bounds_every_sentence_and_is_saved(tmp_path):
    tokenizer = _tokenizer(NetConfig(embedding=8, hidden=8, layers=1, dropout=0.0))
    never = tokenizer.with_settings(Thresholds(token=0.0, sentence=1.1), "net")  # every character a token, no sentence end
    text = "abcdefghijklmnopqrstuvwxyz " * 3
    assert len(never.tokenize(text)) == 1
    bounded = never.with_settings(never.thresholds, "net", max_tokens=10)
    sentences = bounded.tokenize(text)
    assert max(len(s.words) for s in sentences) <= 10 and lossless_problems(text, sentences) == []
    bounded.save(tmp_path / "tok", {})
    assert load_tokenizer(tmp_path / "tok").max_tokens == 10
