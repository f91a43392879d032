"""The Biaffine dependency parser (Dozat & Manning, 2017): arc and label biaffine scorers over word vectors."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from spandep.data.sentence import Sentence
from spandep.encoders.base import WordEncoder
from spandep.options import InferenceOptions, InferenceStats
from spandep.masking import MASKED
from spandep.models.base import Parse, Parser, keep_labels
from spandep.models.confidence import ArcScores
from spandep.models.layers import MLP, Biaffine, evaluating
from spandep.models.treebanks import LABELS, restrict


class BiaffineScorer(nn.Module):
    """Arc and label scorers over given word vectors ``(batch, 1 + n, n_in)``, without an encoder of their own.

    The Biaffine parser is this over its encoder's vectors; the span parser can carry one as a word-level arc and
    label head on its shared encoder (``SpanParser(word_scorer=...)``).
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
        s_arc = s_arc.masked_fill(~mask.unsqueeze(1), MASKED)  # (batch, 1 + n, 1 + n): no padding heads
        eye = torch.eye(s_arc.size(-1), dtype=torch.bool, device=s_arc.device)  # (1 + n, 1 + n)
        s_arc = s_arc.masked_fill(eye, MASKED)  # (batch, 1 + n, 1 + n): no self loops
        return s_arc, (self.rel_dep(x), self.rel_head(x))

    def scores(self, x: torch.Tensor, mask: torch.Tensor, products: torch.autocast) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """:meth:`score` for a parse, its matrix products in the context ``products`` (``Parser.products``), what it
        gives back in float32."""
        with products:
            s_arc, (dep, head) = self.score(x, mask)  # (batch, 1 + n, 1 + n), 2 × (batch, 1 + n, rel_mlp)
        return s_arc.float(), (dep.float(), head.float())

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


class BiaffineParser(Parser):
    """Scores every (dependent, head) pair with a :class:`BiaffineScorer` on the encoder's word vectors; labels are
    scored only at the heads that matter (gold heads in training, decoded heads in parsing), without building a
    ``(batch, n, n, labels)`` tensor."""

    name = "biaffine"
    config_defaults = {"arc_mlp": 500, "rel_mlp": 100, "mlp_dropout": 0.33}
    decoders = {"mst": "mst", "projective": "eisner"}
    inference_defaults = {"decoder": "mst", "precision": "float32"}
    scoring_settings = ("precision",)

    def __init__(
        self,
        encoder: WordEncoder,
        labels: list[str],
        arc_mlp: int = 500,
        rel_mlp: int = 100,
        mlp_dropout: float = 0.33,
        inference: dict[str, Any] | None = None,
        treebanks: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(encoder, labels, inference, treebanks)
        self.scorer = BiaffineScorer(self.width, len(self.labels), arc_mlp, rel_mlp, mlp_dropout)

    def hparams(self) -> dict[str, Any]:
        return dict(self.scorer.hparams)

    @classmethod
    def upgrade_v1(cls, model: dict[str, Any], state: dict[str, torch.Tensor], training: dict[str, Any]) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        """The scorer's weights move under ``scorer.``; the decoder it was trained with becomes its saved one."""
        decoder = training.get("config", {}).get("training", {}).get("decoder", "mst")
        model = {**model, "heads": {}, "inference": {"decoder": "mst" if decoder == "mst" else "projective"}}
        return model, {(k if k.startswith("encoder.") else "scorer." + k): v for k, v in state.items()}

    def loss(self, batch: dict[str, Any]) -> torch.Tensor:
        x = self.word_vectors(batch)  # (batch, 1 + n, width + taps)
        return self.scorer.scorer_loss(x[..., : self.width], batch) + self.heads_loss(x, batch)

    def parse(
        self, sentences: Sequence[Sentence], options: InferenceOptions | None = None, stats: InferenceStats | None = None
    ) -> list[Parse]:
        opts = self.settings(options)
        decode = self.decoder(opts)
        t0 = time.perf_counter()
        results = [Parse([], [], {name: [] for name in self.heads}) for _ in sentences]
        lengths = [len(s) for s in sentences]
        allowed = self.allowed(LABELS, opts)
        fixed = [self.constraints(s, opts) for s in sentences]
        with evaluating(self):
            for idx, batch, x in self.encoded_batches(sentences, opts):
                s_arc, rel_reps = self.scorer.scores(x[..., : self.width], batch["word_mask"], self.products(opts))  # (batch, 1 + n, 1 + n)
                n = torch.tensor([lengths[i] for i in idx])  # (batch,)
                heads = decode(s_arc.log_softmax(-1), n, [fixed[i] for i in idx])  # (batch, 1 + n)
                s_rel = restrict(self.scorer.label_scores(rel_reps, heads), allowed)  # (batch, 1 + n, labels)
                labels = s_rel.argmax(-1)  # (batch, 1 + n)
                label_probs = s_rel.softmax(-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)  # (batch, 1 + n)
                columns = self.annotate(x, batch["word_mask"], [sentences[i].forms for i in idx], opts)
                arc_scores = s_arc.double().cpu().numpy()  # (batch, 1 + n, 1 + n) [dependent, head]
                label_p = label_probs.double().cpu().numpy()  # (batch, 1 + n)
                for row, i in enumerate(idx):
                    k = lengths[i]
                    ids = labels[row, 1 : k + 1].tolist()
                    scores = ArcScores(arc_scores[row, 1 : k + 1, : k + 1], label_p[row, 1 : k + 1])
                    results[i] = Parse(heads[row, 1 : k + 1].tolist(), [self.labels[j] for j in ids], columns[row], scores)
        if stats is not None:
            stats.add(InferenceStats(sentences=len(sentences), seconds=time.perf_counter() - t0))
        return keep_labels(results, sentences, opts)
