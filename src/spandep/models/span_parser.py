"""The span-span parser (Gan et al., 2022): a word encoder, span proposal and MRC span linking, trained jointly.

``SpanParser`` holds the three modules and computes the joint training loss; parsing is
``spandep.pipeline.span_inference.parse_spans``, which takes a ``SpanParser`` as is.

Linkers (``linker["format"]``):

* ``late`` (default): ``LateSpanLinker`` over the shared encoder's word vectors (one encoder pass per sentence);
* ``paired`` / ``inline``: the faithful ``SpanLinker`` with its own pretrained transformer (``linker["model"]``), one
  pass per query, as in the paper (two modules with separate encoders).

Training queries (per sentence and step): ROOT's query and each word's query are kept with probability
``query_rate``, lowered to ``max_queries / (n + 1)`` for long sentences when ``max_queries`` is set (the late linker's
cost per query grows with n, so this keeps a step's cost linear in the words), and at least one per sentence; all
words are covered over the epochs at a fraction of the cost. A
kept word query uses the word's gold (hull) span, or with probability ``noisy_rate`` the span the proposal module
currently predicts for it (its top-1, detached), so the linker also learns from the kind of wrong spans it meets at
inference (DESIGN.md §2); targets always come from the true tree (``link_targets``).

Word-level head (``word_scorer``, optional; not in the paper): a Biaffine arc and label scorer on the shared
encoder, trained jointly (its cross-entropies are added to the loss). At inference its head log-probability of each
link's (child root, parent root) pair can be added to the link score with weight ``arc_weight``, and labels can come
from it instead of the linker (``label_source = "word"``); both are inference settings chosen on dev, and
``arc_weight = 0`` with ``label_source = "linker"`` is the paper's parser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from spandep.encoders.base import WordEncoder
from spandep.models.biaffine import BiaffineScorer
from spandep.models.late_linking import LateSpanLinker
from spandep.models.span_linking import LinkScorer, SpanLinker
from spandep.models.span_proposal import SpanProposal, gold_span_targets
from spandep.models.tagger import UposTagger

__all__ = ["LINK_FORMATS", "SpanParser", "build_linker"]

LINK_FORMATS = ("late", "paired", "inline")
INFERENCE_DEFAULTS: dict[str, Any] = {
    "k": 2, "lam": 1.0, "decoder": "dp", "retrieval": True, "mutual": True, "arc_weight": 0.0, "label_source": "linker",
}
LABEL_SOURCES = ("linker", "word")


def build_linker(options: dict[str, Any], n_in: int, labels: list[str], assets: str | None = None) -> LinkScorer:
    """The linker ``options`` describe (``format`` plus the chosen class's constructor arguments).

    ``assets``: for the faithful linker, a folder with its saved tokenizer and architecture (its weights come from
    the model file), instead of the pretrained ``model``.
    """
    opts = dict(options)
    fmt = opts.pop("format", "late")
    if fmt == "late":
        return LateSpanLinker(n_in, labels, **opts)
    if fmt in ("paired", "inline"):
        return SpanLinker.from_config({**opts, "labels": labels, "query_format": fmt}, Path(assets) if assets else None)
    raise ValueError(f"linker format must be one of {LINK_FORMATS}, not {fmt!r}")


def check_inference(options: dict[str, Any], has_word_scorer: bool) -> None:
    """``ValueError`` for inference settings the model cannot honour (word-level terms without a word scorer)."""
    if options.get("label_source", "linker") not in LABEL_SOURCES:
        raise ValueError(f"label_source must be one of {LABEL_SOURCES}, not {options['label_source']!r}")
    if not has_word_scorer and (options.get("arc_weight") or options.get("label_source") == "word"):
        raise ValueError("arc_weight and label_source='word' need a model trained with a word scorer ([model] word_scorer)")


class SpanParser(nn.Module):
    """Encoder + span proposal + span linker; ``loss`` is the sum of the proposal and linking losses."""

    model_type = "span"
    config: dict[str, Any]  # the saved config, set by ``load_model``
    linker: LinkScorer
    inference: dict[str, Any]  # default inference settings (INFERENCE_DEFAULTS' keys), chosen on dev
    word_scorer: BiaffineScorer | None
    tagger: UposTagger | None

    def __init__(
        self,
        encoder: WordEncoder,
        labels: list[str],
        linker: dict[str, Any] | None = None,
        span_mlp: int = 500,
        span_dropout: float = 0.33,
        query_rate: float = 1.0,
        max_queries: int = 0,
        noisy_rate: float = 0.0,
        inference: dict[str, Any] | None = None,
        linker_assets: str | None = None,
        word_scorer: dict[str, Any] | None = None,
        tagger: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if not 0.0 < query_rate <= 1.0:
            raise ValueError(f"query_rate must be in (0, 1], not {query_rate}")
        if not 0.0 <= noisy_rate <= 1.0:
            raise ValueError(f"noisy_rate must be in [0, 1], not {noisy_rate}")
        self.encoder = encoder
        self.labels = list(labels)
        self.linker_options = dict(linker or {"format": "late"})
        self.proposal = SpanProposal(encoder.out_dim, span_mlp, span_dropout)
        self.linker = build_linker(self.linker_options, encoder.out_dim, self.labels, linker_assets)
        self.query_rate = query_rate
        self.max_queries = max_queries
        self.noisy_rate = noisy_rate
        self.word_scorer = BiaffineScorer(encoder.out_dim, len(self.labels), **word_scorer) if word_scorer is not None else None
        self.tagger = UposTagger(encoder.out_dim, **tagger) if tagger is not None else None
        self.inference = {**INFERENCE_DEFAULTS, **(inference or {})}
        check_inference(self.inference, has_word_scorer=self.word_scorer is not None)

    def loss(self, batch: dict[str, Any]) -> torch.Tensor:
        """Joint loss of one batch: the encoder's tensors plus ``heads``/``rels`` ``(batch, 1 + n)`` (position 0
        unused) and, for a faithful linker, ``query_states`` (its ``prepare`` state per sentence)."""
        x = self.encoder(batch)  # (batch, 1 + n, d)
        word_mask = batch["word_mask"]  # (batch, 1 + n)
        lengths = word_mask.sum(1) - 1  # (batch,)
        gold_heads, gold_rels, n_words = batch["heads"].tolist(), batch["rels"].tolist(), lengths.tolist()
        heads = [row[1 : n + 1] for row, n in zip(gold_heads, n_words)]
        rels = [row[1 : n + 1] for row, n in zip(gold_rels, n_words)]
        s_start, s_end = self.proposal(x, word_mask)  # (batch, 1 + n, 1 + n) each
        gold_start, gold_end = gold_span_targets(heads, x.size(1))  # (batch, 1 + n) each
        loss = self.proposal.loss(s_start, s_end, gold_start.to(x.device), gold_end.to(x.device), word_mask)
        if self.word_scorer is not None:
            loss = loss + self.word_scorer.scorer_loss(x, batch)
        if self.tagger is not None:
            loss = loss + self.tagger.loss(x, batch["upos_gold"])
        spans, sentence = self._training_queries(s_start.detach(), s_end.detach(), gold_start, gold_end, word_mask)
        targets = self.linker.link_targets([heads[b] for b in sentence], [rels[b] for b in sentence], spans, x.size(1))
        if self.linker.needs_word_vectors:
            index = torch.as_tensor(sentence, dtype=torch.long, device=x.device)  # (Q,)
            link_batch: dict[str, Any] = {
                "vectors": x,
                "sentence": index,
                "span": spans.to(x.device),
                "context_word_mask": word_mask.index_select(0, index),  # (Q, 1 + n)
                "n_words": lengths.index_select(0, index),  # (Q,)
            }
        else:
            states = batch["query_states"]
            items = [(states[b], *(int(v) for v in span)) for b, span in zip(sentence, spans)]
            link_batch = {k: v.to(x.device) for k, v in self.linker.make_batch(items).items()}
        return loss + self.linker.loss(link_batch, targets)

    def _training_queries(
        self,
        s_start: torch.Tensor,
        s_end: torch.Tensor,
        gold_start: torch.Tensor,
        gold_end: torch.Tensor,
        word_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, list[int]]:
        """The query spans of one step ``(Q, 3)`` and each query's sentence (see the module docstring)."""
        device = word_mask.device
        rate = torch.full((word_mask.size(0), 1), self.query_rate, device=device)  # (batch, 1)
        if self.max_queries:
            rate = rate.minimum(self.max_queries / word_mask.sum(1, keepdim=True))  # (batch, 1)
        keep = (torch.rand(word_mask.shape, device=device) < rate) & word_mask  # (batch, 1 + n)
        first = torch.zeros_like(keep)  # (batch, 1 + n)
        first[:, 0] = True
        keep |= first & ~keep.any(1, keepdim=True)  # at least ROOT's query in every sentence
        noisy = torch.rand(word_mask.shape, device=device) < self.noisy_rate  # (batch, 1 + n)
        start = torch.where(noisy, s_start.argmax(-1), gold_start.to(device))  # (batch, 1 + n)
        end = torch.where(noisy, s_end.argmax(-1), gold_end.to(device))  # (batch, 1 + n)
        start[:, 0], end[:, 0] = gold_start[:, 0].to(device), gold_end[:, 0].to(device)  # ROOT's span is (1, n)
        b, r = keep.nonzero(as_tuple=True)  # (Q,) each
        spans = torch.stack([r, start[b, r], end[b, r]], dim=1).cpu()  # (Q, 3)
        return spans, b.tolist()

    def export_config(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "labels": self.labels,
            "linker": {**self.linker_options, **self.linker.hparams},  # resolved, defaults included
            **self.proposal.export_config(),
            "query_rate": self.query_rate,
            "max_queries": self.max_queries,
            "noisy_rate": self.noisy_rate,
            "inference": dict(self.inference),
            "word_scorer": self.word_scorer.hparams if self.word_scorer is not None else None,
            "tagger": self.tagger.hparams if self.tagger is not None else None,
        }

