"""Span linking (Gan et al., 2022, §3.4 "Span Linking Module"): an MRC model that links subtree spans.

A query is the sentence with the query span ``(root i, start s, end e)`` marked by ``<sos> <sor> <eor> <eos>``
(``queries.py``). One transformer pass over the query gives hidden states ``H``; they are read at the
*context* word positions (``context_word_pos``: index 0 = ROOT, then words 1..n) and scored by linear heads, the
paper's ``h_rootᵀ h_t``, ``h_startᵀ h_t``, ``h_endᵀ h_t``:

* **parent side** (query = child C, answer = its parent P): a softmax over context positions 0..n for the parent's
  root, start and end, and a label distribution read at the parent root's position.
  ``score_parent(P | C) = log p_root(P.root) + log p_start(P.s) + log p_end(P.e)``.
* **child side** (the paper's "mutual dependency"; query = parent P, answer = its children): per position sigmoid
  scores that the word is the root / start / end of one of P's children (several children, so BCE).
  ``score_child(C | P) = log σ(root) + log σ(start) + log σ(end)``.
* ``score_link(P, C) = score_parent(P | C) + score_child(C | P)`` (paper Eq. "linking score", Algorithm 1);
  ``link_tables`` gives each query's per-position terms and ``link_from_tables`` assembles the ``[parent, child]``
  matrix of a sentence that ``spandep.decoding.spans`` consumes.

Masks (``link_masks``): a parent's root differs from the child's root and lies outside the child's
span ``[s, e]`` (ROOT, position 0, is always allowed); a parent's start is a word ``≤ s`` and its end a word ``≥ e``
(position 0 is never a start or end: ROOT's span is ``(1, n)``); children (root, start and end) lie inside the query
span and are not its root; for the ROOT query ``(0, 1, n)`` that means anywhere in 1..n, and ROOT has no parent.
Padding is always masked. Non-projective trees: a word's hull may contain its parent (``hull_spans``), which the
strict root mask forbids; ``allow_root_in_span=True`` relaxes it to "≠ the child's root" so those arcs stay
reachable. Disallowed cells hold a large negative *finite* logit (``spandep.masking.MASKED``); ``link_tables`` puts
``-inf`` (``NEG_INF``) at every disallowed position.

Marker tokens: the pretrained word-piece matrix stays frozen and is never resized. The four markers get their own
trainable ``nn.Embedding(4, hidden)`` (initialised as mean + std·noise of the word embeddings), spliced into
``inputs_embeds`` at ``marker_pos``; the marker ids themselves are replaced by the pad id before the lookup.

Ablations of paper Table 5 (``scoring = "<query>-<answer>"``):

* the *query* granularity is how the query span is signified: ``span`` marks ``<sos> .. <sor> i <eor> .. <eos>``;
  ``token`` marks only the root (``<sos>``/``<eos>`` are hidden from attention and take no position, so the
  encoder's input is exactly the root-only query), and the span-dependent masks use ``(i, i, i)``;
* the *answer* granularity is what is extracted: ``span`` uses the root, start and end terms, ``token`` only the root
  term, on both sides (parent and child), in the loss and in the scores.

``token-token`` is the Biaffine-like degenerate model; ``-mutual`` is ``mutual_weight=0`` for training and
``link_tables(..., mutual=False)`` for scoring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from spandep.data.trees import children as tree_children
from spandep.data.trees import hull_spans
from spandep.decoding.spans import SpanCandidates
from spandep.masking import NEG_INF
from spandep.models.span.candidates import structural_link
from spandep.models.treebanks import restrict

__all__ = [
    "OBJECTIVES",
    "SCORINGS",
    "LinkScorer",
    "LinkerOutput",
    "link_from_tables",
    "link_masks",
    "link_targets",
]

OBJECTIVES = ("softmax", "bce")
SCORINGS = ("span-span", "token-token", "span-token", "token-span")
ROOT, START, END = 0, 1, 2  # rows of the (batch, 3, 1 + n) score tensors


# ----------------------------------------------------------------------------------------- masks
def link_masks(
    span: torch.Tensor,
    word_mask: torch.Tensor,
    query_token: bool = False,
    allow_root_in_span: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Allowed context positions for the parent side and the child side.

    ``span (batch, 3)`` = (root, start, end) of each query span (ROOT's is ``(0, 1, n)``); ``word_mask (batch, 1 + n)``
    true for ROOT and the real words. ``query_token``: the query signifies only its root, so the parent side uses
    the span ``(i, i, i)`` and the child side allows every word but ``i`` (the ROOT query keeps ``(0, 1, n)``).
    Returns ``parent_mask (batch, 3, 1 + n)`` (rows: parent root, start, end; all false for the ROOT query, which has
    no parent) and ``child_mask (batch, 1 + n)`` (the same for children's roots, starts and ends).
    """
    span = span.to(word_mask.device)
    pos = torch.arange(word_mask.size(1), device=word_mask.device).unsqueeze(0)  # (1, 1 + n)
    r, s, e = (span[:, k : k + 1] for k in range(3))  # (batch, 1) each
    root_query = r == 0  # (batch, 1)
    if query_token:
        s = torch.where(root_query, s, r)  # (batch, 1)
        e = torch.where(root_query, e, r)  # (batch, 1)
    words = word_mask & (pos >= 1)  # (batch, 1 + n): real words, no ROOT
    if allow_root_in_span:
        p_root = word_mask & (pos != r)  # (batch, 1 + n)
    else:
        p_root = word_mask & (pos != r) & ((pos < s) | (pos > e))  # (batch, 1 + n); ROOT (0 < s) always passes
    p_start = words & (pos <= s)  # (batch, 1 + n)
    p_end = words & (pos >= e)  # (batch, 1 + n)
    parent_mask = torch.stack([p_root, p_start, p_end], dim=1) & ~root_query.unsqueeze(1)  # (batch, 3, 1 + n)
    child_mask = words & (pos != r)  # (batch, 1 + n)
    if not query_token:  # a token query signifies no span: its children may lie anywhere but at its root
        child_mask &= (pos >= s) & (pos <= e)  # (batch, 1 + n)
    return parent_mask, child_mask


