"""Batched inference: features → scores → a well-formed tree per sentence, in input order.

Used both by the parser front end and by the trainer's dev evaluation, so what is selected on dev is
exactly what users run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any

import torch

from spandep.data.batching import token_batches
from spandep.data.sentence import Sentence
from spandep.decoding import eisner, mst
from spandep.encoders.base import batch_cost, sentence_features
from spandep.pipeline.parse_result import Parse

if TYPE_CHECKING:
    from spandep.models.biaffine import BiaffineParser
    from spandep.models.span_parser import SpanParser
    from spandep.pipeline.span_inference import InferenceStats

DECODERS = {"mst": mst, "eisner": eisner}
PROJECTIVE = ("projective", "eisner", "dp")  # user-facing names of the projective decoder of either model type


def span_inference_options(model: BiaffineParser | SpanParser, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """A span model's inference settings (saved defaults chosen on dev, then ``overrides``); ``{}`` for Biaffine."""
    saved: dict[str, Any] = getattr(model, "inference", {}) if model.model_type == "span" else {}
    return {**saved, **(overrides or {})} if saved else {}


def check_decoder_name(name: str | None) -> None:
    """``ValueError`` unless ``name`` is a decoder name either model type accepts (``None``: the model's default)."""
    if name not in (None, "mst", *PROJECTIVE):
        raise ValueError(f"unknown decoder {name!r}; use mst (non-projective) or projective")


def resolve_decoder(model: BiaffineParser | SpanParser, name: str | None) -> str:
    """The model type's own name of the decoder asked for: ``mst`` (non-projective) or projective (``eisner`` for
    Biaffine, ``dp`` for span models; ``projective``/``eisner``/``dp`` all mean it); ``None``: the model's default."""
    check_decoder_name(name)
    if name is None:
        if model.model_type == "span":
            return str(span_inference_options(model)["decoder"])
        return str(getattr(model, "config", {}).get("training", {}).get("config", {}).get("training", {}).get("decoder", "mst"))
    if name == "mst":
        return "mst"
    return "dp" if model.model_type == "span" else "eisner"


def predict_sentences(
    model: BiaffineParser | SpanParser,
    sentences: list[Sentence],
    batch_tokens: int = 4000,
    decoder: str | None = None,
    span_options: dict[str, Any] | None = None,
    stats: InferenceStats | None = None,
) -> list[Parse]:
    """Heads and labels (and UPOS, for a model with a tagging head) of each sentence, in order, for either model
    type.

    ``span_options`` override a span model's saved inference settings (``k``, ``lam``, ``retrieval``, ``mutual``,
    ``arc_weight``, ``label_source``); ``stats``
    (span models) accumulates the run's counters, including sentences that took the too-long fallback.
    """
    chosen = resolve_decoder(model, decoder)
    if model.model_type == "span":
        from spandep.pipeline.span_inference import parse_spans

        from spandep.models.span_parser import check_inference

        opts = span_inference_options(model, span_options)
        check_inference(opts, has_word_scorer=model.word_scorer is not None)  # type: ignore[union-attr]
        results, run = parse_spans(
            model, sentences, k=int(opts["k"]), lam=float(opts["lam"]), decoder=chosen,  # type: ignore[arg-type]
            retrieval=bool(opts["retrieval"]), batch_tokens=batch_tokens, mutual=bool(opts["mutual"]),
            arc_weight=float(opts["arc_weight"]), label_source=opts["label_source"],
        )
        if stats is not None:
            stats.add(run)
        return results
    feats = [sentence_features(model.encoder, s.forms, s.upos) for s in sentences]
    return predict_arcs(model, feats, batch_tokens, chosen)  # type: ignore[arg-type]


def predict_arcs(
    model: BiaffineParser,
    features: Sequence[dict[str, Any]],
    batch_tokens: int = 4000,
    decoder: str = "mst",
) -> list[Parse]:
    """Heads and labels for each featurised sentence, in the order given."""
    decode = DECODERS[decoder]
    results = [Parse([], []) for _ in features]
    lengths = [f["n_words"] for f in features]
    todo = [i for i, k in enumerate(lengths) if k > 0]
    was_training = model.training
    device = next(model.parameters()).device
    model.eval()
    with torch.inference_mode():
        for batch_ids in token_batches([batch_cost(features[i]) for i in todo], batch_tokens):
            idx = [todo[j] for j in batch_ids]
            batch = {key: v.to(device) for key, v in model.encoder.collate([features[i] for i in idx]).items()}
            s_arc, rel_reps = model(batch)  # (batch, 1 + n, 1 + n)
            n = torch.tensor([lengths[i] for i in idx])  # (batch,)
            heads = decode(s_arc.log_softmax(-1), n)  # (batch, 1 + n)
            labels = model.label_scores(rel_reps, heads).argmax(-1)  # (batch, 1 + n)
            for row, i in enumerate(idx):
                k = lengths[i]
                results[i] = Parse(heads[row, 1 : k + 1].tolist(), [model.labels[j] for j in labels[row, 1 : k + 1].tolist()])
    model.train(was_training)
    return results


def with_tree(sentence: Sentence, heads: list[int], labels: list[str], upos: list[str] | None = None) -> Sentence:
    """A copy of ``sentence`` with HEAD and DEPREL replaced, and UPOS filled in from ``upos`` where it was ``_``;
    every other column and line is kept."""
    tags = upos if upos is not None else [None] * len(sentence.words)
    words = [
        replace(w, head=h, deprel=r, upos=w.upos if t is None or w.upos != "_" else t)
        for w, h, r, t in zip(sentence.words, heads, labels, tags)
    ]
    return replace(sentence, words=words)


def parse_stream(
    model: BiaffineParser | SpanParser,
    sentences: Iterable[Sentence],
    batch_tokens: int = 4000,
    decoder: str | None = None,
    chunk_size: int = 2000,
    span_options: dict[str, Any] | None = None,
    stats: InferenceStats | None = None,
) -> Iterator[Sentence]:
    """Parse an iterable lazily, ``chunk_size`` sentences at a time, keeping input order and bounded memory."""
    it = iter(sentences)
    while chunk := list(islice(it, chunk_size)):
        results = predict_sentences(model, chunk, batch_tokens, decoder, span_options, stats)
        for s, parse in zip(chunk, results):
            yield with_tree(s, *parse)
