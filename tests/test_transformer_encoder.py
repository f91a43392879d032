import torch

from spandep.encoders.transformer import TransformerEncoder


def make(path, **kw):
    torch.manual_seed(0)
    enc = TransformerEncoder(str(path), pretrained=False, **kw)
    enc.eval()
    return enc


def test_pieces_map_to_words_and_empty_words_get_unk(tiny_transformer_dir):
    enc = make(tiny_transformer_dir)
    f = enc.featurize(["Unbelievably", "\u200b", "ok"])
    assert f["n_words"] == 3
    assert sorted(set(f["piece_word"].tolist())) == [1, 2, 3]
    assert f["pieces"][f["piece_word"] == 2].tolist() == [enc.unk_id]


def test_shapes_and_padding_independence(tiny_transformer_dir):
    for pooling in ("first", "mean"):
        enc = make(tiny_transformer_dir, pooling=pooling)
        a = enc.featurize("The cat sat on the mat .".split())
        b = enc.featurize(["Hi"])
        batch = enc.collate([a, b])
        out = enc(batch)  # (2, 1 + 7, 32)
        assert out.shape == (2, 8, 32)
        alone = enc(enc.collate([b]))
        assert torch.allclose(out[1, :2], alone[0, :2], atol=1e-5)
        assert batch["word_mask"].sum(1).tolist() == [8, 2]


def test_the_mix_reads_the_same_layer_outputs_as_the_models_hidden_states(tiny_transformer_dir):
    # the layers are read by forward hooks as they run; transformers' own ``output_hidden_states`` is the reference
    for mix_layers in (1, 2):
        enc = make(tiny_transformer_dir, mix_layers=mix_layers)
        with torch.no_grad():
            enc.mix.weights.copy_(torch.arange(mix_layers, dtype=torch.float) - 0.5)  # unequal weights: the order matters
        batch = enc.collate([enc.featurize("The cat sat on the mat .".split()), enc.featurize(["Hi"])])
        ids, mask = batch["input_ids"], batch["piece_mask"]
        states = enc.transformer(input_ids=ids, attention_mask=mask.long(), output_hidden_states=True).hidden_states
        expected = enc.mix(list(states[-mix_layers:]))  # (2, pieces, 32)
        hooks = [len(layer._forward_hooks) for layer in enc.transformer.encoder.layer]
        assert torch.equal(enc._run(ids, mask), expected)
        assert [len(layer._forward_hooks) for layer in enc.transformer.encoder.layer] == hooks  # ours are removed


def test_first_and_mean_pooling_agree_on_single_piece_words(tiny_transformer_dir):
    first = make(tiny_transformer_dir, pooling="first")
    mean = make(tiny_transformer_dir, pooling="mean")
    mean.load_state_dict(first.state_dict())
    batch = first.collate([first.featurize(["the", "cat"])])
    assert torch.allclose(first(batch), mean(batch), atol=1e-6)


def test_long_sentences_are_windowed_not_truncated(tiny_transformer_dir):
    enc = make(tiny_transformer_dir, max_pieces=16)  # windows of 14 pieces, stride 7
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"] * 4
    feats = enc.featurize(words)
    assert len(feats["pieces"]) == 40  # one piece per word
    out = enc(enc.collate([feats]))
    assert out.shape == (1, 41, 32) and torch.isfinite(out).all()
    # the first window is exactly the 14-word prefix encoded alone; its first words are read from that window
    prefix = enc(enc.collate([enc.featurize(words[:14])]))
    assert torch.allclose(out[0, 1:8], prefix[0, 1:8], atol=1e-5)
    # the last words come from the last window, which is the 14-word suffix encoded alone
    suffix = enc(enc.collate([enc.featurize(words[-14:])]))
    assert torch.allclose(out[0, -4:], suffix[0, -4:], atol=1e-5)


def test_upos_embedding_changes_output(tiny_transformer_dir):
    enc = make(tiny_transformer_dir, upos_vocab=["<unk>", "NOUN", "VERB"], upos_dim=4)
    assert enc.out_dim == 36
    x = enc(enc.collate([enc.featurize(["dogs", "bark"], ["NOUN", "VERB"])]))
    y = enc(enc.collate([enc.featurize(["dogs", "bark"], ["VERB", "VERB"])]))
    assert x.shape == (1, 3, 36) and not torch.allclose(x, y)


def test_word_embeddings_frozen_by_default(tiny_transformer_dir):
    enc = make(tiny_transformer_dir)
    assert not enc.transformer.get_input_embeddings().weight.requires_grad
    enc = make(tiny_transformer_dir, freeze_embeddings=False)
    assert enc.transformer.get_input_embeddings().weight.requires_grad


def test_loading_pretrained_weights_draws_no_progress_bar(capfd):
    """transformers draws a "Loading weights" bar on stderr at every from_pretrained; a parser loading its model
    (CLI or API) must stay quiet, and leave transformers' own setting as it was."""
    from transformers.utils import logging as hf_logging

    from spandep.encoders.bases import MINILM_ALIAS

    TransformerEncoder(MINILM_ALIAS, pretrained=True)
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()
