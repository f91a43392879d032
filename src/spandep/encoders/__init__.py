"""Word encoders: a pretrained transformer or a from-scratch word + character BiLSTM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spandep.encoders.base import WordEncoder


def build_encoder(cfg: dict[str, Any], assets: Path | None = None) -> WordEncoder:
    """Build an encoder from its exported config (``assets``: a saved model's encoder folder)."""
    kind = cfg.get("type")
    if kind == "transformer":
        from spandep.encoders.transformer import TransformerEncoder

        return TransformerEncoder.from_config(cfg, assets)
    if kind == "bilstm":
        from spandep.encoders.bilstm import BiLSTMEncoder

        return BiLSTMEncoder.from_config(cfg)
    raise ValueError(f"unknown encoder type {kind!r}: use 'transformer' or 'bilstm'")


__all__ = ["WordEncoder", "build_encoder"]
