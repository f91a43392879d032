"""What a decoder keeps: heads a user already knows and word ranges that must be subtrees (docs/constrained.md).

A :class:`Fixed` holds one sentence's constraints: a given head per word (``FREE``: none) and spans ``(start,
end)`` whose words must be exactly one word's subtree. Every decoder takes one and returns the best tree of its
kind among those that keep it, exactly as it returns the best tree without one:

* arc decoders (``mst``, ``eisner``) read :meth:`Fixed.arc_scores`: a word's other heads and the arcs leaving a
  span are ``-inf`` (so used only when no tree avoids them, and no tree keeping the constraints needs one); MST then
  lowers the arcs entering a span as it lowers ROOT's arcs (one entering arc per span, :meth:`Fixed.entering`), and
  Eisner forbids the chart items that cross a span (:meth:`Fixed.crossing`);
* ``span_dp`` leaves out the candidates and links that contradict them (:meth:`Fixed.span_masks`), ``span_mst``
  gives its edge scores to MST with the constraints.

Constraints that no tree of the decoder's kind keeps (two given roots, a given cycle, crossing spans, given arcs that
cross for a projective decoder, ...) are a :class:`ConstraintError` naming the words (:meth:`Fixed.check`, and
:meth:`Fixed.check_kept` on the decoded tree for what only the decoding shows); never a tree that breaks them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spandep.errors import SpandepError

__all__ = ["FREE", "ConstraintError", "Fixed"]

FREE = -1  # a word whose head is not given


class ConstraintError(SpandepError, ValueError):
    """Given heads or subtrees that no tree of the decoder's kind keeps; ``str()`` names the words."""

    exit_code = 2


def _crosses(a: int, b: int, c: int, d: int) -> bool:
    """Whether the word ranges ``[a, b]`` and ``[c, d]`` (a ≤ b, c ≤ d) overlap without one holding the other."""
    return a < c <= b < d or c < a <= d < b


