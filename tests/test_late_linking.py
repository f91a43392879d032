"""Late-interaction span linker: span marking, masks, label scorer, learning, and its use by span inference."""

from __future__ import annotations

import pytest
import torch

from spandep.data.trees import hull_spans, tree_problems
from link_scores import link_matrix
from spandep.models.span.late import LateSpanLinker
from spandep.models.span.linking import link_masks

LABELS = ["root", "nsubj", "obj", "nmod"]
HEADS = [2, 0, 4, 2]  # "I love Tim's cat"
RELS = [1, 0, 3, 2]
GOLD = [(0, 1, 4)] + [(w, *span) for w, span in enumerate(hull_spans(HEADS), start=1)]


def make(seed: int = 0, **kwargs) -> LateSpanLinker:
    torch.manual_seed(seed)
    opts = {"dim": 16, "layers": 1, "heads": 2, "ff": 32, "mlp": 16, "label_mlp": 8, "dropout": 0.0, "mlp_dropout": 0.0}
    return LateSpanLinker(12, LABELS, **{**opts, **kwargs})


def batch_for(model: LateSpanLinker, vectors: torch.Tensor, spans) -> dict:
    return model.make_batch([(vectors, *span) for span in spans])


def test_make_batch_stores_each_sentence_once_and_masks_padding() -> None:
    model = make()
    a, b = torch.randn(5, 12), torch.randn(3, 12)
    batch = model.make_batch([(a, 0, 1, 4), (b, 1, 1, 2), (a, 2, 1, 4)])
    assert batch["vectors"].shape == (2, 5, 12)
    assert batch["sentence"].tolist() == [0, 1, 0]
    assert batch["context_word_mask"].sum(1).tolist() == [5, 3, 5]
    assert batch["n_words"].tolist() == [4, 2, 4]
    assert torch.equal(batch["vectors"][1, :3], b) and not batch["vectors"][1, 3:].any()


def test_outputs_follow_the_shared_masks() -> None:
    model = make().eval()
    batch = batch_for(model, torch.randn(5, 12), GOLD)
    out = model(batch)
    parent_mask, child_mask = link_masks(batch["span"], batch["context_word_mask"])
    assert torch.equal(out.parent_mask, parent_mask) and torch.equal(out.child_mask, child_mask)
    assert out.parent.shape == out.child.shape == (5, 3, 5)
    assert (out.parent[~parent_mask] < -1e8).all() and (out.parent[parent_mask] > -1e8).all()
    assert out.query is not None and out.query.shape == (5, 16)
    assert out.has_parent.tolist() == [False, True, True, True, True]


def test_the_query_depends_on_the_marked_span() -> None:
    model = make().eval()
    vectors = torch.randn(5, 12)
    out = model(batch_for(model, vectors, [(2, 1, 4), (2, 2, 4), (2, 2, 2)]))
    assert not torch.allclose(out.parent[0], out.parent[1]) and not torch.allclose(out.parent[1], out.parent[2])


def test_padding_does_not_change_a_query() -> None:
    model = make().eval()
    short, long = torch.randn(3, 12), torch.randn(6, 12)
    alone = model(model.make_batch([(short, 1, 1, 2)]))
    padded = model(model.make_batch([(short, 1, 1, 2), (long, 3, 1, 5)]))
    assert torch.allclose(alone.parent[0], padded.parent[0, :, :3], atol=1e-5)
    assert torch.allclose(alone.child[0], padded.child[0, :, :3], atol=1e-5)


def test_label_scores_equal_a_plain_biaffine_per_parent() -> None:
    model = make().eval()
    out = model(batch_for(model, torch.randn(5, 12), GOLD))
    roots = torch.tensor([[0, 1, 2, 3, 4]] * 5)
    fast = model.label_scores(out.hidden, out.query, roots)  # (5, 5, labels)
    for q in range(5):
        for c in range(5):
            x = torch.cat([model.label_query(out.query[q]), torch.ones(1)])
            y = torch.cat([model.label_cand(out.hidden[q, c]), torch.ones(1)])
            slow = torch.einsum("i,oij,j->o", x, model.label_attn.weight, y)
            assert torch.allclose(fast[q, c], slow, atol=1e-5)


