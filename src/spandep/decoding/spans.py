"""Span-based tree decoding (Gan et al., 2022, "Inference"): trees built from candidate subtree spans.

A sentence has words 1..n; every word i heads a subtree whose span is ``(root=i, start, end)``.
Decoding chooses one candidate span per word and links them into a tree; the objective is

    score(T) = sum over words i of score_span(span_i) + lam * sum over arcs (h -> d) of link(span_h, span_d)

where ``span_0`` is the ROOT span ``(0, 1, n)`` (candidate index 0, score 0).

* :func:`span_dp` is the projective decoder (the paper's Algorithm 1): exact over all projective trees
  in which the subtree of every word i covers exactly the chosen ``[start_i, end_i]``.
* :func:`span_mst` is the non-projective decoder: word-pair edge scores are maximised over the two
  words' candidate spans, then a maximum spanning arborescence with one ROOT child is taken.

Both keep given heads and subtrees (:class:`~spandep.decoding.constraints.Fixed`): ``span_dp`` over the candidates
and links that agree with them (``Fixed.span_masks``), ``span_mst`` by MST's constraints over its edge scores.

Conventions: scores are in log space; ``-inf`` (in a span score or a link score) marks something
impossible, and ``lam * -inf`` stays ``-inf`` for every finite ``lam`` (also 0). A tree is *feasible*
when its score is finite. NaN and ``+inf`` are rejected. Nothing here imports model code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import InitVar, dataclass, replace

import numpy as np

from spandep.decoding.constraints import Fixed
from spandep.decoding.mst import mst_single

__all__ = [
    "SpanCandidates",
    "SpanDecodeResult",
    "span_dp",
    "span_edge_scores",
    "span_mst",
    "span_tree_score",
]

NEG_INF = float("-inf")


@dataclass(eq=False)
class SpanCandidates:
    """Candidate subtree spans of one sentence of n words.

    Index 0 is always the ROOT span (root=0, start=1, end=n, score=0); every other candidate has
    ``1 <= start <= root <= end <= n``. Requirements (checked on construction, ``ValueError``
    otherwise): every word 1..n has at least one candidate, no (root, start, end) appears twice, scores
    are finite or ``-inf``. Use :meth:`from_lists` / :meth:`from_arrays` to add the ROOT span and merge
    duplicates (keeping the highest score).
    """

    n: int
    root: np.ndarray  # (S,) int64, word 1..n heading the span (0 for the ROOT span)
    start: np.ndarray  # (S,) int64, 1-based inclusive
    end: np.ndarray  # (S,) int64
    score: np.ndarray  # (S,) float64, span score in log space (log P_start + log P_end)
    distinct: InitVar[bool] = False  # the triples are known to be distinct (from_arrays merged them)

    def __post_init__(self, distinct: bool) -> None:
        self.root = np.asarray(self.root, dtype=np.int64).reshape(-1)  # (S,)
        self.start = np.asarray(self.start, dtype=np.int64).reshape(-1)  # (S,)
        self.end = np.asarray(self.end, dtype=np.int64).reshape(-1)  # (S,)
        self.score = np.asarray(self.score, dtype=np.float64).reshape(-1)  # (S,)
        self._validate(check_distinct=not distinct)

    # ------------------------------------------------------------------------------ construction

    @classmethod
    def from_arrays(
        cls,
        n: int,
        root: Sequence[int] | np.ndarray,
        start: Sequence[int] | np.ndarray,
        end: Sequence[int] | np.ndarray,
        score: Sequence[float] | np.ndarray,
    ) -> SpanCandidates:
        """Candidates of real words (no ROOT span: it is added at index 0). Duplicated
        (root, start, end) triples are merged keeping the highest score; the others keep the order of
        their first occurrence."""
        root_a = np.asarray(root, dtype=np.int64).reshape(-1)  # (m,)
        start_a = np.asarray(start, dtype=np.int64).reshape(-1)  # (m,)
        end_a = np.asarray(end, dtype=np.int64).reshape(-1)  # (m,)
        score_a = np.asarray(score, dtype=np.float64).reshape(-1)  # (m,)
        m = root_a.size
        if not (start_a.size == end_a.size == score_a.size == m):
            raise ValueError("root, start, end and score must have the same length")
        if np.isnan(score_a).any():
            raise ValueError("span scores must not be NaN")
        if m and (root_a.min() < 1 or root_a.max() > n):
            raise ValueError(f"candidate roots must be words 1..{n} (the ROOT span is added automatically)")
        base = n + 2
        key = (root_a * base + start_a) * base + end_a  # (m,)
        sorted_key = np.sort(key)  # (m,)
        if m < 2 or (sorted_key[1:] != sorted_key[:-1]).all():  # no duplicates (the usual case): keep all
            pick, best_kept = np.arange(m), score_a  # (m,) each
        else:
            uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            best = np.full(uniq.size, NEG_INF)  # (u,)
            np.maximum.at(best, inverse, score_a)
            keep = np.argsort(first, kind="stable")  # (u,) unique keys in first-occurrence order
            pick, best_kept = first[keep], best[keep]  # (u,) each
        return cls(
            int(n),
            np.concatenate([[0], root_a[pick]]),  # (S,)
            np.concatenate([[1], start_a[pick]]),  # (S,)
            np.concatenate([[n], end_a[pick]]),  # (S,)
            np.concatenate([[0.0], best_kept]),  # (S,)
            distinct=True,
        )

    @classmethod
    def from_lists(cls, n: int, items: Iterable[tuple[int, int, int, float]]) -> SpanCandidates:
        """Candidates from ``(root, start, end, score)`` tuples of real words; see :meth:`from_arrays`."""
        rows = list(items)
        if not rows:
            return cls.from_arrays(n, [], [], [], [])
        root, start, end, score = zip(*rows)
        return cls.from_arrays(n, root, start, end, score)

    # ------------------------------------------------------------------------------ queries

    @property
    def size(self) -> int:
        """Number of candidates S, the ROOT span included."""
        return int(self.root.size)

    def _validate(self, check_distinct: bool = True) -> None:
        n = self.n
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        size = self.root.size
        if not (self.start.size == self.end.size == self.score.size == size):
            raise ValueError("root, start, end and score must have the same length")
        if size == 0:
            raise ValueError("no candidates: candidate 0 must be the ROOT span")
        if (self.root[0], self.start[0], self.end[0], self.score[0]) != (0, 1, n, 0.0):
            raise ValueError(f"candidate 0 must be the ROOT span (root=0, start=1, end={n}, score=0)")
        root, start, end = self.root[1:], self.start[1:], self.end[1:]  # (S-1,)
        bad = np.flatnonzero((root < 1) | (root > n) | (start < 1) | (start > root) | (end < root) | (end > n))
        if bad.size:
            i = int(bad[0]) + 1
            raise ValueError(
                f"candidate {i} (root={self.root[i]}, start={self.start[i]}, end={self.end[i]}) must satisfy "
                f"1 <= start <= root <= end <= {n}"
            )
        if np.isnan(self.score).any() or np.isposinf(self.score).any():
            raise ValueError("span scores must be finite or -inf (no NaN, no +inf)")
        counts = np.bincount(root, minlength=n + 1)  # (n+1,)
        missing = np.flatnonzero(counts[1:] == 0) + 1
        if missing.size:
            raise ValueError(f"every word needs at least one candidate span; none for words {missing.tolist()}")
        base = n + 2
        key = (self.root * base + self.start) * base + self.end  # (S,)
        if check_distinct and np.unique(key).size != size:
            raise ValueError("duplicate candidate spans; build with SpanCandidates.from_arrays to merge them")


@dataclass(eq=False)
class SpanDecodeResult:
    """A decoded tree.

    ``heads`` (n+1,) int64 with ``heads[0] = 0``; ``chosen`` (n+1,) int64, the candidate index used for
    each word (``chosen[0] = 0``, the ROOT span), so a label can be read from the pair
    ``(chosen[heads[d]], chosen[d])``. ``score`` is the objective of the decoder that produced the tree:
    the span-tree score for :func:`span_dp`, the sum of edge scores for :func:`span_mst` (also when
    ``span_dp`` fell back). ``fallback`` is True when :func:`span_dp` found no feasible projective tree
    among the candidates and returned :func:`span_mst`'s tree instead.
    """

    heads: np.ndarray
    chosen: np.ndarray
    score: float
    fallback: bool = False


# ---------------------------------------------------------------------------------------------- helpers


def _weighted_link(cands: SpanCandidates, link: np.ndarray, lam: float) -> np.ndarray:
    """``lam * link`` with -inf kept as -inf (also for lam = 0), after checking shapes and values."""
    size = cands.size
    link = np.asarray(link, dtype=np.float64)  # (S, S)
    if link.shape != (size, size):
        raise ValueError(f"link must be ({size}, {size}) for {size} candidates, got {link.shape}")
    if np.isnan(link).any() or np.isposinf(link).any():
        raise ValueError("link scores must be finite or -inf (no NaN, no +inf)")
    if not np.isfinite(lam):
        raise ValueError(f"lam must be finite, got {lam}")
    impossible = np.isneginf(link)  # (S, S)
    weighted = float(lam) * np.where(impossible, 0.0, link)  # (S, S)
    weighted[impossible] = NEG_INF
    return weighted


def span_tree_score(
    cands: SpanCandidates, link: np.ndarray, lam: float, heads: np.ndarray, chosen: np.ndarray
) -> float:
    """Span-tree objective of a given choice: sum of the chosen spans' scores plus ``lam`` times the link
    score of every arc (parent's chosen candidate, child's chosen candidate). ``heads``/``chosen`` are
    (n+1,) with slot 0 for ROOT; no tree or span consistency is checked here."""
    weighted = _weighted_link(cands, link, lam)  # (S, S)
    heads = np.asarray(heads, dtype=np.int64)  # (n+1,)
    chosen = np.asarray(chosen, dtype=np.int64).copy()  # (n+1,)
    chosen[0] = 0
    child = chosen[1:]  # (n,)
    parent = chosen[heads[1:]]  # (n,)
    return float(cands.score[child].sum() + weighted[parent, child].sum())


def _edge_tables(cands: SpanCandidates, link: np.ndarray, lam: float) -> tuple[np.ndarray, ...]:
    """Segment maxima of ``score[P] + score[C] + lam * link[P, C]`` by root word.

    Returns ``edges`` (n+1, n+1) with ``edges[h, d]`` the best pair for head h and dependent d,
    ``best_over_p`` (n+1, S) with the best over P of head h for each candidate C (in sorted order),
    ``order`` (S,) the candidate permutation grouping by root and ``sorted_root`` (S,).
    """
    n = cands.n
    weighted = _weighted_link(cands, link, lam)  # (S, S)
    order = np.argsort(cands.root, kind="stable")  # (S,) ROOT span first, then grouped by word
    sorted_root = cands.root[order]  # (S,)
    counts = np.bincount(sorted_root, minlength=n + 1)  # (n+1,), all >= 1 (validated)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])  # (n+1,)
    score = cands.score[order]  # (S,)
    pair = weighted[np.ix_(order, order)]  # (S, S) [P, C] in sorted order
    pair += score[:, None]
    pair += score[None, :]
    best_over_p = np.maximum.reduceat(pair, offsets, axis=0)  # (n+1, S) [h, C]
    edges = np.maximum.reduceat(best_over_p, offsets, axis=1)  # (n+1, n+1) [h, d]
    return edges, best_over_p, order, sorted_root


def span_edge_scores(cands: SpanCandidates, link: np.ndarray, lam: float) -> np.ndarray:
    """Word-pair scores for MST, ``(n+1, n+1)`` indexed ``[d, h]`` (as :func:`mst_single` takes them):
    the max over candidates P of h (only the ROOT span for h = 0) and C of d of
    ``score[P] + score[C] + lam * link[P, C]``."""
    edges, _, _, _ = _edge_tables(cands, link, lam)
    return edges.T.copy()  # (n+1, n+1) [d, h]


# ---------------------------------------------------------------------------------------------- decoders


def span_mst(cands: SpanCandidates, link: np.ndarray, lam: float, fixed: Fixed | None = None) -> SpanDecodeResult:
    """Non-projective span decoding: edge score(h -> d) = max over candidates P of h and C of d of
    ``score[P] + score[C] + lam * link[P, C]``, then a one-root maximum spanning arborescence in log
    space (keeping ``fixed``: :func:`mst_single`). ``chosen[d]`` is the C of the maximising pair for the chosen
    head. Always returns a tree (arcs scored -inf are used only when no tree avoids them)."""
    n = cands.n
    edges, best_over_p, order, sorted_root = _edge_tables(cands, link, lam)
    heads = mst_single(edges.T.copy(), fixed)  # (n+1,)
    heads[0] = 0
    # For each candidate C (sorted order): its best value under the head chosen for its word.
    value = best_over_p[heads[sorted_root], np.arange(sorted_root.size)]  # (S,)
    target = edges[heads[sorted_root], sorted_root]  # (S,) the edge score of C's word
    hit = np.flatnonzero(value == target)  # positions attaining their word's edge score
    words, first = np.unique(sorted_root[hit], return_index=True)  # every word 0..n is attained
    chosen = np.zeros(n + 1, dtype=np.int64)  # (n+1,)
    chosen[words] = order[hit[first]]
    chosen[0] = 0
    total = float(edges[heads[1:], np.arange(1, n + 1)].sum())
    return SpanDecodeResult(heads=heads.astype(np.int64), chosen=chosen, score=total, fallback=False)


def span_dp(cands: SpanCandidates, link: np.ndarray, lam: float, fixed: Fixed | None = None) -> SpanDecodeResult:
    """Projective span decoding (the paper's Algorithm 1), exact.

    best(c) = score[c] + the best exact tiling of ``[start_c, root_c - 1]`` and ``[root_c + 1, end_c]`` by
    child candidates x, each contributing ``best(x) + lam * link[c, x]``; ROOT takes exactly one child
    spanning ``[1, n]``. The tiling DP runs for all parents at once: ``F[j, p]`` is the best tiling of
    ``[start_p, j - 1]`` where p's own root word counts as a tile of weight 0 and children containing it
    are forbidden. Spans are visited by (end, length), so each finished span is pushed into every parent
    with one vectorised update: O(S^2) work in O(#distinct spans + n) numpy steps.

    If no feasible (finite-score) projective tree exists, returns :func:`span_mst`'s result with
    ``fallback=True``. ``fixed``: the best such tree that keeps them, over the candidates and links that agree with
    them; where none does (given arcs that cross included) the fallback keeps them (``ConstraintError`` only for
    constraints that no tree keeps).
    """
    if fixed:
        fixed.check(cands.n, projective=False)
        usable, allowed = fixed.span_masks(cands.root, cands.start, cands.end)  # (S,), (S, S)
        kept = SpanCandidates(cands.n, cands.root, cands.start, cands.end, np.where(usable, cands.score, NEG_INF), distinct=True)
        result = _span_dp(kept, np.where(allowed, np.asarray(link, dtype=np.float64), NEG_INF), lam)
        if result is None:  # given arcs that cross included: no projective tree keeps them
            return replace(span_mst(cands, link, lam, fixed), fallback=True)
        return result
    result = _span_dp(cands, link, lam)
    return replace(span_mst(cands, link, lam), fallback=True) if result is None else result


def _span_dp(cands: SpanCandidates, link: np.ndarray, lam: float) -> SpanDecodeResult | None:
    """:func:`span_dp` without constraints; ``None`` when no projective tree has a finite score."""
    n = cands.n
    size = cands.size
    weighted = _weighted_link(cands, link, lam)  # (S, S) [parent, child]
    root, start, end, score = cands.root, cands.start, cands.end, cands.score
    # allowed[p, c]: c may be a direct child of p (inside p's span, not covering p's root word).
    allowed = (start[:, None] <= start[None, :]) & (end[None, :] <= end[:, None])  # (S, S)
    allowed &= ~((start[None, :] <= root[:, None]) & (root[:, None] <= end[None, :]))
    allowed[0, :] = False  # ROOT is handled at the end
    allowed[:, 0] = False
    child_weight = np.where(allowed, weighted, NEG_INF).T.copy()  # (S, S) [child, parent], rows contiguous

    tiling = np.full((n + 2, size), NEG_INF)  # (n+2, S) F[j, p]
    tiling[start[1:], np.arange(1, size)] = 0.0
    back = np.full((n + 2, size), -2, dtype=np.int64)  # (n+2, S) last tile: child index, -1 = own root
    best = np.full(size, NEG_INF)  # (S,)

    # Real candidates grouped by identical (start, end), visited by end, then by length.
    real = np.arange(1, size)  # (S-1,)
    visit = real[np.lexsort((-start[real], end[real]))]  # (S-1,)
    vs, ve = start[visit], end[visit]  # (S-1,)
    cut = np.flatnonzero((vs[1:] != vs[:-1]) | (ve[1:] != ve[:-1])) + 1
    bounds = np.concatenate([[0], cut, [visit.size]])  # (G+1,)
    by_root_order = real[np.argsort(root[real], kind="stable")]  # (S-1,)
    root_bounds = np.searchsorted(root[by_root_order], np.arange(1, n + 2))  # (n+1,)
    columns = np.arange(size)  # (S,)

    group = 0
    groups = bounds.size - 1
    for e in range(1, n + 1):
        own = by_root_order[root_bounds[e - 1] : root_bounds[e]]  # parents whose root word is e
        tiling[e + 1, own] = tiling[e, own]
        back[e + 1, own] = -1
        row = tiling[e + 1]  # (S,) view, updated in place
        while group < groups and ve[bounds[group]] == e:
            members = visit[bounds[group] : bounds[group + 1]]  # same span, different roots
            s = int(vs[bounds[group]])
            group += 1
            best[members] = score[members] + row[members]
            if members.size == 1:
                c = int(members[0])
                if best[c] == NEG_INF:
                    continue
                values = tiling[s] + (child_weight[c] + best[c])  # (S,)
                better = values > row  # (S,)
                row[better] = values[better]
                back[e + 1, better] = c
            else:
                through = child_weight[members] + best[members][:, None]  # (g, S)
                arg = through.argmax(axis=0)  # (S,)
                values = tiling[s] + through[arg, columns]  # (S,)
                better = values > row  # (S,)
                row[better] = values[better]
                back[e + 1, better] = members[arg[better]]

    whole = np.flatnonzero((start == 1) & (end == n) & (root >= 1))  # ROOT's possible children
    total = best[whole] + weighted[0, whole] if whole.size else np.empty(0)  # (w,)
    if whole.size == 0 or not np.isfinite(total.max()):
        return None
    top = int(whole[int(total.argmax())])

    heads = np.zeros(n + 1, dtype=np.int64)  # (n+1,)
    chosen = np.zeros(n + 1, dtype=np.int64)  # (n+1,)
    chosen[root[top]] = top
    stack = [top]
    while stack:
        p = stack.pop()
        j = int(end[p]) + 1
        while j > start[p]:
            x = int(back[j, p])
            if x == -1:
                j = int(root[p])
            else:
                if x < 0:  # pragma: no cover - a finite score always has a complete back-trace
                    raise RuntimeError("span_dp back-trace broken")
                heads[root[x]] = root[p]
                chosen[root[x]] = x
                stack.append(x)
                j = int(start[x])
    return SpanDecodeResult(heads=heads, chosen=chosen, score=float(total.max()), fallback=False)
