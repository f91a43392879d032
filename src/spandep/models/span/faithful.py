"""The faithful span linker (Gan et al., 2022, §3.4): a pretrained transformer over every marked query.

A query is the sentence with the query span marked (``queries.py``); one transformer pass per query gives the
hidden states that ``LinkScorer``'s heads read (``linking.py`` has the scores, masks and losses).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from spandep.encoders.transformer import PretrainedAssets
from spandep.masking import mask_value
from spandep.models.span.linking import LinkerOutput, LinkScorer, link_masks
from spandep.models.span.queries import UPOS_NONE, QueryBuilder, SentencePieces

__all__ = ["SpanLinker"]


class SpanLinker(PretrainedAssets, LinkScorer):
    """The MRC span-linking model: a transformer over marked queries with parent-side and child-side heads.

    ``model``: a local transformer directory or a packaged alias (``resolve_model_path``); ``pretrained=False``
    builds it from its config (weights come from a saved model). ``labels``: the dependency relations.
    ``query_format``: ``"paired"`` (the paper's) or ``"inline"`` (``QueryBuilder``). ``upos_vocab``: UPOS tags whose
    embedding is added to the input embeddings (``None``: none). ``objective``: ``"softmax"`` (parent-side CE, the
    paper's) or ``"bce"`` (one sigmoid per position). ``label_weight`` / ``mutual_weight`` weight the label CE and the
    child-side BCE (``mutual_weight=0``: no mutual term in the loss). ``scoring``: see the module docstring.
    """

    names = ("paired", "inline")
    model_type = "span_linker"
    config_tag = "model_type"
    marker_ids: torch.Tensor  # buffer of the four marker token ids

    def __init__(
        self,
        model: str,
        labels: Sequence[str],
        query_format: str = "paired",
        upos_vocab: Sequence[str] | None = None,
        max_len: int | None = None,
        pretrained: bool = True,
        freeze_embeddings: bool = True,
        dropout: float = 0.1,
        objective: str = "softmax",
        label_weight: float = 1.0,
        mutual_weight: float = 1.0,
        scoring: str = "span-span",
        allow_root_in_span: bool = False,
    ) -> None:
        super().__init__()
        self._init_scoring(labels, objective, label_weight, mutual_weight, scoring, allow_root_in_span)
        self.load_backbone(model, pretrained)
        cfg = self.transformer.config
        hidden = cfg.hidden_size
        # RoBERTa-like embeddings count positions from padding_idx + 1; BERT-like ones from 0
        pad_idx = getattr(getattr(self.transformer, "embeddings", None), "padding_idx", None)
        self.position_offset = int(pad_idx) + 1 if isinstance(pad_idx, int) else 0
        limit = getattr(cfg, "max_position_embeddings", 512) - self.position_offset
        tok_limit = self.tokenizer.model_max_length
        if tok_limit and tok_limit < 100_000:
            limit = min(limit, int(tok_limit))
        self.max_len = min(max_len, limit) if max_len else limit
        self.queries = QueryBuilder(self.tokenizer, query_format, self.max_len, upos_vocab)
        self.query_format = query_format
        self.upos_vocab = list(upos_vocab) if upos_vocab is not None else None
        self.pad_id = self.queries.pad_id
        self.register_buffer(
            "marker_ids", torch.as_tensor(self.queries.marker_ids, dtype=torch.long), persistent=False
        )  # (4,)

        word = self.transformer.get_input_embeddings()
        self.freeze_embeddings = freeze_embeddings
        word.weight.requires_grad_(not freeze_embeddings)
        self.marker_embed = nn.Embedding(4, hidden)
        with torch.no_grad():
            base = word.weight.float()  # (vocab, hidden)
            mean, std = base.mean(0), base.std(0)  # (hidden,) each
            self.marker_embed.weight.copy_(mean + std * torch.randn(4, hidden))  # (4, hidden)
        self.upos_embed: nn.Embedding | None = None
        if self.upos_vocab is not None:
            self.upos_embed = nn.Embedding(self.queries.n_upos, hidden, padding_idx=UPOS_NONE)
            nn.init.zeros_(self.upos_embed.weight)  # starts as a no-op on the pretrained input distribution

        forward_args = inspect.signature(self.transformer.forward).parameters
        self._takes_types = "token_type_ids" in forward_args
        self._takes_positions = "position_ids" in forward_args
        if self.query_token and not self._takes_positions:
            raise ValueError(f"scoring {scoring!r} hides markers from positions, which needs position_ids")

        self.dropout = nn.Dropout(dropout)
        self.parent_head = nn.Linear(hidden, 3)  # h_rootᵀ h_t, h_startᵀ h_t, h_endᵀ h_t (+ bias)
        self.child_head = nn.Linear(hidden, 3)
        self.label_head = nn.Linear(hidden, len(self.labels))
        self.hparams["dropout"] = dropout

    # ------------------------------------------------------------------------------------- encoding
    def embed(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Input embeddings: frozen word pieces, the trainable marker rows spliced in, plus UPOS when configured."""
        ids = batch["input_ids"]  # (batch, L)
        clean = ids.masked_fill(torch.isin(ids, self.marker_ids), self.pad_id)  # (batch, L)
        emb = self.transformer.get_input_embeddings()(clean)  # (batch, L, hidden)
        d = emb.size(-1)
        index = batch["marker_pos"].to(ids.device).unsqueeze(-1).expand(-1, -1, d)  # (batch, 4, hidden)
        markers = self.marker_embed.weight.to(emb.dtype).unsqueeze(0).expand(ids.size(0), -1, -1)  # (batch, 4, hidden)
        emb = emb.scatter(1, index, markers)  # (batch, L, hidden)
        if self.upos_embed is not None and "upos" in batch:
            emb = emb + self.upos_embed(batch["upos"]).to(emb.dtype)  # (batch, L, hidden)
        return emb

    def encode(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Final hidden states of every query position, ``(batch, L, hidden)``."""
        attention = batch["attention_mask"].clone()  # (batch, L)
        if self.query_token:  # root-only query: <sos> and <eos> are invisible and take no position
            span_markers = batch["marker_pos"][:, [0, 3]]  # (batch, 2)
            attention = attention.scatter(1, span_markers, 0)  # (batch, L)
        kwargs: dict[str, torch.Tensor] = {"inputs_embeds": self.embed(batch), "attention_mask": attention}
        if self._takes_types and "token_type_ids" in batch:
            kwargs["token_type_ids"] = batch["token_type_ids"]
        if self._takes_positions:
            positions = (attention.cumsum(1) - 1).clamp(min=0) + self.position_offset  # (batch, L)
            kwargs["position_ids"] = positions
        return self.transformer(**kwargs).last_hidden_state  # (batch, L, hidden)

    def forward(self, batch: dict[str, torch.Tensor]) -> LinkerOutput:
        """Masked parent-side and child-side logits at the context word positions (``QueryBuilder.collate`` batch)."""
        states = self.encode(batch)  # (batch, L, hidden)
        pos = batch["context_word_pos"].to(states.device)  # (batch, 1 + n)
        ctx = states.gather(1, pos.unsqueeze(-1).expand(-1, -1, states.size(-1)))  # (batch, 1 + n, hidden)
        ctx = self.dropout(ctx)  # (batch, 1 + n, hidden)
        word_mask = batch["context_word_mask"].to(states.device)  # (batch, 1 + n)
        parent_mask, child_mask = link_masks(batch["span"], word_mask, self.query_token, self.allow_root_in_span)
        fill = mask_value(ctx.dtype)
        parent = self.parent_head(ctx).transpose(1, 2).masked_fill(~parent_mask, fill)  # (batch, 3, 1 + n)
        child = self.child_head(ctx).transpose(1, 2).masked_fill(~child_mask.unsqueeze(1), fill)  # (batch, 3, 1 + n)
        has_parent = batch["span"][:, 0].to(states.device) != 0  # (batch,)
        return LinkerOutput(ctx, parent, child, parent_mask, child_mask, has_parent)

    def label_scores(self, hidden: torch.Tensor, query: torch.Tensor | None, parent_root: torch.Tensor) -> torch.Tensor:
        """Label logits read at the parent root's context position: ``parent_root (batch, C)`` → ``(batch, C, labels)``."""
        h = hidden  # (batch, 1 + n, hidden)
        idx = parent_root.clamp(0, h.size(1) - 1)  # (batch, C)
        at = h.gather(1, idx.unsqueeze(-1).expand(-1, -1, h.size(-1)))  # (batch, C, hidden)
        return self.label_head(at)  # (batch, C, labels)

    @classmethod
    def build(cls, fmt: str, options: dict[str, Any], n_in: int, labels: Sequence[str], assets: Path | None) -> SpanLinker:
        """Its own transformer (``options["model"]``), whatever the shared encoder; ``fmt``: the query format."""
        return cls.from_config({**options, "labels": list(labels), "query_format": fmt}, assets)

    # ------------------------------------------------------------------------------------- query interface
    def prepare(self, forms: Sequence[str], upos: Sequence[str] | None, vectors: torch.Tensor | None = None) -> SentencePieces:
        """The sentence's word pieces, tokenised once (``vectors`` are not used: queries are re-encoded)."""
        return self.queries.sentence_pieces(list(forms), list(upos) if upos is not None and self.upos_vocab is not None else None)

    def training_state(self, forms: Sequence[str], upos: Sequence[str] | None) -> SentencePieces:
        """The word pieces, tokenised once with the training sentence's features."""
        return self.prepare(forms, upos)

    def training_batch(
        self, x: torch.Tensor, word_mask: torch.Tensor, sentence: Sequence[int], spans: torch.Tensor, states: Sequence[Any]
    ) -> dict[str, Any]:
        """The step's queries built from each sentence's word pieces (the word vectors are not used)."""
        items = [(states[b], *(int(v) for v in span)) for b, span in zip(sentence, spans)]
        return {k: v.to(x.device) for k, v in self.make_batch(items).items()}

    def query_length(self, state: SentencePieces) -> int:
        return self.queries.query_length(state)

    def fits(self, state: SentencePieces) -> bool:
        return self.queries.fits(state)

    def make_batch(self, items: Sequence[tuple[SentencePieces, int, int, int]]) -> dict[str, Any]:
        return self.queries.collate([self.queries.build(state, r, s, e) for state, r, s, e in items])

    # ------------------------------------------------------------------------------------- config
    def export_config(self) -> dict[str, Any]:
        """JSON-serialisable constructor arguments (``from_config`` rebuilds the model)."""
        return {
            "model_type": self.model_type, "model": self.model_name, "labels": self.labels, "query_format": self.query_format,
            "upos_vocab": self.upos_vocab, "max_len": self.max_len, "freeze_embeddings": self.freeze_embeddings,
            **self.hparams,
        }
