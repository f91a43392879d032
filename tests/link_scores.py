"""Candidate-level link scores for tests, read from a linker's per-position link tables (the path inference takes:
``LinkScorer.link_tables`` and ``link_from_tables``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from spandep.models.span.linking import LinkerOutput, LinkScorer, link_from_tables

Positions = torch.Tensor | Sequence[int]


def _at(table: torch.Tensor, root: Positions, start: Positions, end: Positions) -> torch.Tensor:
    """``Σ_term table[b, term, cand_term]`` for candidates ``(C,)`` shared by the batch; ``-inf`` outside the table."""
    width = table.size(-1)
    total = torch.zeros(table.size(0), len(root))  # (batch, C)
    for term, positions in enumerate((root, start, end)):
        index = torch.as_tensor(positions, dtype=torch.long)  # (C,)
        inside = (index >= 0) & (index < width)  # (C,)
        value = table[:, term, index.clamp(0, width - 1)]  # (batch, C)
        total = total + value.masked_fill(~inside, float("-inf"))
    return total


def parent_logp(model: LinkScorer, out: LinkerOutput, root: Positions, start: Positions, end: Positions) -> torch.Tensor:
    """``score_parent(P | query)`` of each candidate parent span ``(batch, C)``."""
    return _at(model.link_tables(out, mutual=False)[0], root, start, end)


def child_logp(model: LinkScorer, out: LinkerOutput, root: Positions, start: Positions, end: Positions) -> torch.Tensor:
    """``score_child(C | query)`` of each candidate child span ``(batch, C)``."""
    child = model.link_tables(out, mutual=True)[1]
    assert child is not None
    return _at(child, root, start, end)


def link_matrix(
    model: LinkScorer, out: LinkerOutput, root: Positions, start: Positions, end: Positions, mutual: bool | None = None
) -> torch.Tensor:
    """``link[p, c]`` of one sentence's candidates, whose queries are ``out``'s rows in candidate order ``(S, S)``."""
    parent, child = model.link_tables(out, mutual)
    cands = [np.asarray(torch.as_tensor(c, dtype=torch.long)).reshape(-1) for c in (root, start, end)]
    tables = [None if t is None else t.detach().numpy() for t in (parent, child)]
    return torch.from_numpy(link_from_tables(tables[0], tables[1], *cands))  # type: ignore[arg-type]
