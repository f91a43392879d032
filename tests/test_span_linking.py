"""Span linking (MRC): masks, marker embeddings, gold targets, losses, scores, ablation switches, config."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from spandep.data.trees import hull_spans
from spandep.decoding.spans import SpanCandidates, span_dp, span_mst
from link_scores import child_logp, link_matrix, parent_logp
from spandep.models.span.faithful import SpanLinker
from spandep.models.span.linking import link_masks, link_targets

LABELS = ["root", "nsubj", "obj", "nmod"]
# "I love Tim's cat": love is the root; cat <- love (obj), Tim's <- cat (nmod), I <- love (nsubj)
FORMS = ["I", "love", "Tim's", "cat"]
HEADS = [2, 0, 4, 2]
RELS = ["nsubj", "root", "nmod", "obj"]
GOLD_SPANS = [(0, 1, 4), (1, 1, 1), (2, 1, 4), (3, 3, 3), (4, 3, 4)]  # ROOT first, then the hull of every word
# non-projective: 1 <- 2 (root 2), 3 <- 1, 4 <- 2; arc 1 -> 3 crosses ROOT -> 2, and hull(1) = (1, 3) contains 2
NONPROJ = [2, 0, 1, 2]


def make(model_dir, seed: int = 0, **kwargs) -> SpanLinker:
    torch.manual_seed(seed)
    return SpanLinker(str(model_dir), LABELS, dropout=0.0, **kwargs)


def queries(model: SpanLinker, spans, forms=FORMS) -> dict[str, torch.Tensor]:
    cached = model.queries.sentence_pieces(forms)
    return model.queries.collate([model.queries.build(cached, *s) for s in spans])


def allowed(row: torch.Tensor) -> set[int]:
    return set(torch.nonzero(row).view(-1).tolist())


def all_spans(n: int) -> list[tuple[int, int, int]]:
    """ROOT's span and every valid (root, start, end) of an n-word sentence."""
    return [(0, 1, n)] + [(r, s, e) for r in range(1, n + 1) for s in range(1, r + 1) for e in range(r, n + 1)]


# ----------------------------------------------------------------------------------------- masks
def test_masks_on_a_hand_built_sentence() -> None:
    # row 0: 6 words, query span (root 3, start 2, end 4); row 1: 4 words (padding at 5, 6), the ROOT query
    word_mask = torch.tensor([[True] * 7, [True] * 5 + [False] * 2])
    span = torch.tensor([[3, 2, 4], [0, 1, 4]])
    parent, child = link_masks(span, word_mask)
    assert parent.shape == (2, 3, 7) and child.shape == (2, 7)
    p_root, p_start, p_end = parent[0]
    assert allowed(p_root) == {0, 1, 5, 6}  # never the child's root, never inside [2, 4]; ROOT allowed
    assert allowed(p_start) == {1, 2}  # start <= 2, ROOT position excluded
    assert allowed(p_end) == {4, 5, 6}  # end >= 4
    assert allowed(child[0]) == {2, 4}  # children inside [2, 4], not the root 3
    assert not parent[1].any()  # ROOT has no parent
    assert allowed(child[1]) == {1, 2, 3, 4}  # ROOT's child: anywhere in 1..n, never padding
    # relaxed root mask (non-projective hulls may contain the parent): only "not the child's root"
    relaxed, _ = link_masks(span, word_mask, allow_root_in_span=True)
    assert allowed(relaxed[0, 0]) == {0, 1, 2, 4, 5, 6}
    # token query: the parent side sees the span (3, 3, 3); its children may be any word but 3 (no span is given)
    tok_parent, tok_child = link_masks(span, word_mask, query_token=True)
    assert allowed(tok_parent[0, 0]) == {0, 1, 2, 4, 5, 6}
    assert allowed(tok_parent[0, 1]) == {1, 2, 3} and allowed(tok_parent[0, 2]) == {3, 4, 5, 6}
    assert allowed(tok_child[0]) == {1, 2, 4, 5, 6} and allowed(tok_child[1]) == {1, 2, 3, 4}


