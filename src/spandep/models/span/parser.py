"""The span-span parser (Gan et al., 2022): a word encoder, span proposal and MRC span linking, trained jointly.

``SpanParser`` holds the three modules, computes the joint training loss and parses through its staged inference
(``inference.SpanInference``: propose → link → decode, over the modules it hands over and one options object).

Linkers (``linker["format"]``, the ``LINKERS`` registry):

* ``late`` (default): ``LateSpanLinker`` over the shared encoder's word vectors (one encoder pass per sentence);
* ``paired`` / ``inline``: the faithful ``SpanLinker`` with its own pretrained transformer (``linker["model"]``), one
  pass per query, as in the paper (two modules with separate encoders).

Training queries (per sentence and step): ROOT's query and each word's query are kept with probability
``query_rate``, lowered to ``max_queries / (n + 1)`` for long sentences when ``max_queries`` is set (the late linker's
cost per query grows with n, so this keeps a step's cost linear in the words), and at least one per sentence; all
words are covered over the epochs at a fraction of the cost. A
kept word query uses the word's gold (hull) span, or with probability ``noisy_rate`` the span the proposal module
currently predicts for it (its top-1, detached), so the linker also learns from the kind of wrong spans it meets at
inference (docs/design.md, "Training"); targets always come from the true tree (``link_targets``).

Word-level head (``word_scorer``, optional; not in the paper): a Biaffine arc and label scorer on the shared
encoder, trained jointly (its cross-entropies are added to the loss). At inference its head log-probability of each
link's (child root, parent root) pair can be added to the link score with weight ``arc_weight``, and labels can come
from it instead of the linker (``label_source = "word"``); both are inference settings chosen on dev (``spandep tune``), and
``arc_weight = 0`` with ``label_source = "linker"`` is the paper's parser.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import torch

from spandep.checks import Range
from spandep.data.sentence import Sentence
from spandep.encoders.base import WordEncoder
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.base import Parse, Parser, keep_labels
from spandep.decoding import DECODERS
from spandep.models.biaffine import BiaffineScorer
from spandep.models.layers import evaluating
from spandep.models.span import LINKERS
from spandep.models.span.inference import Encoded, SpanInference, SpanParts
from spandep.models.span.linking import LinkScorer
from spandep.models.span.proposal import SpanProposal, gold_span_targets
from spandep.models.span.scores import SpanScores
from spandep.models.treebanks import LABELS

__all__ = ["SpanParser"]

LINKER_ASSETS = "linker"  # a faithful linker's own tokenizer and architecture, in the model folder


class SpanParser(Parser):
    """Encoder + span proposal + span linker; ``loss`` is the sum of the proposal and linking losses."""

    name = "span"
    projective_fallback = True  # span_dp gives span_mst's tree when no projective tree keeps the given heads
    config_defaults = {  # word_scorer: true (default sizes) or a table of BiaffineScorer sizes, a word-level head
        "span_mlp": 500, "span_dropout": 0.33, "query_rate": 1.0, "max_queries": 0, "noisy_rate": 0.0,
        "linker": {"format": "late"}, "word_scorer": False,
    }
    decoders = {"mst": "span_mst", "projective": "span_dp"}
    scoring_settings = ("k", "mutual", "prune", "precision")
    inference_defaults = {
        "decoder": "projective", "k": 2, "lam": 1.0, "retrieval": True, "mutual": True, "arc_weight": 0.0,
        "label_source": "linker", "prune": 0.0, "precision": "float32",
    }
    linker: LinkScorer
    word_scorer: BiaffineScorer | None

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
        word_scorer: dict[str, Any] | None = None,
        inference: dict[str, Any] | None = None,
        linker_assets: Path | None = None,
        treebanks: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(encoder, labels, inference, treebanks)
        if not 0.0 < query_rate <= 1.0:
            raise ValueError(f"query_rate must be in (0, 1], not {query_rate}")
        if not 0.0 <= noisy_rate <= 1.0:
            raise ValueError(f"noisy_rate must be in [0, 1], not {noisy_rate}")
        self.linker_options = dict(linker or {"format": "late"})
        self.proposal = SpanProposal(self.width, span_mlp, span_dropout)
        options = dict(self.linker_options)
        fmt = options.pop("format", "late")
        self.linker = LINKERS.get(fmt).build(fmt, options, self.width, self.labels, linker_assets)
        self.query_rate = query_rate
        self.max_queries = max_queries
        self.noisy_rate = noisy_rate
        self.word_scorer = BiaffineScorer(self.width, len(self.labels), **word_scorer) if word_scorer is not None else None
        self._word_scorer_check(self.inference)

    @classmethod
    def settings_problem(cls, settings: dict[str, Any]) -> str | None:
        """Rates out of range."""
        problem = Range(0, 1, integer=False, open_low=True).problem("query_rate", settings["query_rate"])
        return problem or Range(0, 1, integer=False).problem("noisy_rate", settings["noisy_rate"])

    @classmethod
    def missing(cls, settings: dict[str, Any]) -> str | None:
        """A faithful linker's transformer that this machine does not have."""
        linker = settings["linker"]
        if not isinstance(linker, dict) or "model" not in linker:
            return None
        from spandep.encoders.bases import model_path_problem

        return model_path_problem("linker model", linker["model"])

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """The shared arguments, with ``word_scorer = true`` turned into default sizes (``false``: none)."""
        config = super().config_from_data(settings, train)
        value = config["word_scorer"]
        config["word_scorer"] = value if isinstance(value, dict) else ({} if value else None)
        return config

    @classmethod
    def saved_files(cls, folder: Path | None) -> dict[str, Any]:
        """A faithful linker's saved tokenizer and architecture."""
        return {"linker_assets": folder / LINKER_ASSETS if folder is not None and (folder / LINKER_ASSETS).is_dir() else None}

    @classmethod
    def upgrade_v1(cls, model: dict[str, Any], state: dict[str, torch.Tensor], training: dict[str, Any]) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        """The UPOS tagger (``tagger``, weights ``tagger.*``) becomes the output head ``upos``; the projective decoder
        ``dp`` is called ``projective``."""
        model = dict(model)
        tagger = model.pop("tagger", None)
        model["heads"] = {"upos": tagger} if tagger is not None else {}
        inference = dict(model.get("inference", {}))
        inference["decoder"] = {"dp": "projective"}.get(inference.get("decoder", "dp"), inference.get("decoder"))
        model["inference"] = inference
        state = {("heads.upos." + k[len("tagger."):] if k.startswith("tagger.") else k): v for k, v in state.items()}
        return model, state

    def hparams(self) -> dict[str, Any]:
        return {
            "linker": {**self.linker_options, **self.linker.hparams},  # resolved, defaults included
            **self.proposal.export_config(),
            "query_rate": self.query_rate,
            "max_queries": self.max_queries,
            "noisy_rate": self.noisy_rate,
            "word_scorer": self.word_scorer.hparams if self.word_scorer is not None else None,
        }

    def pretrained_parameters(self) -> list[torch.nn.Parameter]:
        """The encoder's pretrained weights, and a faithful linker's own transformer's."""
        module = self.linker.pretrained_module()
        return super().pretrained_parameters() + (list(module.parameters()) if module is not None else [])

    def save_assets(self, folder: Path) -> None:
        """A faithful linker's tokenizer and architecture (its weights are in the model file)."""
        save = getattr(self.linker, "save_assets", None)
        if save is not None:
            save(folder / LINKER_ASSETS)

    def settings(self, options: InferenceOptions | None = None) -> InferenceOptions:
        """As :meth:`Parser.settings`; ``ValueError`` for word-scorer terms on a model without a word scorer."""
        return self._word_scorer_check(super().settings(options))

    def _word_scorer_check(self, chosen: InferenceOptions) -> InferenceOptions:
        """``chosen``, or a ``ValueError`` for word-scorer terms on a model without a word scorer."""
        if self.word_scorer is None and (chosen.arc_weight or chosen.label_source == "word"):
            raise ValueError("arc_weight and label_source='word' need a model trained with a word scorer ([model] word_scorer)")
        return chosen

    def stages(self, options: InferenceOptions | None = None) -> SpanInference:
        """The staged inference of a parse with ``options`` over the saved settings (:meth:`settings`)."""
        settings = self.settings(options)
        decoders = {name: DECODERS.get(algorithm) for name, algorithm in self.decoders.items()}
        parts = SpanParts(self._encoded, self.proposal, self.linker, self.word_scorer, self.labels, decoders, partial(self.products, settings))
        return SpanInference(parts, settings, self.allowed(LABELS, settings))

    def _encoded(self, sentences: Sequence[Sentence], options: InferenceOptions) -> Iterator[Encoded]:
        """:meth:`encoded_batches` with each batch's output heads' columns (:meth:`annotate`)."""
        for idx, batch, x in self.encoded_batches(sentences, options):
            columns = self.annotate(x, batch["word_mask"], [sentences[i].forms for i in idx], options)
            yield idx, batch["word_mask"], x[..., : self.width], columns  # x: (batch, 1 + n, width)

    def parse(
        self, sentences: Sequence[Sentence], options: InferenceOptions | None = None, stats: InferenceStats | None = None
    ) -> list[Parse]:
        inference = self.stages(options)
        with evaluating(self):
            results, run = inference.parse(list(sentences))
        if stats is not None:
            stats.add(run)
        return keep_labels(results, sentences, options)

    def score(self, sentences: Sequence[Sentence], options: InferenceOptions | None = None) -> SpanScores:
        """Stages 1 and 2 of a parse with ``options`` and retrieval, decodable with or without it (``SpanScores``)."""
        inference = self.stages(replace(options or InferenceOptions(), retrieval=True))
        with evaluating(self):
            return SpanScores(inference, sentences)

    # ------------------------------------------------------------------ training
    def training_features(self, sentence: Sentence, treebank: str | None = None) -> dict[str, Any]:
        """As :meth:`Parser.training_features`, plus the linker's per-sentence state (``LinkScorer.training_state``)."""
        return {**super().training_features(sentence, treebank), "query_state": self.linker.training_state(sentence.forms, sentence.upos)}

    def training_batch(self, features: Sequence[dict[str, Any]], device: torch.device) -> dict[str, Any]:
        batch = super().training_batch([{k: v for k, v in f.items() if k != "query_state"} for f in features], device)
        batch["query_states"] = [f["query_state"] for f in features]
        return batch

    def loss(self, batch: dict[str, Any]) -> torch.Tensor:
        """Joint loss of one batch: the encoder's tensors plus ``heads``/``rels`` ``(batch, 1 + n)`` (position 0
        unused) and ``query_states`` (the linker's ``training_state`` per sentence)."""
        vectors = self.word_vectors(batch)  # (batch, 1 + n, width + taps)
        x = vectors[..., : self.width]  # (batch, 1 + n, width)
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
        loss = loss + self.heads_loss(vectors, batch)
        spans, sentence = self._training_queries(s_start.detach(), s_end.detach(), gold_start, gold_end, word_mask)
        targets = self.linker.link_targets([heads[b] for b in sentence], [rels[b] for b in sentence], spans, x.size(1))
        link_batch = self.linker.training_batch(x, word_mask, sentence, spans, batch["query_states"])
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
