"""The span parser's candidate algorithms, apart from any model: candidate sets, structural links, retrieval.

``candidate_queries`` collects a sentence's distinct candidate spans (one MRC query each), ``spans_for_given`` adds
the spans that given heads need; ``retrieve_parents`` reads
the best parent span of each query from its link tables (the paper's retrieval: a parent the proposal missed becomes
a candidate); ``structural_link`` is the model-free link matrix of the too-long fallback; ``link_head_scores``
reads each word's score for every head from a decoded sentence's link scores (its confidence); ``groups`` cuts a list
of sentences into runs of bounded size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from spandep.decoding.constraints import Fixed
from spandep.decoding.spans import SpanCandidates
from spandep.masking import NEG_INF

__all__ = [
    "WordSpans", "candidate_queries", "groups", "link_head_scores", "prune_spans", "retrieve_parents", "spans_for_given", "structural_link",
]

WordSpans = Sequence[Sequence[tuple[int, int, float]]]  # per word 1..n: (start, end, score) tuples


def candidate_queries(
    word_spans: WordSpans, n: int, extra: Sequence[tuple[int, int, int, float]] = ()
) -> SpanCandidates:
    """The distinct candidate spans of one sentence, ROOT's ``(0, 1, n)`` at index 0, one query each.

    ``word_spans[i - 1]`` are word i's proposed ``(start, end, score)`` (``topk_spans``); ``extra`` more
    ``(root, start, end, score)`` rows (retrieved spans). Duplicates are merged (highest score kept); the order is
    that of first occurrence, so appending ``extra`` never moves an existing candidate.
    """
    if len(word_spans) != n:
        raise ValueError(f"{len(word_spans)} span lists for {n} words")
    rows = [(w, s, e, score) for w, spans in enumerate(word_spans, start=1) for s, e, score in spans]
    return SpanCandidates.from_lists(n, rows + list(extra))


def prune_spans(word_spans: WordSpans, share: float) -> list[list[tuple[int, int, float]]]:
    """Each word's spans (best first, scores are log-probabilities) without those after its best whose probability
    is below ``share`` of the best's: ``score < best + log(share)``. ``share`` 0 keeps every span; 1 keeps the best
    (and spans tied with it)."""
    if share <= 0:
        return [list(spans) for spans in word_spans]
    floor = math.log(share)
    return [[span for j, span in enumerate(spans) if j == 0 or span[2] >= spans[0][2] + floor] for spans in word_spans]


def spans_for_given(word_spans: WordSpans, start_lp: np.ndarray, end_lp: np.ndarray, fixed: Fixed) -> list[list[tuple[int, int, float]]]:
    """``word_spans`` with the spans the given arcs of ``fixed`` need and the proposal's top-k may miss
    (docs/constrained.md): for each given arc h → d, d's best span without h when all of d's hold it, then h's best
    span holding each of d's spans; twice over, so that a chain of given arcs reaches up. Best is by the proposal's
    separable score over its log-prob tables ``(1 + n, 1 + n)`` ``[word, boundary]``: the best start at or before a
    bound, the best end at or after one."""
    spans = [list(w) for w in word_spans]
    arcs = [(d, h) for d, h in fixed.given() if h > 0]

    def add(word: int, first: tuple[int, int], last: tuple[int, int]) -> None:
        s = first[0] + int(np.argmax(start_lp[word, first[0] : first[1] + 1]))
        e = last[0] + int(np.argmax(end_lp[word, last[0] : last[1] + 1]))
        if all((s, e) != (a, b) for a, b, _ in spans[word - 1]):
            spans[word - 1].append((s, e, float(start_lp[word, s] + end_lp[word, e])))

    n = len(spans)
    for d, h in arcs:
        if any(not s <= h <= e for s, e, _ in spans[d - 1]):
            continue  # d has a span without its head
        if h < d:
            add(d, (h + 1, d), (d, n))
        else:
            add(d, (1, d), (d, h - 1))
    for _ in range(2):
        for d, h in arcs:
            for s, e, _ in list(spans[d - 1]):
                if not s <= h <= e:
                    add(h, (1, min(s, h)), (max(e, h), n))
    return spans


def structural_link(cands: SpanCandidates, allow_root_in_span: bool = False) -> np.ndarray:
    """A link matrix ``(S, S)`` without a model: 0 where candidate c may be a child of candidate p, else ``-inf``.

    The same constraints as the linker's masks: ``p.start ≤ c.start``, ``c.end ≤ p.end``, ``p.root ≠ c.root`` and
    ``p.root`` outside ``[c.start, c.end]`` (unless ``allow_root_in_span``); ROOT (index 0) is never a child.
    """
    r, s, e = cands.root, cands.start, cands.end  # (S,) each
    ok = (s[:, None] <= s[None, :]) & (e[None, :] <= e[:, None]) & (r[:, None] != r[None, :])  # (S, S) [p, c]
    if not allow_root_in_span:
        ok &= (r[:, None] < s[None, :]) | (r[:, None] > e[None, :])  # (S, S)
    ok[0, :] |= True  # ROOT may parent any span (its root 0 lies outside every word span)
    ok[:, 0] = False  # ROOT has no parent
    return np.where(ok, 0.0, NEG_INF)  # (S, S)


def retrieve_parents(table: torch.Tensor, n_words: torch.Tensor) -> list[tuple[int, int, int] | None]:
    """The argmax parent span ``(root, start, end)`` of every query of a batch (docs/design.md, "Retrieval"), from the
    parent side ``(batch, 3, W)`` of its ``LinkScorer.link_tables``.

    Maximises ``score_parent = log p_root(r) + log p_start(s') + log p_end(e')`` jointly over valid spans
    ``s' ≤ r ≤ e'`` (the linker's masks already enforce ``s' ≤ s``, ``e' ≥ e`` and the root constraint), ROOT's span
    ``(0, 1, n)`` included. ``None`` where the argmax is ROOT or no parent is allowed (the ROOT query). Exact: the
    score is separable, so for each root the best start is a prefix maximum and the best end a suffix maximum.
    """
    root_lp, start_lp, end_lp = table[:, 0], table[:, 1], table[:, 2]  # (batch, W) each
    best_start, arg_start = torch.cummax(start_lp, dim=1)  # (batch, W): best start ≤ r
    rev_end, rev_arg = torch.cummax(end_lp.flip(1), dim=1)  # (batch, W) over the reversed positions
    best_end = rev_end.flip(1)  # (batch, W): best end ≥ r
    arg_end = end_lp.size(1) - 1 - rev_arg.flip(1)  # (batch, W)
    total = root_lp + best_start + best_end  # (batch, W); column 0 is meaningless for ROOT, replaced below
    n = n_words.to(table.device).view(-1, 1)  # (batch, 1)
    root_total = root_lp[:, 0] + start_lp[:, 1] + end_lp.gather(1, n).squeeze(1)  # (batch,) ROOT's span (0, 1, n)
    total[:, 0] = root_total
    score, best = total.max(dim=1)  # (batch,)
    starts = arg_start.gather(1, best.unsqueeze(1)).squeeze(1)  # (batch,)
    ends = arg_end.gather(1, best.unsqueeze(1)).squeeze(1)  # (batch,)
    found: list[tuple[int, int, int] | None] = []
    for r, s, e, v in zip(best.tolist(), starts.tolist(), ends.tolist(), score.tolist()):
        found.append((r, s, e) if r > 0 and v != NEG_INF and s <= r <= e else None)
    return found


def groups(costs: list[int], budget: int) -> list[list[int]]:
    """Consecutive runs of indices into ``costs`` costing at most ``budget`` each (a costlier item is a group
    alone)."""
    groups: list[list[int]] = []
    size = budget + 1
    for i, cost in enumerate(costs):
        if size + cost > budget:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += cost
    return groups


def link_head_scores(link: np.ndarray, roots: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Each word's score for every head, from weighted link scores ``link (S, S)`` ``[parent, child]`` over
    candidates rooted at ``roots (S,)`` and each word's chosen candidate ``chosen (n,)``: the best link of its chosen
    span to a parent span rooted at that head → ``(n, 1 + n)``, ``-inf`` where no candidate parent is rooted there."""
    n = len(chosen)
    columns = link[:, chosen].T  # (n, S): each word's chosen span against every parent candidate
    scores = np.full((n, n + 1), -np.inf)  # (n, 1 + n)
    np.maximum.at(scores, (np.repeat(np.arange(n), len(roots)), np.tile(roots, n)), columns.ravel())
    return scores