def test_model_masks_logits_and_scores(tiny_transformer_dir) -> None:
    model = make(tiny_transformer_dir).eval()
    long_forms = FORMS + ["today", "."]
    batch = queries(model, [(3, 2, 4), (0, 1, 6)], long_forms)
    short = queries(model, [(1, 1, 2)], FORMS[:2])
    with torch.no_grad():
        out = model(batch)
    assert out.hidden.shape[:2] == (2, 7) and out.parent.shape == (2, 3, 7) and out.child.shape == (2, 3, 7)
    assert bool((out.parent[~out.parent_mask] <= -1e8).all()) and bool((out.parent[out.parent_mask] > -1e8).all())
    cands = all_spans(6)
    root, start, end = (torch.tensor([c[k] for c in cands]) for k in range(3))
    lp = parent_logp(model, out, root, start, end)  # (2, C)
    for c, (r, s, e) in enumerate(cands):
        ok = (r == 0 or not 2 <= r <= 4) and s <= 2 and e >= 4
        assert math.isfinite(lp[0, c]) == ok, (r, s, e)
    assert bool(torch.isneginf(lp[1]).all())  # the ROOT query has no parent
    # softmax: the probabilities of allowed roots sum to one
    assert math.isclose(float(model._parent_table(out)[0, 0][out.parent_mask[0, 0]].exp().sum()), 1.0, rel_tol=1e-5)
    cl = child_logp(model, out, root, start, end)
    for c, (r, s, e) in enumerate(cands):
        assert math.isfinite(cl[0, c]) == (r in (2, 4) and s in (2, 4) and e in (2, 4)), (r, s, e)
        assert math.isfinite(cl[1, c]) == (r != 0)
    # padding: a 2-word query batched with a 6-word one never scores positions 3..6
    mixed = model.queries.collate(
        [model.queries.build(model.queries.sentence_pieces(long_forms), 3, 2, 4)]
        + [model.queries.build(model.queries.sentence_pieces(FORMS[:2]), 1, 1, 2)]
    )
    with torch.no_grad():
        out2 = model(mixed)
        alone = model(short)
    assert not out2.parent_mask[1, :, 3:].any() and not out2.child_mask[1, 3:].any()
    torch.testing.assert_close(out2.parent[1, :, :3], alone.parent[0], atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------------------------- markers
def test_marker_embeddings_train_while_word_pieces_stay_frozen(tiny_transformer_dir) -> None:
    model = make(tiny_transformer_dir)
    word = model.transformer.get_input_embeddings().weight
    assert not word.requires_grad and model.marker_embed.weight.requires_grad
    assert len(model.tokenizer) > word.size(0)  # markers were added to the tokenizer, the matrix was not resized
    batch = queries(model, GOLD_SPANS)
    emb = model.embed(batch)  # (batch, L, hidden)
    for b in range(len(GOLD_SPANS)):
        for k, p in enumerate(batch["marker_pos"][b].tolist()):
            assert int(batch["input_ids"][b, p]) == int(model.marker_ids[k])
            torch.testing.assert_close(emb[b, p], model.marker_embed.weight[k])
        plain = [p for p in range(int(batch["attention_mask"][b].sum())) if p not in batch["marker_pos"][b].tolist()]
        torch.testing.assert_close(emb[b, plain], word[batch["input_ids"][b, plain]])
    word_before = word.detach().clone()
    marker_before = model.marker_embed.weight.detach().clone()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)  # every parameter, frozen ones too
    targets = model.link_targets([HEADS] * len(GOLD_SPANS), [RELS] * len(GOLD_SPANS), GOLD_SPANS)
    model.loss(batch, targets).backward()
    assert word.grad is None
    assert model.marker_embed.weight.grad is not None and bool((model.marker_embed.weight.grad.abs().sum(1) > 0).all())
    optimizer.step()
    assert torch.equal(word, word_before)
    assert not torch.allclose(model.marker_embed.weight, marker_before)


# ----------------------------------------------------------------------------------------- targets
def hot(row: torch.Tensor) -> set[int]:
    return set(torch.nonzero(row).view(-1).tolist())