@dataclass(frozen=True)
class Fixed:
    """One sentence's constraints: ``heads[i - 1]`` the given head of word ``i`` (0: ROOT, :data:`FREE`: not given)
    and ``spans``, ``(start, end)`` word ranges (1-based, inclusive) that must each be one word's whole subtree."""

    heads: tuple[int, ...]
    spans: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, heads: Sequence[int | None], spans: Sequence[tuple[int, int]] = ()) -> Fixed:
        """From a head per word (``None`` or :data:`FREE`: not given) and spans; ``ValueError`` for a value out of
        range (a head outside 0..n or the word itself, a span outside 1..n)."""
        n = len(heads)
        given = tuple(FREE if h is None else int(h) for h in heads)
        for d, h in enumerate(given, start=1):
            if h != FREE and not (0 <= h <= n and h != d):
                raise ValueError(f"word {d}: given head {h} must be 0 (root) or another word 1..{n}")
        pairs = tuple((int(s), int(e)) for s, e in spans)
        for s, e in pairs:
            if not 1 <= s <= e <= n:
                raise ValueError(f"subtree {s}-{e} must be a range of words within 1..{n}")
        return cls(given, tuple(sorted(set(pairs))))

    @property
    def n(self) -> int:
        return len(self.heads)

    def given(self) -> list[tuple[int, int]]:
        """The given arcs ``(dependent, head)``."""
        return [(d, h) for d, h in enumerate(self.heads, start=1) if h != FREE]

    def __bool__(self) -> bool:
        return bool(self.spans) or any(h != FREE for h in self.heads)

    # ------------------------------------------------------------------ what no tree keeps
    def problem(self, projective: bool) -> str | None:
        """Why no tree (projective with ``projective``) with one ROOT child keeps these constraints, as far as they
        show it alone; ``None`` when none is seen."""
        arcs = self.given()
        roots = [d for d, h in arcs if h == 0]
        if len(roots) > 1:
            return f"words {roots[0]} and {roots[1]} are both given head 0, and a tree has one root"
        cycle = self._cycle()
        if cycle:
            return f"the given heads of words {', '.join(map(str, cycle))} form a cycle"
        for j, (s, e) in enumerate(self.spans):
            for t, u in self.spans[j + 1 :]:
                if _crosses(s, e, t, u):
                    return f"subtrees {s}-{e} and {t}-{u} overlap, and two subtrees nest or are apart"
            inside = [d for d in range(s, e + 1) if self.heads[d - 1] != FREE and not s <= self.heads[d - 1] <= e]
            if len(inside) > 1:
                return f"words {inside[0]} and {inside[1]} of subtree {s}-{e} are both given heads outside it"
            if inside and self.heads[inside[0] - 1] == 0 and (s, e) != (1, self.n):
                return f"word {inside[0]} of subtree {s}-{e} is given head 0, but the root's subtree is the whole sentence"
            leaving = [d for d, h in arcs if not s <= d <= e and s <= h <= e]
            if leaving:
                return f"word {leaving[0]} is given head {self.heads[leaving[0] - 1]} inside subtree {s}-{e} without being in it"
        if projective:
            for j, (d, h) in enumerate(arcs):
                for d2, h2 in arcs[j + 1 :]:
                    (a, b), (c, e) = sorted((d, h)), sorted((d2, h2))
                    if a < c < b < e or c < a < e < b:
                        return f"the given arcs {h}->{d} and {h2}->{d2} cross, and the decoder is projective: use the mst decoder"
        return None

    def check(self, n: int, projective: bool) -> None:
        """:class:`ConstraintError` when these are not a sentence of ``n`` words' or no tree keeps them
        (:meth:`problem`)."""
        if self.n != n:
            raise ConstraintError(f"constraints of {self.n} words given for a sentence of {n}")
        problem = self.problem(projective)
        if problem:
            raise ConstraintError(problem)

    def broken(self, heads: Sequence[int]) -> str | None:
        """What the tree ``heads`` (word i's head at ``i - 1``) does not keep, or ``None``."""
        lost = [d for d, h in self.given() if heads[d - 1] != h]
        if lost:
            return f"words {', '.join(map(str, lost))} lose their given heads"
        for s, e in self.spans:
            entering = sum(1 for d in range(s, e + 1) if not s <= heads[d - 1] <= e)
            leaving = any(s <= heads[d - 1] <= e for d in range(1, self.n + 1) if not s <= d <= e)
            if entering != 1 or leaving:
                return f"words {s}-{e} are not one subtree"
        return None

    def check_kept(self, heads: Sequence[int], projective: bool) -> None:
        """:class:`ConstraintError` when the decoded ``heads`` do not keep the constraints: the best tree of the
        decoder's kind breaks them only when none keeps them (a projective tree, for given arcs that leave the root
        nowhere to attach without crossing)."""
        broken = self.broken(heads)
        if broken:
            kind = "projective tree" if projective else "tree"
            raise ConstraintError(f"no {kind} keeps the given heads and subtrees ({broken}){': use the mst decoder' if projective else ''}")

    def _cycle(self) -> list[int]:
        """Words whose given heads form a cycle (one cycle), or an empty list."""
        state = [0] * (self.n + 1)  # 0 unseen, 1 on the current walk, 2 done
        for start in range(1, self.n + 1):
            walk, node = [], start
            while node > 0 and self.heads[node - 1] != FREE and state[node] == 0:
                state[node] = 1
                walk.append(node)
                node = self.heads[node - 1]
            if node > 0 and state[node] == 1:
                return walk[walk.index(node) :]
            for w in walk:
                state[w] = 2
        return []

    # ------------------------------------------------------------------ arc decoders
    def arc_scores(self, scores: np.ndarray) -> np.ndarray:
        """A float64 copy of one sentence's ``scores (n+1, n+1)`` ``[dependent, head]`` where every arc the
        constraints forbid is ``-inf``: a word's heads other than its given one, an arc from inside a span to a word
        outside it. The scores' own ``-inf`` arcs become a finite penalty below every tree without them first, so
        that the decoders' penalty for ``-inf`` puts any tree keeping the constraints above every tree breaking one."""
        out = np.array(scores, dtype=np.float64)  # (n+1, n+1)
        words = out[1:]  # (n, n+1) view
        impossible = np.isneginf(words)  # (n, n+1)
        np.fill_diagonal(impossible[:, 1:], False)  # self loops are never chosen anyway
        if impossible.any():
            finite = np.where(np.isfinite(words), words, 0.0)  # (n, n+1)
            np.fill_diagonal(finite[:, 1:], 0.0)
            words[impossible] = -2.0 * (self.n + 1) * (float(np.abs(finite).max()) + 1.0)
        for d, h in self.given():
            keep = words[d - 1, h]
            words[d - 1, :] = -np.inf
            words[d - 1, h] = keep
        for s, e in self.spans:
            outside = np.ones(self.n, dtype=bool)  # (n,)
            outside[s - 1 : e] = False
            words[np.ix_(outside, np.arange(s, e + 1))] = -np.inf
        return out

    def entering(self) -> np.ndarray:
        """``(n+1, n+1)`` ``[dependent, head]``: the arcs entering a span from outside it (a word may be counted for
        several nested spans: the count of spans each arc enters)."""
        count = np.zeros((self.n + 1, self.n + 1), dtype=np.float64)  # (n+1, n+1)
        for s, e in self.spans:
            outside = np.ones(self.n + 1, dtype=bool)  # (n+1,) ROOT included
            outside[s : e + 1] = False
            count[s : e + 1, :] += outside[None, :]
        return count

    def crossing(self) -> np.ndarray:
        """``(n+1, n+1)`` ``[i, j]``: the intervals ``[i, j]`` that cross a span (Eisner's complete items that no tree
        keeping the spans uses)."""
        size = self.n + 1
        i = np.arange(size)[:, None]  # (n+1, 1)
        j = np.arange(size)[None, :]  # (1, n+1)
        out = np.zeros((size, size), dtype=bool)  # (n+1, n+1)
        for s, e in self.spans:
            out |= ((i < s) & (s <= j) & (j < e)) | ((s < i) & (i <= e) & (e < j))
        return out

    # ------------------------------------------------------------------ span decoders
    def span_masks(self, root: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For candidate spans ``(S,)`` each (index 0 the ROOT span): which candidates a tree keeping the constraints
        may choose ``(S,)`` and which ``[parent, child]`` links it may use ``(S, S)``."""
        heads = np.array((0, *self.heads), dtype=np.int64)  # (n+1,)
        usable = np.ones(root.size, dtype=bool)  # (S,)
        link = np.ones((root.size, root.size), dtype=bool)  # (S, S)
        given = heads[root] != FREE  # (S,) the child's word has a given head
        given[0] = False
        link &= ~given[None, :] | (root[:, None] == heads[root][None, :])
        roots = [d for d, h in self.given() if h == 0]
        if roots:
            link[0] &= root == roots[0]  # the given root is ROOT's one child
        for s, e in self.spans:
            inside_word = (s <= root) & (root <= e)  # (S,)
            within = (s <= start) & (end <= e)  # (S,)
            usable &= np.where(inside_word, within, ~((start < s) & (s <= end) & (end < e) | (s < start) & (start <= e) & (e < end)))
            part = within & ~((start == s) & (end == e))  # (S,) strictly inside the span
            link &= ~(part[None, :] & ~inside_word[:, None])  # whose parent is outside it: a second arc entering
        usable[0] = True
        return usable, link
