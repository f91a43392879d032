"""The interface every word encoder implements.

An encoder turns a batch of sentences into one vector per word plus one for ROOT at position 0.
Feature extraction is split from the forward pass so that each sentence is tokenised once
(``featurize``) and batches are assembled cheaply (``collate``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

from spandep.data.sentence import Sentence
from spandep.data.vocab import build_vocab
from spandep.errors import OptionError
from spandep.registry import SettingsCheck


class WordEncoder(SettingsCheck, nn.Module):
    """Base class: subclasses set ``out_dim``, declare ``name`` (their registry name, the ``type`` of their config)
    and ``config_defaults`` (their ``[encoder]`` settings in a training config and the defaults), and implement
    ``featurize``, ``collate``, ``forward``, ``export_config`` and, where the config needs data, ``config_from_data``
    (and ``settings_problem`` where a setting is checked when a training config is read).

    One construction path: :meth:`from_config` builds the encoder from a config, whether the config was just made
    from training data (:meth:`config_from_data`) or read from a saved model (``export_config``'s output).
    """

    name: ClassVar[str]
    config_defaults: ClassVar[dict[str, Any]] = {}
    out_dim: int
    upos_vocab: list[str] | None = None
    int8: bool = False  # its linear layers dynamically quantised (storage.int8.dynamic_int8): float32 only, no bfloat16
    held_bfloat16: bool = False  # its pretrained linear weights stored in bfloat16 (storage.precision): bfloat16 only
    taps: tuple[int, ...] = ()  # layers whose outputs come after the word vectors (:meth:`tap`), for output heads
    layer_width: int = 0  # the width of one tapped layer's output

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """The config of a fresh encoder: the ``[encoder]`` ``settings`` of a training config (defaults filled),
        turned into constructor arguments, with what they take from the training data (vocabularies). Here:
        ``use_upos`` becomes a ``upos_vocab`` of the training data's tags."""
        config = {k: v for k, v in settings.items() if k != "use_upos"}
        config["upos_vocab"] = build_vocab((t for s in train for t in s.upos), specials=["<unk>"]) if settings.get("use_upos") else None
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any], assets: Path | None = None) -> WordEncoder:
        """Build from a config (``type`` plus constructor arguments); ``assets``: the saved model's encoder folder,
        for encoders that keep files there (random weights: the model's state dict is loaded afterwards)."""
        if config.get("type", cls.name) != cls.name:
            raise ValueError(f"not a {cls.name} encoder config: type={config['type']!r}")
        return cls(**{k: v for k, v in config.items() if k != "type"})

    def pretrained_module(self) -> nn.Module | None:
        """The module holding pretrained weights (loaded from a base package), or ``None``."""
        return None

    def pretrained_parameters(self) -> list[nn.Parameter]:
        """The weights loaded from a base package: the pretrained module's (an adapter trained inside it is not).
        They train at the encoder learning rate, and a compact model leaves the frozen ones out (they come from the
        base)."""
        module = self.pretrained_module()
        return list(module.parameters()) if module is not None else []

    def merge_adapter(self, each: Callable[[nn.Module, torch.Tensor], None] | None = None) -> None:
        """For inference only: fold a trained adapter into the pretrained weights (an encoder without one: nothing
        to do). A merged encoder parses as fast as a fully fine-tuned one but cannot be saved again. ``each``: the
        merge goes a layer at a time, each layer's sum in a new tensor, and ``each(layer, weight)`` gets the layer
        just merged and the pretrained weight its sum replaced (what :mod:`spandep.storage.precision` holds)."""

    @property
    def tap_dim(self) -> int:
        """The tapped layers' width: ``forward`` gives ``out_dim + tap_dim`` values per word."""
        return self.layer_width * len(self.taps)

    def tap(self, layers: Sequence[int]) -> None:
        """Give the outputs of these layers after the word vectors (an output head's ``layer``); an encoder without
        layers to read refuses any."""
        if layers:
            raise OptionError(f"layer = {layers[0]}: the {self.name} encoder has no transformer layers for a head to read (use a transformer encoder, or layer = 0)")

    def featurize(self, forms: list[str], upos: list[str] | None = None) -> dict[str, Any]:
        """Per-sentence features (plain Python / numpy), computed once and cached by the caller.

        Must hold ``n_words``; may hold ``cost``, the padded length the sentence costs in a batch (word pieces for
        a transformer), which token-budget batching uses instead of ``n_words + 1``.
        """
        raise NotImplementedError

    def collate(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        """Stack the features of several sentences into padded batch tensors (on CPU)."""
        raise NotImplementedError

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Return word vectors ``(batch, 1 + max_words, out_dim + tap_dim)``; position 0 is ROOT; the tapped
        layers' outputs (:attr:`taps`, if any) are the last ``tap_dim`` values."""
        raise NotImplementedError

    def export_config(self) -> dict[str, Any]:
        """JSON-serialisable settings (and vocabularies) that rebuild this encoder with :meth:`from_config`."""
        raise NotImplementedError


def sentence_features(encoder: WordEncoder, forms: list[str], upos: list[str]) -> dict[str, Any]:
    """``encoder.featurize`` for one sentence, passing UPOS tags only to an encoder that embeds them."""
    return encoder.featurize(forms, upos if encoder.upos_vocab is not None else None)


def batch_cost(features: dict[str, Any]) -> int:
    """What one sentence costs in a token-budget batch (its padded sequence length)."""
    return int(features.get("cost", features["n_words"] + 1))