def test_link_targets_projective_tree() -> None:
    labels = [[1, 0, 3, 2]] * 5  # ids of RELS in LABELS
    t = link_targets([HEADS] * 5, labels, GOLD_SPANS)
    parent, kids = t["parent"], t["children"]
    assert parent.shape == (5, 4) and kids.shape == (5, 3, 5)
    assert parent[0].tolist() == [-1, -1, -1, -1]  # the ROOT query
    assert parent[1].tolist() == [2, 1, 4, 1]  # I -> love (1, 4), nsubj
    assert parent[2].tolist() == [0, 1, 4, 0]  # love -> ROOT, whose span is (1, n), root
    assert parent[3].tolist() == [4, 3, 4, 3]  # Tim's -> cat (3, 4), nmod
    assert parent[4].tolist() == [2, 1, 4, 2]  # cat -> love, obj
    assert [hot(kids[0, k]) for k in range(3)] == [{2}, {1}, {4}]  # ROOT's child love spans (1, 4)
    assert [hot(kids[1, k]) for k in range(3)] == [set(), set(), set()]
    assert [hot(kids[2, k]) for k in range(3)] == [{1, 4}, {1, 3}, {1, 4}]  # I (1, 1) and cat (3, 4)
    assert [hot(kids[4, k]) for k in range(3)] == [{3}, {3}, {3}]
    assert t["gold_span"].all()
    assert kids[:, :, 0].sum() == 0  # position 0 (ROOT) is never a child


def test_link_targets_non_projective_tree_and_noisy_spans() -> None:
    spans = [(0, 1, 4), (1, 1, 3), (2, 1, 4), (1, 1, 1), (1, 1, 4)]  # the last two: noisy spans of word 1
    t = link_targets([NONPROJ] * 5, None, spans, width=7)
    parent, kids = t["parent"], t["children"]
    assert kids.shape == (5, 3, 7)
    assert parent[1].tolist() == [2, 1, 4, -1]  # no labels given -> -1
    assert [hot(kids[1, k]) for k in range(3)] == [{3}, {3}, {3}]
    assert [hot(kids[2, k]) for k in range(3)] == [{1, 4}, {1, 4}, {3, 4}]  # hulls (1, 3) and (4, 4)
    assert [hot(kids[0, k]) for k in range(3)] == [{2}, {1}, {4}]
    # noisy spans: the targets are still the true parent's gold span and the word's true children
    for b in (3, 4):
        assert parent[b].tolist() == parent[1].tolist()
        assert torch.equal(kids[b], kids[1])
    assert t["gold_span"].tolist() == [True, True, True, False, False]


def test_unreachable_targets_are_left_out_and_counted(tiny_transformer_dir) -> None:
    forms = ["a", "b", "c", "d"]
    spans = [(1, 1, 3), (1, 1, 1), (3, 3, 3)]  # gold hull of 1 contains its parent 2; a too-narrow span of 1
    for relaxed, expected in ((False, 1), (True, 0)):
        model = make(tiny_transformer_dir, allow_root_in_span=relaxed)
        batch = queries(model, spans, forms)
        targets = model.link_targets([NONPROJ] * 3, None, spans)
        terms = model.loss_terms(batch, targets)
        assert int(terms["unreachable"]) == expected
        assert all(math.isfinite(float(v.detach())) for v in terms.values())
        assert float(terms["loss"].detach()) < 1e4


