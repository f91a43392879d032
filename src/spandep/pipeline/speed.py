"""Parse-speed measurement shared by ``spandep benchmark-speed`` and ``benchmarks/scripts/speed_spandep.py``.

Sentences are read into memory first, so only parsing is timed (model load and file reading excluded); warm-up
runs are discarded; each timed run parses every sentence. The result reports words/s and sentences/s of every run
with their mean, standard deviation, minimum and maximum.
"""

from __future__ import annotations

import platform
import statistics
import time
from typing import Any

import torch

from spandep.data.sentence import Sentence
from spandep.options import InferenceOptions
from spandep.models.base import Parser
from spandep.models.layers import evaluating
from spandep.pipeline.predict import parse_stream


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(statistics.fmean(values), 1),
        "std": round(statistics.stdev(values), 1) if len(values) > 1 else 0.0,
        "min": round(min(values), 1),
        "max": round(max(values), 1),
    }


def _encode_only(model: Parser, sentences: list[Sentence], options: InferenceOptions) -> None:
    """The encoder's share of a parse of ``sentences`` (its output discarded)."""
    with evaluating(model):
        for _ in model.encoded_batches(sentences, options):
            pass


def measure_speed(
    model: Parser,
    sentences: list[Sentence],
    runs: int = 3,
    warmup: int = 1,
    options: InferenceOptions | None = None,
    encoder_only: bool = False,
) -> dict[str, Any]:
    """Time ``runs`` full parses (or, ``encoder_only``, encoder passes) of ``sentences`` with ``options`` after
    ``warmup`` untimed ones; see the module docstring."""
    if runs < 1:
        raise ValueError("runs must be at least 1")
    settings = model.settings(options)
    words = sum(len(s) for s in sentences)
    seconds: list[float] = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        if encoder_only:
            _encode_only(model, sentences, settings)
        else:
            for _ in parse_stream(model, sentences, settings):
                pass
        if i >= warmup:
            seconds.append(time.perf_counter() - start)
    result: dict[str, Any] = {
        "model_type": model.name,
        "encoder_only": encoder_only,
        "sentences": len(sentences),
        "words": words,
        "runs_seconds": [round(t, 3) for t in seconds],
        "words_per_s": _spread([words / t for t in seconds]),
        "sent_per_s": _spread([len(sentences) / t for t in seconds]),
        "warmup_runs": warmup,
        "batch_tokens": settings.batch_tokens,
        "decoder": settings.decoder,
        "inference": settings.given(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
    }
    return result