@pytest.mark.parametrize("objective", ["softmax", "bce"])
def test_the_linker_learns_gold_links(objective: str) -> None:
    model = make(objective=objective)
    vectors = torch.randn(5, 12)
    batch = batch_for(model, vectors, GOLD)
    targets = model.link_targets([HEADS] * 5, [RELS] * 5, torch.tensor(GOLD))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = model.loss(batch, targets).item()
    for _ in range(150):
        optimizer.zero_grad()
        model.loss(batch, targets).backward()
        optimizer.step()
    model.eval()
    assert model.loss(batch, targets).item() < 0.1 * first
    out = model(batch)
    root_t, start_t, end_t = (torch.tensor([s[k] for s in GOLD]) for k in range(3))
    link = link_matrix(model, out, root_t, start_t, end_t)  # (S, S) [parent, child]
    assert [int(link[:, c].argmax()) for c in range(1, 5)] == [2, 0, 4, 2]  # each word's gold parent span


def test_token_query_hides_the_span() -> None:
    model = make(scoring="token-span").eval()
    vectors = torch.randn(5, 12)
    out = model(batch_for(model, vectors, [(2, 1, 4), (2, 2, 3)]))
    assert torch.allclose(out.parent[0], out.parent[1])


def test_span_parser_with_late_linker_parses_every_sentence() -> None:
    from spandep.data.sentence import Sentence
    from spandep.encoders.bilstm import BiLSTMEncoder
    from spandep.options import InferenceOptions
    from spandep.options import InferenceStats
    from spandep.models.span.parser import SpanParser

    forms = [["I", "love", "Tim", "'s", "cat", "."], ["Hi"], ["a"] * 40]
    words, chars = BiLSTMEncoder.build_vocab(forms)
    torch.manual_seed(0)
    encoder = BiLSTMEncoder(word_vocab=words, char_vocab=chars, word_dim=8, char_dim=4, char_out=8, hidden=8, layers=1)
    parser = SpanParser(encoder, LABELS, linker={"format": "late", "dim": 16, "layers": 1, "heads": 2, "ff": 16}, span_mlp=8)
    sentences = [Sentence.from_tokens(f) for f in forms] + [Sentence.from_tokens([])]
    for decoder in ("projective", "mst"):
        stats = InferenceStats()
        results = parser.parse(sentences, InferenceOptions(k=2, decoder=decoder), stats)
        assert [len(p.heads) for p in results] == [6, 1, 40, 0]
        assert all(tree_problems(p.heads) == [] for p in results[:3])
        assert stats.too_long == 0 and stats.queries > 0


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("scoring", ["span-span", "token-span"])
def test_inference_path_computes_the_same_function_as_training(layers: int, scoring: str) -> None:
    """At inference the first layer's norm and q/k/v projection run once per (sentence, word, mark) and queries
    gather them; with dropout off this must equal the training path (nn.TransformerEncoder over every query)."""
    model = make(layers=layers, scoring=scoring)
    a, b = torch.randn(5, 12), torch.randn(3, 12)
    spans = [(a, *span) for span in GOLD] + [(b, 0, 1, 2), (b, 1, 1, 2), (b, 2, 2, 2), (a, 3, 3, 4)]
    batch = model.make_batch(spans)
    with torch.no_grad():
        reference = model.train()(batch)
        fast = model.eval()(batch)
    keep = batch["context_word_mask"]
    assert torch.allclose(fast.hidden[keep], reference.hidden[keep], atol=1e-5)
    for got, want in [(fast.parent, reference.parent), (fast.child, reference.child)]:
        assert torch.allclose(got, want, atol=1e-4)