# ----------------------------------------------------------------------------------------- training
# the sigmoid variant scores positions independently and takes longer to separate them
@pytest.mark.parametrize(("objective", "lr", "steps"), [("softmax", 3e-3, 30), ("bce", 1e-2, 60)])
def test_overfitting_four_queries(tiny_transformer_dir, objective: str, lr: float, steps: int) -> None:
    model = make(tiny_transformer_dir, objective=objective)
    batch = queries(model, GOLD_SPANS)  # 4 word queries (they have parents) and ROOT's query
    targets = model.link_targets([HEADS] * 5, [RELS] * 5, GOLD_SPANS)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    losses = []
    for _ in range(steps):
        terms = model.loss_terms(batch, targets)
        optimizer.zero_grad()
        terms["loss"].backward()
        optimizer.step()
        losses.append({k: float(v.detach()) for k, v in terms.items()})
    assert losses[-1]["loss"] < 0.5 * losses[0]["loss"], losses[:: 5]
    for part in ("parent", "label", "child"):
        assert losses[-1][part] < losses[0][part], part

    model.eval()
    with torch.no_grad():
        out = model(batch)
    cands = all_spans(len(FORMS))
    root, start, end = (torch.tensor([c[k] for c in cands]) for k in range(3))
    lp = parent_logp(model, out, root, start, end)  # (5, C)
    for b, (r, _, _) in enumerate(GOLD_SPANS):
        if r == 0:
            continue
        head = HEADS[r - 1]
        gold = GOLD_SPANS[head] if head else (0, 1, len(FORMS))
        assert cands[int(lp[b].argmax())] == gold, (r, cands[int(lp[b].argmax())], gold)
        label = model.label_logp(out, torch.tensor([[head]] * 5))[b, 0].argmax()
        assert LABELS[int(label)] == RELS[r - 1]

    # the [parent, child] link matrix over the gold candidates decodes the gold tree (both decoders)
    link = link_matrix(model, out, [s[0] for s in GOLD_SPANS], [s[1] for s in GOLD_SPANS], [s[2] for s in GOLD_SPANS])
    assert link.shape == (5, 5) and bool(torch.isneginf(link.diagonal()).all()) and bool(torch.isneginf(link[:, 0]).all())
    cands_obj = SpanCandidates.from_lists(len(FORMS), [(r, s, e, 0.0) for r, s, e in GOLD_SPANS[1:]])
    for decode in (span_dp, span_mst):
        result = decode(cands_obj, link.double().numpy(), 1.0)
        assert result.heads[1:].tolist() == HEADS, decode.__name__


# ----------------------------------------------------------------------------------------- ablations
@pytest.mark.parametrize("scoring", ["span-span", "token-token", "span-token", "token-span"])
def test_every_gold_arc_has_a_finite_link_score_under_every_scoring(tiny_transformer_dir, scoring) -> None:
    """With the mutual term on, each gold (parent span, child span) pair must stay reachable; a token query that
    allowed no child positions once made every non-ROOT parent impossible (flat trees)."""
    forms = ["I", "love", "Tim", "'s", "cat"]
    heads = [2, 0, 5, 3, 2]
    spans = [(0, 1, 5)] + [(i, *hull) for i, hull in enumerate(hull_spans(heads), start=1)]  # candidate i = word i
    model = make(tiny_transformer_dir, scoring=scoring).eval()
    with torch.no_grad():
        out = model(queries(model, spans, forms))
    link = link_matrix(model, out, *(torch.tensor(col) for col in zip(*spans)), mutual=True)  # (6, 6)
    for child, head in enumerate(heads, start=1):
        assert math.isfinite(float(link[head, child])), (scoring, head, child)