# ----------------------------------------------------------------------------------------- targets
def link_targets(
    heads: Sequence[Sequence[int]],
    labels: Sequence[Sequence[int] | None] | None,
    spans: torch.Tensor | Sequence[Sequence[int]],
    width: int | None = None,
) -> dict[str, torch.Tensor]:
    """Gold targets for a batch of queries, from the true trees (``hull_spans``: non-projective trees need no filter).

    ``heads[b]`` is the head list of query b's sentence (``heads[b][i - 1]`` = head of word i), ``labels[b]`` its
    label ids per word (``None``: no label targets, ``-1``), ``spans[b]`` the query span ``(root, start, end)``.

    **The targets depend only on the query's root word, never on its span.** When the query span is not the word's
    gold span (a noisy, proposed span mixed into training so the model sees the kind of queries it meets at
    inference), the parent target is still the true parent's gold span and the child targets are still the word's
    true children. A target that such a span makes impossible under the masks (e.g. a too-wide span that contains
    the parent or starts before the parent's start; true children outside a too-narrow span) is left out of the
    loss term it concerns (``SpanLinker.loss_terms`` counts them as ``unreachable``) rather than moved.

    Returns ``parent (batch, 4)`` = (root, start, end, label) of the gold parent span (ROOT as parent is
    ``(0, 1, n)``; all ``-1`` for the ROOT query), ``children (batch, 3, width)`` multi-hot roots / starts / ends of
    the gold children over positions 1..n (for the ROOT query: ROOT's child, whose span is ``(1, n)``), and
    ``gold_span (batch,)`` whether the query span is the word's gold span.
    """
    spans_t = torch.as_tensor(spans, dtype=torch.long).view(-1, 3)  # (batch, 3)
    batch = len(heads)
    if spans_t.size(0) != batch:
        raise ValueError(f"{spans_t.size(0)} spans for {batch} queries")
    if labels is not None and len(labels) != batch:
        raise ValueError(f"{len(labels)} label lists for {batch} queries")
    max_n = max((len(h) for h in heads), default=0)
    width = width if width is not None else 1 + max_n
    if width < 1 + max_n:
        raise ValueError(f"width {width} is too small for a sentence of {max_n} words")
    parent = torch.full((batch, 4), -1, dtype=torch.long)  # (batch, 4)
    kids_hot = torch.zeros(batch, 3, width)  # (batch, 3, width)
    gold_span = torch.zeros(batch, dtype=torch.bool)  # (batch,)
    memo: dict[tuple[int, ...], tuple[list[tuple[int, int]], list[list[int]]]] = {}
    for b in range(batch):
        h = tuple(int(x) for x in heads[b])
        n = len(h)
        if h not in memo:
            memo[h] = (hull_spans(h), tree_children(h))
        hull, kids = memo[h]
        r, s, e = (int(x) for x in spans_t[b])
        if not 0 <= r <= n:
            raise ValueError(f"query root {r} outside [0, {n}]")
        if r == 0:
            gold_span[b] = (s, e) == (1, n)
        else:
            gold_span[b] = hull[r - 1] == (s, e)
            head = h[r - 1]
            p_s, p_e = (1, n) if head == 0 else hull[head - 1]
            lab = -1
            if labels is not None and labels[b] is not None:
                lab = int(labels[b][r - 1])  # type: ignore[index]
            parent[b] = torch.tensor([head, p_s, p_e, lab])
        for k in kids[r]:
            k_s, k_e = hull[k - 1]
            kids_hot[b, ROOT, k] = 1.0
            kids_hot[b, START, k_s] = 1.0
            kids_hot[b, END, k_e] = 1.0
    return {"parent": parent, "children": kids_hot, "gold_span": gold_span}


