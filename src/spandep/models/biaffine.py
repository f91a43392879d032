"""The Biaffine dependency parser (Dozat & Manning, 2017): arc and label biaffine scorers over word vectors."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from spandep.encoders.base import WordEncoder
from spandep.models.layers import MLP, Biaffine

NEG_INF = -1e9


class BiaffineScorer(nn.Module):
    """Arc and label scorers over given word vectors ``(batch, 1 + n, n_in)``, without an encoder of their own.

    The Biaffine parser is this plus an encoder; the span parser can carry one as a word-level arc and label head
    on its shared encoder (``SpanParser(word_scorer=...)``).
    """

    labels: list[str]

    def __init__(self, n_in: int, n_labels: int, arc_mlp: int = 500, rel_mlp: int = 100, mlp_dropout: float = 0.33) -> None:
        super().__init__()
        self.hparams = {"arc_mlp": arc_mlp, "rel_mlp": rel_mlp, "mlp_dropout": mlp_dropout}
        self.arc_dep = MLP(n_in, arc_mlp, mlp_dropout)
        self.arc_head = MLP(n_in, arc_mlp, mlp_dropout)
        self.rel_dep = MLP(n_in, rel_mlp, mlp_dropout)
        self.rel_head = MLP(n_in, rel_mlp, mlp_dropout)
        self.arc_attn = Biaffine(arc_mlp, 1, bias_x=True, bias_y=False)
        self.rel_attn = Biaffine(rel_mlp, n_labels, bias_x=True, bias_y=True)

    def score(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Arc scores ``(batch, 1 + n, 1 + n)`` indexed ``[dependent, head]`` (padding heads and self loops masked)
        and the label representations (dependent side, head side) for :meth:`label_scores`."""
        s_arc = self.arc_attn(self.arc_dep(x), self.arc_head(x))  # (batch, 1 + n, 1 + n)
        s_arc = s_arc.masked_fill(~mask.unsqueeze(1), NEG_INF)  # (batch, 1 + n, 1 + n): no padding heads
        eye = torch.eye(s_arc.size(-1), dtype=torch.bool, device=s_arc.device)  # (1 + n, 1 + n)
        s_arc = s_arc.masked_fill(eye, NEG_INF)  # (batch, 1 + n, 1 + n): no self loops
        return s_arc, (self.rel_dep(x), self.rel_head(x))

    def label_scores(self, rel_reps: tuple[torch.Tensor, torch.Tensor], heads: torch.Tensor) -> torch.Tensor:
        """Label scores for each word attached to ``heads (batch, 1 + n)`` → ``(batch, 1 + n, labels)``."""
        dep, head = rel_reps
        head_at = head.gather(1, heads.unsqueeze(-1).expand(-1, -1, head.size(-1)))  # (batch, 1 + n, rel_mlp)
        return self.rel_attn.pairwise(dep, head_at)  # (batch, 1 + n, labels)

    def scorer_loss(self, x: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Cross-entropy of the gold head of each word plus of its gold label at the gold head."""
        s_arc, rel_reps = self.score(x, batch["word_mask"])
        heads, rels = batch["heads"], batch["rels"]  # (batch, 1 + n) each
        words = batch["word_mask"].clone()  # (batch, 1 + n)
        words[:, 0] = False
        s_rel = self.label_scores(rel_reps, heads)  # (batch, 1 + n, labels)
        return F.cross_entropy(s_arc[words], heads[words]) + F.cross_entropy(s_rel[words], rels[words])


class BiaffineParser(BiaffineScorer):
    """Scores every (dependent, head) pair; labels are scored only at the heads that matter.

    ``forward`` returns arc scores ``(batch, 1 + n, 1 + n)`` indexed ``[dependent, head]`` (position 0 is ROOT,
    its row is unused) and the label representations, so labels can be read at gold heads (training) or at
    decoded heads (prediction) without building a ``(batch, n, n, labels)`` tensor.
    """

    model_type = "biaffine"
    config: dict[str, Any]  # the saved config, set by ``load_model``
    encoder: WordEncoder

    def __init__(
        self,
        encoder: WordEncoder,
        labels: list[str],
        arc_mlp: int = 500,
        rel_mlp: int = 100,
        mlp_dropout: float = 0.33,
    ) -> None:
        super().__init__(encoder.out_dim, len(labels), arc_mlp, rel_mlp, mlp_dropout)
        self.encoder = encoder
        self.labels = list(labels)

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        return self.score(self.encoder(batch), batch["word_mask"])

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.scorer_loss(self.encoder(batch), batch)

    def export_config(self) -> dict[str, Any]:
        return {"model_type": self.model_type, "labels": self.labels, **self.hparams}
