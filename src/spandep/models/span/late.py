"""Late-interaction span linking: the MRC span linker without re-running the big encoder per query.

The faithful linker (``faithful.SpanLinker``) encodes every query — the sentence with four marker tokens around
the child span — with the pretrained transformer, so a sentence of n words costs about n encoder passes. Here the
shared encoder runs **once per sentence**; each query then marks its span on the word vectors and runs a few small
transformer layers over them:

* input of query ``(r, s, e)`` at word position t (0 = ROOT): ``W x_t + role(t) + [t = s]·start + [t = e]·end``, where
  ``role`` is *outside* the span, *inside* it, or *the query root* — the embeddings play the part of the markers
  ``<sos> <sor> <eor> <eos>`` (for the ROOT query ``(0, 1, n)``: ROOT is the query root, every word is inside);
* ``layers`` pre-norm transformer layers over positions 0..n (answers are read at the same positions, like the
  ``inline`` query format: position 0 stands for ROOT as a candidate parent);
* heads compare the query root's state ``h_r`` with every position's ``h_t`` biaffinely (``h_rᵀ U h_t + wᵀ h_t``,
  the paper's ``h_rootᵀ h_t`` with MLP projections): three parent terms (root, start, end), three child terms, and
  a biaffine label scorer between ``h_r`` and the parent root's state.

Masks, targets, losses and link scores are ``LinkScorer``'s, shared with the faithful linker. This is a deviation
from the paper, chosen for CPU cost; the faithful formats stay available and are reported beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from spandep.masking import mask_value
from spandep.models.layers import MLP, Biaffine
from spandep.models.span.linking import LinkerOutput, LinkScorer, link_masks

__all__ = ["LateSpanLinker"]

OUTSIDE, INSIDE, QUERY_ROOT = 0, 1, 2


class LateSpanLinker(LinkScorer):
    """Span linker over the shared encoder's word vectors (``n_in`` wide); see the module docstring.

    ``dim``/``layers``/``heads``/``ff``: the query layers; ``mlp``/``label_mlp``: widths of the biaffine projections;
    ``dropout``: inside the layers, ``mlp_dropout``: on the projections. Scoring options as ``LinkScorer``.
    """

    name = "late"
    query_format = "late"

    def __init__(
        self,
        n_in: int,
        labels: Sequence[str],
        dim: int = 256,
        layers: int = 2,
        heads: int = 4,
        ff: int = 512,
        mlp: int = 300,
        label_mlp: int = 100,
        dropout: float = 0.1,
        mlp_dropout: float = 0.33,
        objective: str = "softmax",
        label_weight: float = 1.0,
        mutual_weight: float = 1.0,
        scoring: str = "span-span",
        allow_root_in_span: bool = False,
        max_words: int = 200,
    ) -> None:
        super().__init__()
        self._init_scoring(labels, objective, label_weight, mutual_weight, scoring, allow_root_in_span)
        self.n_in = n_in
        # Each query attends over the whole sentence and a sentence asks about k·n queries, so the cost grows
        # with n³: longer sentences take the span parser's fallback (counted and reported), not hours.
        self.max_words = max_words
        self.hparams.update(
            {"dim": dim, "layers": layers, "heads": heads, "ff": ff, "mlp": mlp, "label_mlp": label_mlp,
             "dropout": dropout, "mlp_dropout": mlp_dropout, "max_words": max_words}
        )
        self.project = nn.Linear(n_in, dim)
        self.role = nn.Embedding(3, dim)
        self.boundary = nn.Embedding(2, dim)  # row 0: span start, row 1: span end
        nn.init.normal_(self.role.weight, std=0.02)
        nn.init.normal_(self.boundary.weight, std=0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout, batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.parent_query, self.parent_cand = MLP(dim, mlp, mlp_dropout), MLP(dim, mlp, mlp_dropout)
        self.child_query, self.child_cand = MLP(dim, mlp, mlp_dropout), MLP(dim, mlp, mlp_dropout)
        self.parent_attn = Biaffine(mlp, 3, bias_x=True, bias_y=False)  # [h_r; 1]ᵀ U_term h_t
        self.child_attn = Biaffine(mlp, 3, bias_x=True, bias_y=False)
        self.label_query, self.label_cand = MLP(dim, label_mlp, mlp_dropout), MLP(dim, label_mlp, mlp_dropout)
        self.label_attn = Biaffine(label_mlp, len(self.labels), bias_x=True, bias_y=True)

    @classmethod
    def build(cls, fmt: str, options: dict[str, Any], n_in: int, labels: Sequence[str], assets: Path | None) -> LateSpanLinker:
        """Over the shared encoder's word vectors (``n_in`` wide); it keeps no files of its own."""
        return cls(n_in, labels, **options)

    # ------------------------------------------------------------------------------------- forward
    def forward(self, batch: dict[str, Any]) -> LinkerOutput:
        """``batch``: ``vectors (sentences, 1 + n, n_in)`` word vectors, ``sentence (Q,)`` each query's row in
        ``vectors``, ``span (Q, 3)``, ``context_word_mask (Q, 1 + n)`` (ROOT and real words), ``n_words (Q,)``."""
        x = self.project(batch["vectors"])  # (sentences, 1 + n, dim)
        span = batch["span"].to(x.device)  # (Q, 3)
        sentence = batch["sentence"].to(x.device)  # (Q,)
        word_mask = batch["context_word_mask"].to(x.device)  # (Q, 1 + n)
        pos = torch.arange(x.size(1), device=x.device).unsqueeze(0)  # (1, 1 + n)
        r, s, e = (span[:, k : k + 1] for k in range(3))  # (Q, 1) each
        if self.query_token:  # the query signifies only its root (ROOT's query keeps its span)
            s, e = torch.where(r == 0, s, r), torch.where(r == 0, e, r)  # (Q, 1) each
        role = torch.where((pos >= s) & (pos <= e), INSIDE, OUTSIDE)  # (Q, 1 + n)
        role = torch.where(pos == r, QUERY_ROOT, role)  # (Q, 1 + n)
        marks = role * 4 + (pos == s).long() + 2 * (pos == e).long()  # (Q, 1 + n): one of MARKS per position
        if self.training:
            h = x.index_select(0, sentence) + self._mark_table()[marks]  # (Q, 1 + n, dim)
            h = self.layers(h, src_key_padding_mask=~word_mask)  # (Q, 1 + n, dim)
        else:
            h = self._shared_first_layer(x, sentence, marks, word_mask)  # (Q, 1 + n, dim)
            for layer in self.layers.layers[1:]:
                h = layer(h, src_key_padding_mask=~word_mask)  # (Q, 1 + n, dim)
        h = self.norm(h)  # (Q, 1 + n, dim)
        query = h.gather(1, r.unsqueeze(-1).expand(-1, -1, h.size(-1)))  # (Q, 1, dim): state at the query root
        parent_mask, child_mask = link_masks(span, word_mask, self.query_token, self.allow_root_in_span)
        fill = mask_value(h.dtype)
        if self.training:
            parent_cand, child_cand = self.parent_cand(h), self.child_cand(h)  # (Q, 1 + n, mlp) each
        else:  # both projections in one matrix product
            weight = torch.cat([self.parent_cand.linear.weight, self.child_cand.linear.weight])  # (2·mlp, dim)
            bias = torch.cat([self.parent_cand.linear.bias, self.child_cand.linear.bias])  # (2·mlp,)
            parent_cand, child_cand = self.parent_cand.act(F.linear(h, weight, bias)).chunk(2, dim=-1)  # (Q, 1 + n, mlp) each
        parent = self.parent_attn(self.parent_query(query), parent_cand).squeeze(2)  # (Q, 3, 1 + n)
        child = self.child_attn(self.child_query(query), child_cand).squeeze(2)  # (Q, 3, 1 + n)
        parent = parent.masked_fill(~parent_mask, fill)  # (Q, 3, 1 + n)
        child = child.masked_fill(~child_mask.unsqueeze(1), fill)  # (Q, 3, 1 + n)
        has_parent = span[:, 0] != 0  # (Q,)
        return LinkerOutput(h, parent, child, parent_mask, child_mask, has_parent, query.squeeze(1))

    def _mark_table(self) -> torch.Tensor:
        """The input embedding of every mark ``role·4 + [t = s] + 2·[t = e]`` → ``(12, dim)``."""
        role = self.role.weight.repeat_interleave(4, dim=0)  # (12, dim)
        flags = torch.arange(4, device=role.device)  # (4,): bit 0 span start, bit 1 span end
        start = (flags & 1).to(role.dtype).unsqueeze(-1) * self.boundary.weight[0]  # (4, dim)
        end = (flags >> 1).to(role.dtype).unsqueeze(-1) * self.boundary.weight[1]  # (4, dim)
        return role + (start + end).repeat(3, 1)  # (12, dim)

    def _shared_first_layer(
        self, x: torch.Tensor, sentence: torch.Tensor, marks: torch.Tensor, word_mask: torch.Tensor
    ) -> torch.Tensor:
        """The first query layer at inference, the same function as ``self.layers.layers[0]`` (pre-norm, no dropout).

        A position's input depends only on its sentence, its word and its mark, and a sentence asks about k·n
        queries, so the layer norm and the q/k/v projection run once per distinct (sentence, word, mark) and each
        query gathers its rows; only attention and what follows it run per query. ``x (sentences, 1 + n, dim)``,
        ``sentence (Q,)``, ``marks (Q, 1 + n)``, ``word_mask (Q, 1 + n)`` → ``(Q, 1 + n, dim)``.
        """
        layer = self.layers.layers[0]
        attn = layer.self_attn
        n_query, width, dim, heads = marks.size(0), x.size(1), x.size(2), attn.num_heads
        pos = torch.arange(width, device=x.device)  # (1 + n,)
        keys = (sentence.unsqueeze(1) * width + pos) * 12 + marks  # (Q, 1 + n): (sentence, word, mark) as one id
        distinct, inverse = torch.unique(keys, return_inverse=True)  # (U,), (Q, 1 + n)
        word_rows = torch.div(distinct, 12, rounding_mode="floor")  # (U,) rows of x flattened
        inputs = x.reshape(-1, dim)[word_rows] + self._mark_table()[distinct % 12]  # (U, dim)
        qkv = F.linear(layer.norm1(inputs), attn.in_proj_weight, attn.in_proj_bias)  # (U, 3·dim)
        head = dim // heads
        qkv = qkv.view(-1, 3, heads, head).permute(1, 2, 0, 3).contiguous()  # (3, heads, U, dim / heads)
        rows = inverse.view(-1)  # (Q·(1 + n),)
        q, k, v = qkv.view(3 * heads, -1, head).index_select(1, rows).view(3, heads * n_query, width, head)  # 3 × (heads·Q, 1 + n, dim / heads)
        scores = torch.bmm(q, k.transpose(1, 2)).mul_(head**-0.5)  # (heads·Q, 1 + n, 1 + n)
        blocked = torch.zeros(word_mask.shape, dtype=x.dtype, device=x.device).masked_fill(~word_mask, float("-inf"))  # (Q, 1 + n)
        scores.view(heads, n_query, width, width).add_(blocked[None, :, None, :])  # padding keys get -inf
        a = torch.bmm(scores.softmax(-1), v).view(heads, n_query, width, head)  # (heads, Q, 1 + n, dim / heads)
        a = a.permute(1, 2, 0, 3).reshape(n_query, width, dim)  # (Q, 1 + n, dim)
        h = inputs.index_select(0, rows).view(n_query, width, dim) + attn.out_proj(a)  # (Q, 1 + n, dim)
        return h + layer.linear2(layer.activation(layer.linear1(layer.norm2(h))))  # (Q, 1 + n, dim)

    def label_scores(self, hidden: torch.Tensor, query: torch.Tensor | None, parent_root: torch.Tensor) -> torch.Tensor:
        """Biaffine label logits between the query root and each parent root ``(Q, C)`` → ``(Q, C, labels)``.

        The query side is contracted with the weight first, so scoring all 1 + n roots of many queries stays cheap.
        """
        if query is None:
            raise ValueError("the late linker's label scorer needs the query root's state")
        h = hidden  # (Q, 1 + n, dim)
        idx = parent_root.clamp(0, h.size(1) - 1)  # (Q, C)
        cand = self.label_cand(h.gather(1, idx.unsqueeze(-1).expand(-1, -1, h.size(-1))))  # (Q, C, label_mlp)
        cand = torch.cat([cand, torch.ones_like(cand[..., :1])], dim=-1)  # (Q, C, label_mlp + 1)
        query = self.label_query(query)  # (Q, label_mlp)
        query = torch.cat([query, torch.ones_like(query[..., :1])], dim=-1)  # (Q, label_mlp + 1)
        per_label = torch.einsum("qi,oij->qoj", query, self.label_attn.weight)  # (Q, labels, label_mlp + 1)
        return torch.einsum("qoj,qcj->qco", per_label, cand)  # (Q, C, labels)

    # ------------------------------------------------------------------------------------- query interface
    def prepare(self, forms: Sequence[str], upos: Sequence[str] | None, vectors: torch.Tensor | None) -> torch.Tensor:
        """The sentence's word vectors ``(1 + n, n_in)`` from the shared encoder are the whole per-sentence state."""
        if vectors is None:
            raise ValueError("the late-interaction linker needs the encoder's word vectors")
        if vectors.size(0) != len(forms) + 1:
            raise ValueError(f"{vectors.size(0)} word vectors for a sentence of {len(forms)} words (plus ROOT)")
        return vectors

    def training_batch(
        self, x: torch.Tensor, word_mask: torch.Tensor, sentence: Sequence[int], spans: torch.Tensor, states: Sequence[Any]
    ) -> dict[str, Any]:
        """The step's queries over its word vectors: each sentence's states are its rows of ``x``."""
        index = torch.as_tensor(sentence, dtype=torch.long, device=x.device)  # (Q,)
        return {
            "vectors": x,
            "sentence": index,
            "span": spans.to(x.device),  # (Q, 3)
            "context_word_mask": word_mask.index_select(0, index),  # (Q, 1 + n)
            "n_words": (word_mask.sum(1) - 1).index_select(0, index),  # (Q,)
        }

    def query_length(self, state: torch.Tensor) -> int:
        return int(state.size(0))

    def fits(self, state: torch.Tensor) -> bool:
        return int(state.size(0)) - 1 <= self.max_words

    def make_batch(self, items: Sequence[tuple[torch.Tensor, int, int, int]]) -> dict[str, Any]:
        """Queries of one or more sentences: each distinct state is stored once, padded to the longest."""
        rows: dict[int, int] = {}
        states: list[torch.Tensor] = []
        sentence = []
        for state, *_ in items:
            key = id(state)
            if key not in rows:
                rows[key] = len(states)
                states.append(state)
            sentence.append(rows[key])
        width = max(int(st.size(0)) for st in states)
        vectors = states[0].new_zeros(len(states), width, states[0].size(-1))  # (sentences, 1 + n, n_in)
        for k, st in enumerate(states):
            vectors[k, : st.size(0)] = st
        lengths = torch.tensor([int(states[row].size(0)) for row in sentence])  # (Q,)
        mask = torch.arange(width).unsqueeze(0) < lengths.unsqueeze(1)  # (Q, 1 + n)
        return {
            "vectors": vectors,
            "sentence": torch.tensor(sentence, dtype=torch.long),  # (Q,)
            "span": torch.tensor([[r, s, e] for _, r, s, e in items], dtype=torch.long),  # (Q, 3)
            "context_word_mask": mask,
            "n_words": lengths - 1,  # (Q,)
        }
