"""Where span inference reads each word's label: the linker's label distribution of the word's chosen query at its
decoded head.

Two ways to hold it between scoring and decoding (both have ``rows``; :func:`read_labels` reads either, giving
each arc's best label and its probability):

* :class:`LabelTable` — the best label (and its probability) of every candidate's query at every parent root,
  computed while scoring.
  Costs a label scorer pass over all S·(1 + n) pairs, but holds only ids: what decoding-setting sweeps keep for a
  whole treebank (``spandep tune``).
* :class:`LabelStates` — the linker's states of every candidate's query; labels are scored at the n decoded arcs
  only. What ``parse_spans`` uses: it decodes sentences a group at a time, so the states of one group are held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from spandep.models.layers import evaluating
from spandep.models.span.linking import LinkScorer
from spandep.models.treebanks import restrict

__all__ = ["LabelStates", "LabelTable", "LinkLabels", "read_labels"]


@dataclass
class LabelTable:
    """``ids (S, 1 + n)``: the best label id of candidate q's query at parent root t; ``probs (S, 1 + n)`` its
    probability."""

    ids: np.ndarray
    probs: np.ndarray

    def at(self, chosen: np.ndarray, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Label ids and probabilities of the queries ``chosen (n,)`` at the parent roots ``heads (n,)`` → ``(n,)``
        each."""
        return self.ids[chosen, heads], self.probs[chosen, heads]

    def rows(self, m: int) -> LabelTable:
        """The first ``m`` candidates only."""
        return LabelTable(self.ids[:m], self.probs[:m])


@dataclass
class LabelStates:
    """The linker's ``hidden (S, 1 + n, d)`` and ``query (S, d)`` (or ``None``) states of each candidate's query,
    and the labels a parse may give ``allowed (labels,)`` (``None``: all)."""

    linker: LinkScorer
    hidden: torch.Tensor
    query: torch.Tensor | None
    allowed: torch.Tensor | None = None

    def arcs(self, chosen: np.ndarray, heads: np.ndarray) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The states a label is scored from at each arc: the query's state at the head ``(n, d)`` and the
        query's own state ``(n, d)`` (``None`` when the linker keeps none)."""
        rows = torch.as_tensor(chosen, dtype=torch.long)  # (n,)
        at_head = self.hidden[rows, torch.as_tensor(heads, dtype=torch.long)]  # (n, d)
        return at_head, None if self.query is None else self.query[rows]

    def rows(self, m: int) -> LabelStates:
        """The first ``m`` candidates only."""
        return LabelStates(self.linker, self.hidden[:m], None if self.query is None else self.query[:m], self.allowed)


LinkLabels = LabelTable | LabelStates


def read_labels(requests: Sequence[tuple[LinkLabels, np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Label ids and their probabilities ``(n,)`` each at the decoded arcs of many sentences: ``(labels, chosen (n,),
    heads (n,))`` each.

    Table lookups are direct; the arcs of every :class:`LabelStates` (one linker, one set of allowed labels) are
    scored in a single pass.
    """
    found: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(requests)
    pending: list[int] = []
    for j, (labels, chosen, heads) in enumerate(requests):
        if isinstance(labels, LabelTable):
            found[j] = labels.at(chosen, heads)
        else:
            pending.append(j)
    if pending:
        linker, allowed = requests[pending[0]][0].linker, requests[pending[0]][0].allowed  # type: ignore[union-attr]
        arcs = [requests[j][0].arcs(requests[j][1], requests[j][2]) for j in pending]  # type: ignore[union-attr]
        device = next(linker.parameters()).device
        at_head = torch.cat([a for a, _ in arcs]).unsqueeze(1).to(device)  # (N, 1, d): one context position each
        query = None if arcs[0][1] is None else torch.cat([q for _, q in arcs]).to(device)  # type: ignore[misc]  # (N, d)
        with evaluating(linker):  # no dropout, whatever mode the caller left the model in
            scores = linker.label_scores(at_head, query, at_head.new_zeros(at_head.size(0), 1, dtype=torch.long))  # (N, 1, labels)
            best = restrict(scores, allowed)  # (N, 1, labels)
        ids = best[:, 0].argmax(-1)  # (N,)
        probs = best[:, 0].softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1).double().cpu().numpy()  # (N,)
        ids_np = ids.cpu().numpy()  # (N,)
        bounds = np.cumsum([0] + [a.size(0) for a, _ in arcs])
        for j, lo, hi in zip(pending, bounds[:-1], bounds[1:]):
            found[j] = ids_np[lo:hi], probs[lo:hi]
    return found  # type: ignore[return-value]