# ----------------------------------------------------------------------------------------- model
@dataclass
class LinkerOutput:
    """Everything the losses and the scores need from one forward pass over a batch of queries."""

    hidden: torch.Tensor  # (batch, 1 + n, hidden) states at the context word positions (0 = ROOT)
    parent: torch.Tensor  # (batch, 3, 1 + n) masked logits: parent root / start / end
    child: torch.Tensor  # (batch, 3, 1 + n) masked logits: children's roots / starts / ends
    parent_mask: torch.Tensor  # (batch, 3, 1 + n) bool
    child_mask: torch.Tensor  # (batch, 1 + n) bool
    has_parent: torch.Tensor  # (batch,) bool: false for the ROOT query
    query: torch.Tensor | None = None  # (batch, hidden) state at the query root (late linker's label scorer)


def _broadcast_candidates(cand: torch.Tensor | Sequence[int], batch: int, device: torch.device) -> torch.Tensor:
    """Candidate positions as ``(batch, C)``; a ``(C,)`` tensor is shared by every query."""
    cand_t = torch.as_tensor(cand, dtype=torch.long, device=device)
    if cand_t.dim() == 1:
        cand_t = cand_t.unsqueeze(0).expand(batch, -1)  # (batch, C)
    if cand_t.dim() != 2 or cand_t.size(0) != batch:
        raise ValueError(f"candidates must be (C,) or ({batch}, C), got {tuple(cand_t.shape)}")
    return cand_t