def test_scoring_switches_select_terms(tiny_transformer_dir) -> None:
    spans = [(3, 3, 4), (3, 3, 3), (3, 1, 5), (2, 1, 5), (0, 1, 5)]
    forms = ["I", "love", "Tim", "'s", "cat"]
    root = torch.tensor([0, 2, 2, 5, 4])
    start = torch.tensor([1, 1, 2, 3, 4])
    end = torch.tensor([5, 5, 5, 5, 4])
    outs = {}
    for scoring in ("span-span", "token-token", "span-token", "token-span"):
        model = make(tiny_transformer_dir, scoring=scoring).eval()
        batch = queries(model, spans, forms)
        with torch.no_grad():
            out = model(batch)
        outs[scoring] = out
        logp = torch.log_softmax(out.parent.float(), -1)  # (batch, 3, 1 + n)
        logs = torch.nn.functional.logsigmoid(out.child.float())  # (batch, 3, 1 + n)
        terms = (0,) if scoring.endswith("token") else (0, 1, 2)
        lp = parent_logp(model, out, root, start, end)
        cl = child_logp(model, out, root, start, end)
        cands = (root, start, end)
        for b in range(4):
            for c in range(5):
                want_p = sum(float(logp[b, t, cands[t][c]]) if out.parent_mask[b, t, cands[t][c]] else -math.inf for t in terms)
                want_c = sum(float(logs[b, t, cands[t][c]]) if out.child_mask[b, cands[t][c]] else -math.inf for t in terms)
                assert (lp[b, c] == want_p) if math.isinf(want_p) else math.isclose(float(lp[b, c]), want_p, rel_tol=1e-5)
                assert (cl[b, c] == want_c) if math.isinf(want_c) else math.isclose(float(cl[b, c]), want_c, rel_tol=1e-5)
        if scoring.endswith("token"):  # token answer: the parent's span does not matter
            assert float(lp[0, 1]) == float(lp[0, 2])
        same = torch.allclose(out.hidden[0], out.hidden[1], atol=1e-5) and torch.allclose(out.hidden[0], out.hidden[2], atol=1e-5)
        # token query: three spans of word 3 are one and the same query (only its root is signified)
        assert same == scoring.startswith("token"), scoring
        # loss: a token answer trains only the root rows of the heads
        targets = model.link_targets([[2, 0, 5, 3, 2]] * 5, None, spans)
        model.zero_grad()
        model.train()
        model.loss(batch, targets).backward()
        for head in (model.parent_head, model.child_head):
            grad = head.weight.grad.abs().sum(1)  # (3,)
            assert bool(grad[0] > 0)
            assert bool((grad[1:] > 0).all()) == scoring.endswith("span"), scoring
    with pytest.raises(ValueError):
        make(tiny_transformer_dir, scoring="span")
    # -mutual: the link matrix without the child term is the transposed parent scores
    model = make(tiny_transformer_dir, mutual_weight=0.0).eval()
    batch = queries(model, spans[:4] + [(0, 1, 5)], forms)
    with torch.no_grad():
        out = model(batch)
    r, s, e = (torch.tensor([x[k] for x in spans[:4] + [(0, 1, 5)]]) for k in range(3))
    assert torch.equal(link_matrix(model, out, r, s, e), parent_logp(model, out, r, s, e).T)
    assert not torch.equal(link_matrix(model, out, r, s, e, mutual=True), parent_logp(model, out, r, s, e).T)
    assert torch.equal(link_matrix(model, out, r, s, e, mutual=True), parent_logp(model, out, r, s, e).T + child_logp(model, out, r, s, e))
    targets = model.link_targets([[2, 0, 5, 3, 2]] * 5, None, torch.stack([r, s, e], 1))
    with torch.no_grad():
        terms = model.loss_terms(batch, targets)
    assert float(terms["loss"]) == pytest.approx(float(terms["parent"]))  # no label targets, no mutual term


# ----------------------------------------------------------------------------------------- config
def test_export_config_and_rebuild(tiny_transformer_dir, tmp_path) -> None:
    model = make(tiny_transformer_dir, upos_vocab=["NOUN", "VERB"], objective="bce", scoring="token-span").eval()
    cfg = model.export_config()
    cfg2 = json.loads(json.dumps(cfg))
    assert cfg2["model_type"] == "span_linker" and cfg2["labels"] == LABELS and cfg2["scoring"] == "token-span"
    model.save_assets(tmp_path / "assets")
    rebuilt = SpanLinker.from_config(cfg2, tmp_path / "assets").eval()
    rebuilt.load_state_dict(model.state_dict())
    assert rebuilt.model_name == model.model_name
    assert torch.equal(rebuilt.marker_ids, model.marker_ids)
    cached = model.queries.sentence_pieces(FORMS, ["PRON", "VERB", "NOUN", "NOUN"])
    batch = model.queries.collate([model.queries.build(cached, *s) for s in GOLD_SPANS])
    assert "upos" in batch
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(batch).parent, model(batch).parent)
        torch.testing.assert_close(rebuilt(batch).child, model(batch).child)
    assert np.isfinite(model.export_config()["max_len"])