class LinkScorer(nn.Module):
    """What every span linker shares: masks and targets, the losses, and the link scores used at inference.

    Subclasses implement ``forward(batch) -> LinkerOutput``, ``label_scores`` and the query interface that
    ``inference.py`` and the parser's training drive: ``prepare`` (per-sentence state computed once, from the
    sentence's forms or from the shared encoder's word vectors, as the linker needs), ``query_length``/``fits`` (for
    token budgets and the too-long fallback), ``make_batch`` (a batch of queries ``(state, root, start, end)``) and,
    in training, ``training_state`` and ``training_batch``. What differs between linkers is decided here, never by
    the caller: whether retrieval applies (:meth:`retrieves`) and the too-long fallback's links
    (:meth:`structural_link`).
    """

    labels: list[str]
    hparams: dict[str, Any]

    @classmethod
    def build(cls, fmt: str, options: dict[str, Any], n_in: int, labels: Sequence[str], assets: Path | None) -> LinkScorer:
        """The linker of query format ``fmt`` with constructor ``options``, over word vectors ``n_in`` wide;
        ``assets``: the saved model's folder of this linker's files (``None``: from their base package)."""
        raise NotImplementedError

    def pretrained_module(self) -> nn.Module | None:
        """The module holding pretrained weights of the linker's own (``None``: it has none)."""
        return None

    def _init_scoring(
        self,
        labels: Sequence[str],
        objective: str,
        label_weight: float,
        mutual_weight: float,
        scoring: str,
        allow_root_in_span: bool,
    ) -> None:
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, not {objective!r}")
        if scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}, not {scoring!r}")
        self.labels = list(labels)
        self.label_index = {label: k for k, label in enumerate(self.labels)}
        self.objective = objective
        self.label_weight = label_weight
        self.mutual_weight = mutual_weight
        self.scoring = scoring
        self.allow_root_in_span = allow_root_in_span
        self.query_token, self.answer_token = (part == "token" for part in scoring.split("-"))
        self.answer_terms = (ROOT,) if self.answer_token else (ROOT, START, END)
        self.unused_terms = [term for term in (ROOT, START, END) if term not in self.answer_terms]  # 0 in link_tables
        self.hparams: dict[str, Any] = {
            "objective": objective,
            "label_weight": label_weight,
            "mutual_weight": mutual_weight,
            "scoring": scoring,
            "allow_root_in_span": allow_root_in_span,
        }

    def forward(self, batch: dict[str, Any]) -> LinkerOutput:
        raise NotImplementedError

    def label_scores(self, hidden: torch.Tensor, query: torch.Tensor | None, parent_root: torch.Tensor) -> torch.Tensor:
        """Label logits of each query attached to parent roots ``(batch, C)`` → ``(batch, C, labels)``, from the
        query's ``LinkerOutput.hidden`` ``(batch, 1 + n, hidden)`` and ``LinkerOutput.query`` ``(batch, hidden)``
        (what inference keeps of a query to read labels at the decoded arcs only)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------- query interface
    def prepare(self, forms: Sequence[str], upos: Sequence[str] | None, vectors: torch.Tensor | None) -> Any:
        """Per-sentence state from which every query of the sentence is built (computed once per sentence)."""
        raise NotImplementedError

    def query_length(self, state: Any) -> int:
        """The padded length one query of this sentence costs in a token-budget batch."""
        raise NotImplementedError

    def fits(self, state: Any) -> bool:
        """Whether this sentence's queries fit the model's length limit."""
        raise NotImplementedError

    def make_batch(self, items: Sequence[tuple[Any, int, int, int]]) -> dict[str, Any]:
        """A batch for ``forward`` from ``(state, root, start, end)`` items."""
        raise NotImplementedError

    def training_state(self, forms: Sequence[str], upos: Sequence[str] | None) -> Any:
        """The per-sentence state kept with a training sentence's features (``None``: the linker builds its queries
        from the step's word vectors)."""
        return None

    def training_batch(
        self, x: torch.Tensor, word_mask: torch.Tensor, sentence: Sequence[int], spans: torch.Tensor, states: Sequence[Any]
    ) -> dict[str, Any]:
        """A training step's batch of queries for ``forward``: query spans ``(Q, 3)`` of the step's sentences
        ``sentence`` (one index each), over its word vectors ``x (batch, 1 + n, width)`` and ``word_mask
        (batch, 1 + n)``, or over each sentence's :meth:`training_state` ``states``."""
        raise NotImplementedError

    def retrieves(self, asked: bool) -> bool:
        """Whether a parse retrieves parent spans when ``asked``: a token answer has no span to retrieve."""
        return asked and not self.answer_token

    def structural_link(self, cands: SpanCandidates) -> np.ndarray:
        """The model-free link matrix of a sentence too long for this linker (``candidates.structural_link``, with
        this linker's root mask)."""
        return structural_link(cands, self.allow_root_in_span)

    # ------------------------------------------------------------------------------------- targets and losses
    def link_targets(
        self,
        heads: Sequence[Sequence[int]],
        labels: Sequence[Sequence[str | int] | None] | None,
        spans: torch.Tensor | Sequence[Sequence[int]],
        width: int | None = None,
    ) -> dict[str, torch.Tensor]:
        """``link_targets`` with labels given as strings (unknown → ignored) or ids; see the module function."""
        ids: list[list[int] | None] | None = None
        if labels is not None:
            ids = [
                None if row is None else [x if isinstance(x, int) else self.label_index.get(x, -1) for x in row]
                for row in labels
            ]
        return link_targets(heads, ids, spans, width)

    def loss_terms(
        self, batch: dict[str, torch.Tensor], targets: dict[str, torch.Tensor], out: LinkerOutput | None = None
    ) -> dict[str, torch.Tensor]:
        """The loss and its parts: ``parent``, ``label``, ``child`` (unweighted), ``loss`` (weighted sum) and
        ``unreachable`` (number of parent-side (query, term) targets left out because the masks exclude them).

        Parent side: per used term (root, and start/end unless the answer is a token), softmax CE (or per-position
        BCE summed over the allowed positions) averaged over the queries that have a parent and whose gold position
        is allowed. Label: CE at the gold parent root, averaged over queries with a parent and a known label. Child
        side: BCE summed over each query's allowed positions, averaged over all queries.
        """
        out = out if out is not None else self(batch)
        device = out.parent.device
        gold = targets["parent"].to(device)  # (batch, 4)
        kids = targets["children"].to(device)  # (batch, 3, targets width)
        width = out.parent.size(-1)
        if kids.size(-1) < width or bool((kids[..., width:] != 0).any()):
            raise ValueError(f"child targets of width {kids.size(-1)} do not fit queries of width {width}")
        kids = kids[..., :width]  # (batch, 3, 1 + n)
        zero = out.parent.sum() * 0.0
        parent_loss, unreachable = zero, torch.zeros((), dtype=torch.long, device=device)
        for term in self.answer_terms:
            target = gold[:, term]  # (batch,)
            allowed = out.parent_mask[:, term]  # (batch, 1 + n)
            has = out.has_parent & (target >= 0) & (target < width)  # (batch,)
            ok = has & allowed.gather(1, target.clamp(0, width - 1).unsqueeze(1)).squeeze(1)  # (batch,)
            unreachable = unreachable + (has & ~ok).sum()
            if not bool(ok.any()):
                continue
            logits = out.parent[:, term][ok].float()  # (valid, 1 + n)
            if self.objective == "softmax":
                parent_loss = parent_loss + F.cross_entropy(logits, target[ok])
            else:
                onehot = F.one_hot(target[ok], width).float()  # (valid, 1 + n)
                cell = F.binary_cross_entropy_with_logits(logits, onehot, reduction="none")  # (valid, 1 + n)
                parent_loss = parent_loss + (cell * allowed[ok]).sum(-1).mean()
        label_loss = zero
        with_label = out.has_parent & (gold[:, 3] >= 0)  # (batch,)
        if bool(with_label.any()):
            scores = self.label_scores(out.hidden, out.query, gold[:, ROOT : ROOT + 1].clamp(min=0)).squeeze(1)  # (batch, labels)
            label_loss = F.cross_entropy(scores[with_label].float(), gold[with_label, 3])
        child_loss = zero
        if self.mutual_weight:
            allowed = out.child_mask.unsqueeze(1).expand(-1, 3, -1)[:, list(self.answer_terms)]  # (batch, T, 1 + n)
            logits = out.child[:, list(self.answer_terms)].float()  # (batch, T, 1 + n)
            cell = F.binary_cross_entropy_with_logits(
                logits, kids[:, list(self.answer_terms)], reduction="none"
            )  # (batch, T, 1 + n)
            child_loss = (cell * allowed).sum((1, 2)).mean()
        total = parent_loss + self.label_weight * label_loss + self.mutual_weight * child_loss
        return {
            "loss": total, "parent": parent_loss, "label": label_loss, "child": child_loss, "unreachable": unreachable
        }

    def loss(
        self, batch: dict[str, torch.Tensor], targets: dict[str, torch.Tensor], out: LinkerOutput | None = None
    ) -> torch.Tensor:
        """Parent loss + ``label_weight`` · label CE + ``mutual_weight`` · child BCE (see ``loss_terms``)."""
        return self.loss_terms(batch, targets, out)["loss"]

    # ------------------------------------------------------------------------------------- scores for inference
    def _parent_table(self, out: LinkerOutput) -> torch.Tensor:
        """Per-position parent-side log scores ``(batch, 3, 1 + n)``: log-softmax, or log-sigmoid for ``bce``."""
        logits = out.parent.float()  # (batch, 3, 1 + n)
        return F.log_softmax(logits, dim=-1) if self.objective == "softmax" else F.logsigmoid(logits)

    def label_logp(self, out: LinkerOutput, cand_root: torch.Tensor | Sequence[int], allowed: torch.Tensor | None = None) -> torch.Tensor:
        """Label log-probabilities (over the labels ``allowed (labels,)``, ``None``: all) of each query attached to
        each candidate parent root: ``(batch, C, labels)``."""
        roots = _broadcast_candidates(cand_root, out.parent.size(0), out.parent.device)  # (batch, C)
        return F.log_softmax(restrict(self.label_scores(out.hidden, out.query, roots).float(), allowed), dim=-1)  # (batch, C, labels)

    def link_tables(self, out: LinkerOutput, mutual: bool | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per-position log scores of a batch of queries, from which :func:`link_from_tables` reads link scores.

        ``parent (batch, 3, 1 + n)``: ``score_parent``'s root/start/end terms (log-softmax, or log-sigmoid for
        ``bce``); ``child (batch, 3, 1 + n)``: ``score_child``'s (log-sigmoid), ``None`` without the mutual term
        (default: ``mutual_weight > 0``). ``-inf`` where a position is disallowed, 0 in a term the scoring leaves out
        (a token answer uses the root term only)."""
        mutual = self.mutual_weight > 0 if mutual is None else mutual
        parent = self._parent_table(out).masked_fill(~out.parent_mask, NEG_INF)  # (batch, 3, 1 + n)
        parent[:, self.unused_terms] = 0.0
        return parent, self._child_table(out) if mutual else None

    def _child_table(self, out: LinkerOutput) -> torch.Tensor:
        """``link_tables``' child side ``(batch, 3, 1 + n)``."""
        child = F.logsigmoid(out.child.float()).masked_fill(~out.child_mask.unsqueeze(1), NEG_INF)  # (batch, 3, 1 + n)
        child[:, self.unused_terms] = 0.0
        return child

def link_from_tables(
    parent: np.ndarray, child: np.ndarray | None, root: np.ndarray, start: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """``link[p, c] = Σ_term parent[c, term, P_p's term position] + Σ_term child[p, term, C_c's term position]``
    for the S candidates ``(root, start, end)`` of one sentence, whose queries' ``LinkScorer.link_tables`` are
    ``parent, child (S, 3, 1 + n)`` in candidate order. float32 ``(S parent, S child)``, ``-inf`` where impossible."""
    at = (root, start, end)
    link = parent[:, 0, at[0]] + parent[:, 1, at[1]] + parent[:, 2, at[2]]  # (S child, S parent)
    link = link.T  # (S parent, S child)
    if child is not None:
        link = link + (child[:, 0, at[0]] + child[:, 1, at[1]] + child[:, 2, at[2]])  # (S parent, S child)
    return link
