"""A Hugging Face transformer as a word encoder, loaded offline from a local directory (``spandep.encoders`` sets
Hugging Face offline before this module imports it).

Each sentence is tokenised once into word pieces; word vectors are pooled from their pieces (first
piece or mean) over a learned scalar mix of the last layers. ROOT is read at the ``[CLS]`` position.
Sentences longer than the model's position limit are encoded in overlapping windows, each piece taking
its vector from the window where it sits furthest from an edge, so nothing is ever truncated. With an ``adapter``
(``encoders/adapters``) every pretrained weight stays frozen and only the adapter's weights train in the transformer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from transformers import AutoConfig, AutoModel
from transformers.utils import logging as hf_logging

from spandep.encoders.adapters import ADAPTERS, adapter_parameters, adapter_problem, merge_layers
from spandep.encoders.base import WordEncoder
from spandep.encoders.bases import MINILM_ALIAS, model_path_problem, resolve_model_path
from spandep.errors import ModelError, OptionError
from spandep.tokenization.encoder_features import piece_tokenizer


class ScalarMix(nn.Module):
    """Softmax-weighted sum of several layers times a learned scale (Peters et al., 2018)."""

    def __init__(self, n_layers: int) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(1))

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        w = torch.softmax(self.weights, dim=0)  # (n_layers,)
        return self.gamma * sum(wi * h for wi, h in zip(w, layers))  # (batch, pieces, hidden)


@contextmanager
def _no_progress_bar() -> Iterator[None]:
    """transformers' progress bars off for the block (restored afterwards if they were on)."""
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


class PretrainedAssets:
    """For modules that own a Hugging Face ``tokenizer`` and ``transformer``: save both's small files next to a
    model, and rebuild from them so a saved model needs no base weights. ``config_tag`` names the key of
    ``export_config()`` that is not a constructor argument."""

    config_tag = "type"
    model_name: str
    transformer: nn.Module

    def pretrained_module(self) -> nn.Module:
        """The Hugging Face transformer: its weights come from the base package."""
        return self.transformer

    def load_backbone(self, model: str, pretrained: bool) -> None:
        """Set ``tokenizer`` and ``transformer`` from a local folder or packaged alias; random weights unless
        ``pretrained`` (a saved model's own weights are loaded afterwards)."""
        self.model_name = model
        path = resolve_model_path(model)
        self.tokenizer = piece_tokenizer(path)  # shared with any other model of the same base in this process
        if pretrained:
            with _no_progress_bar():  # transformers draws a "Loading weights" bar on stderr at every load
                self.transformer = AutoModel.from_pretrained(path)
        else:
            self.transformer = AutoModel.from_config(AutoConfig.from_pretrained(path))

    def save_assets(self, directory: Path) -> None:
        """Store the tokenizer and architecture config (the weights go in the model file)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.tokenizer.save_pretrained(str(directory))  # type: ignore[attr-defined]
        self.transformer.config.save_pretrained(str(directory))  # type: ignore[attr-defined]

    @classmethod
    def from_config(cls, cfg: dict[str, Any], assets: Path | None = None) -> Any:
        """Rebuild from ``export_config()``; with ``assets`` (a ``save_assets`` folder) the transformer is built
        from its config with random weights, to be filled by loading the model's state dict."""
        kwargs = {k: v for k, v in cfg.items() if k != cls.config_tag}
        if assets is None:
            return cls(**kwargs)
        kwargs.update(model=str(assets), pretrained=False)  # overrides a ``pretrained`` saved in ``cfg``
        module = cls(**kwargs)
        module.model_name = cfg["model"]
        return module


class TransformerEncoder(PretrainedAssets, WordEncoder):
    """Word vectors from a pretrained transformer with subword pooling and optional UPOS embeddings."""

    name = "transformer"
    config_defaults = {
        "model": MINILM_ALIAS,
        "pooling": "mean",
        "mix_layers": 4,
        "dropout": 0.1,
        "use_upos": False,
        "upos_dim": 100,
        "pretrained": True,
        "freeze_embeddings": True,
        "freeze_layers": 0,  # also freeze the lowest N transformer layers (they then need not ship with the model)
        "adapter": None,  # or { type = "lora", ... }: every pretrained weight frozen, an adapter trained (ADAPTERS)
    }

    @classmethod
    def settings_problem(cls, settings: dict[str, Any]) -> str | None:
        """An adapter table that is wrong, or given with settings that unfreeze pretrained weights."""
        adapter = settings["adapter"]
        if not adapter:
            return None
        if not isinstance(adapter, dict):
            return f'adapter must be a table such as {{ type = "lora" }}, not {adapter!r}'
        if not settings["freeze_embeddings"] or settings["freeze_layers"]:
            return "freeze_embeddings = false and freeze_layers do not apply with an adapter (it freezes every pretrained weight); remove them"
        return adapter_problem(adapter)

    @classmethod
    def missing(cls, settings: dict[str, Any]) -> str | None:
        """An encoder ``model`` this machine does not have (nothing is downloaded)."""
        return model_path_problem("model", settings["model"])

    def __init__(
        self,
        model: str,
        pooling: str = "mean",
        mix_layers: int = 4,
        dropout: float = 0.1,
        upos_vocab: list[str] | None = None,
        upos_dim: int = 100,
        max_pieces: int | None = None,
        pretrained: bool = True,
        freeze_embeddings: bool = True,
        freeze_layers: int = 0,
        adapter: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if pooling not in ("first", "mean"):
            raise ValueError(f"pooling must be 'first' or 'mean', not {pooling!r}")
        self.load_backbone(model, pretrained)
        cfg = self.transformer.config
        self.freeze_embeddings = freeze_embeddings
        # The word-piece embedding matrix is half of a small encoder's weights; fine-tuning it costs a dense
        # gradient and optimiser update per step for little gain, so it is frozen by default.
        self.transformer.get_input_embeddings().weight.requires_grad_(not freeze_embeddings)
        # Freezing the lowest layers too keeps a shipped model small: frozen weights come from the base package.
        self.freeze_layers = freeze_layers
        for layer in self._layers()[:freeze_layers]:
            layer.requires_grad_(False)
        self.adapter: dict[str, Any] | None = None  # the adapter's type and settings (defaults filled)
        if adapter:
            kind, settings = ADAPTERS.configured(adapter)
            self.transformer = ADAPTERS.get(kind).wrap(self.transformer, settings)
            self.adapter = {"type": kind, **settings}
        self.merged = False
        self.pooling = pooling
        self.mix_layers = min(mix_layers, cfg.num_hidden_layers)
        self.mix = ScalarMix(self.mix_layers)
        self.layer_width = cfg.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.dropout_p = dropout
        limit = getattr(cfg, "max_position_embeddings", 512)
        self.max_pieces = max_pieces or min(limit, self.tokenizer.model_max_length or limit)
        self.cls_id = self.tokenizer.cls_token_id if self.tokenizer.cls_token_id is not None else self.tokenizer.bos_token_id
        self.sep_id = self.tokenizer.sep_token_id if self.tokenizer.sep_token_id is not None else self.tokenizer.eos_token_id
        self.pad_id = self.tokenizer.pad_token_id or 0
        self.unk_id = self.tokenizer.unk_token_id if self.tokenizer.unk_token_id is not None else self.pad_id
        self.upos_vocab = list(upos_vocab) if upos_vocab else None
        self.upos_dim = upos_dim
        self.upos_index = {t: i for i, t in enumerate(self.upos_vocab)} if self.upos_vocab else {}
        self.upos_embed = nn.Embedding(len(self.upos_vocab), upos_dim) if self.upos_vocab else None
        self.out_dim = cfg.hidden_size + (upos_dim if self.upos_vocab else 0)

    # ----------------------------------------------------------------------------------- features
    def featurize(self, forms: list[str], upos: list[str] | None = None) -> dict[str, Any]:
        """Word pieces per word (never empty: a word that tokenises to nothing gets ``[UNK]``)."""
        # verbose=False: no "sequence length is longer than the maximum" warning; long sentences are windowed here
        # verbose=False: no "sequence length is longer than the maximum" warning; long sentences are windowed here
        enc = self.tokenizer(list(forms), is_split_into_words=True, add_special_tokens=False, verbose=False)
        ids: list[int] = enc["input_ids"]
        owners = enc.word_ids()
        counts = np.zeros(len(forms), dtype=np.int64)
        for w in owners:
            counts[w] += 1
        pieces: list[int] = []
        piece_word: list[int] = []
        k = 0
        for w in range(len(forms)):
            if counts[w] == 0:
                pieces.append(self.unk_id)
                piece_word.append(w + 1)
            else:
                pieces.extend(ids[k : k + counts[w]])
                piece_word.extend([w + 1] * int(counts[w]))
                k += int(counts[w])
        feats: dict[str, Any] = {
            "pieces": np.asarray(pieces, dtype=np.int64),
            "piece_word": np.asarray(piece_word, dtype=np.int64),
            "n_words": len(forms),
            "cost": len(pieces) + 2,  # [CLS] pieces [SEP]: batches are budgeted in pieces, not words
        }
        if self.upos_vocab is not None:
            tags = upos or ["_"] * len(forms)
            feats["upos"] = np.asarray([0] + [self.upos_index.get(t, 0) for t in tags], dtype=np.int64)
        return feats

    def collate(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        """Pad pieces to ``[CLS] pieces [SEP]``; ``piece_mask`` marks those real positions (a word piece may share
        the pad id, so padding is never inferred from ids) and ``piece_word`` maps each position to its word (0 = ROOT)."""
        batch = len(features)
        max_p = max(len(f["pieces"]) for f in features) + 2
        max_w = max(f["n_words"] for f in features)
        input_ids = torch.full((batch, max_p), self.pad_id, dtype=torch.long)  # (batch, pieces)
        piece_word = torch.full((batch, max_p), max_w + 1, dtype=torch.long)  # (batch, pieces); max_w+1 = discard
        word_mask = torch.zeros(batch, max_w + 1, dtype=torch.bool)  # (batch, 1 + words)
        piece_mask = torch.zeros(batch, max_p, dtype=torch.bool)  # (batch, pieces): [CLS] pieces [SEP]
        for b, f in enumerate(features):
            p = len(f["pieces"])
            piece_mask[b, : p + 2] = True
            input_ids[b, 0] = self.cls_id
            input_ids[b, 1 : p + 1] = torch.from_numpy(f["pieces"])
            input_ids[b, p + 1] = self.sep_id
            piece_word[b, 0] = 0
            piece_word[b, 1 : p + 1] = torch.from_numpy(f["piece_word"])
            word_mask[b, : f["n_words"] + 1] = True
        out = {"input_ids": input_ids, "piece_mask": piece_mask, "piece_word": piece_word, "word_mask": word_mask}
        if self.upos_vocab is not None:
            upos = torch.zeros(batch, max_w + 1, dtype=torch.long)  # (batch, 1 + words)
            for b, f in enumerate(features):
                upos[b, : len(f["upos"])] = torch.from_numpy(f["upos"])
            out["upos"] = upos
        return out

    # ----------------------------------------------------------------------------------- forward
    def _encode_pieces(self, input_ids: torch.Tensor, piece_mask: torch.Tensor) -> torch.Tensor:
        """Mixed hidden states for every piece, ``(batch, pieces, hidden)``; rows longer than ``max_pieces`` are
        encoded in windows, the others as they are (alone when the batch needs windowing)."""
        if input_ids.size(1) <= self.max_pieces:
            return self._run(input_ids, piece_mask)
        rows = []
        for row, length in zip(input_ids, piece_mask.sum(1).tolist()):
            if length <= self.max_pieces:
                hidden = self._run(row[None, :length], piece_mask[None, 0, :length])[0]  # (length, hidden)
            else:
                hidden = self._run_windowed(row[:length])  # (length, hidden)
            rows.append(torch.cat([hidden, hidden.new_zeros(row.numel() - length, hidden.size(-1))]))  # (pieces, hidden)
        return torch.stack(rows)  # (batch, pieces, hidden)

    def _layers(self) -> nn.ModuleList:
        """The transformer's layer stack (BERT-like models: ``encoder.layer``)."""
        layers = getattr(getattr(self.transformer, "encoder", None), "layer", None)
        if not isinstance(layers, nn.ModuleList):
            raise ValueError(f"the encoder reads and freezes layers of a BERT-like model (encoder.layer); {self.model_name!r} has none")
        return layers

    def _run(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The scalar mix of the last ``mix_layers`` layers' outputs ``(batch, pieces, hidden)``, read as each layer
        returns (forward hooks): the layers below are freed as the pass goes on instead of being kept to its end, as
        ``output_hidden_states`` keeps them (on en-accurate a quarter of an encoder batch's peak memory). With
        :attr:`taps`, each tapped layer's output after the mix: ``(batch, pieces, hidden · (1 + taps))``."""
        layers = self._layers()
        kept: dict[int, torch.Tensor] = {}

        def keeper(i: int) -> Callable[[nn.Module, Any, Any], None]:
            def keep(module: nn.Module, inputs: Any, output: Any) -> None:
                kept[i] = output[0] if isinstance(output, tuple) else output  # (batch, pieces, hidden)

            return keep

        hooks = [layers[i].register_forward_hook(keeper(i)) for i in self.kept_layers()]
        try:
            self.transformer(input_ids=input_ids, attention_mask=mask.long())
        finally:
            for hook in hooks:
                hook.remove()
        return self.mixed(kept)

    def kept_layers(self) -> list[int]:
        """The layers (0 = the lowest) whose outputs :meth:`mixed` reads: the mixed ones and the tapped ones."""
        n = len(self._layers())
        return sorted(set(range(n - self.mix_layers, n)) | {t - 1 for t in self.taps})

    def mixed(self, kept: dict[int, torch.Tensor]) -> torch.Tensor:
        """The scalar mix of the last ``mix_layers`` of ``kept`` (layer: output ``(batch, pieces, hidden)``), each tapped
        layer's output after it: ``(batch, pieces, hidden · (1 + taps))``."""
        n = len(self._layers())
        mix = self.mix([kept[i] for i in range(n - self.mix_layers, n)])  # (batch, pieces, hidden)
        if not self.taps:
            return mix
        return torch.cat([mix] + [kept[t - 1].to(mix.dtype) for t in self.taps], -1)  # (batch, pieces, hidden · (1 + taps))

    def _run_windowed(self, row: torch.Tensor) -> torch.Tensor:
        """One over-long sequence ``[CLS] x [SEP]`` (no padding) in overlapping windows of ``max_pieces``; each
        piece takes its vector from the window where it sits furthest from an edge."""
        body = row[1:-1]  # (n_pieces,) without CLS/SEP
        n = body.numel()
        size = self.max_pieces - 2
        stride = size // 2
        starts = list(range(0, max(n - size, 0) + 1, stride))
        if starts[-1] + size < n:
            starts.append(n - size)
        windows = torch.stack(
            [torch.cat([row[:1], body[s : s + size], row[:1].new_tensor([self.sep_id])]) for s in starts]
        )  # (n_windows, max_pieces)
        hidden = self._run(windows, torch.ones_like(windows, dtype=torch.bool))  # (n_windows, max_pieces, hidden)
        result = hidden.new_zeros(row.numel(), hidden.size(-1))  # (pieces, hidden)
        best = torch.full((n,), -1.0, device=row.device)
        for w, s in enumerate(starts):
            pos = torch.arange(s, s + size, device=row.device)  # (size,)
            centrality = torch.minimum(pos - s, s + size - 1 - pos).float()  # (size,)
            take = centrality > best[pos]  # (size,)
            result[1 + pos[take]] = hidden[w, 1 + (pos[take] - s)]
            best[pos[take]] = centrality[take]
        result[0] = hidden[:, 0].mean(0)
        return result

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        pieces = self._encode_pieces(batch["input_ids"], batch["piece_mask"])  # (batch, pieces, hidden)
        n_words = batch["word_mask"].size(1)
        index = batch["piece_word"]  # (batch, pieces)
        if self.pooling == "first":
            pos = torch.arange(index.size(1), device=index.device).expand_as(index)  # (batch, pieces)
            first = torch.full((index.size(0), n_words + 1), index.size(1) - 1, dtype=torch.long, device=index.device)  # (batch, words + 1)
            first = first.scatter_reduce(1, index, pos, reduce="amin")[:, :n_words]  # (batch, 1 + words)
            words = pieces.gather(1, first.unsqueeze(-1).expand(-1, -1, pieces.size(-1)))  # (batch, 1 + words, hidden)
        else:
            summed = pieces.new_zeros(index.size(0), n_words + 1, pieces.size(-1))  # (batch, words + 1, hidden)
            summed.scatter_add_(1, index.unsqueeze(-1).expand_as(pieces), pieces)
            counts = pieces.new_zeros(index.size(0), n_words + 1).scatter_add_(1, index, pieces.new_ones(index.shape))  # (batch, words+1)
            words = (summed / counts.clamp(min=1).unsqueeze(-1))[:, :n_words]  # (batch, 1 + words, hidden)
        words = self.dropout(words)
        words, tapped = words[..., : self.layer_width], words[..., self.layer_width :]  # (batch, 1 + words, hidden), (…, tap_dim)
        if self.upos_embed is not None:
            words = torch.cat([words, self.dropout(self.upos_embed(batch["upos"]))], dim=-1)  # (batch, 1 + words, out)
        return torch.cat([words, tapped], dim=-1) if self.taps else words  # (batch, 1 + words, out_dim + tap_dim)

    def tap(self, layers: Sequence[int]) -> None:
        """Give the outputs of transformer ``layers`` (1 = the lowest) after the word vectors, pooled as they are
        (:attr:`WordEncoder.taps`): what an output head with ``layer`` set reads beside the parser's mix."""
        taps = tuple(sorted(set(layers)))
        bad = [t for t in taps if not 1 <= t <= len(self._layers())]
        if bad:
            raise OptionError(f"layer = {bad[0]}: {self.model_name!r} has transformer layers 1 to {len(self._layers())}")
        self.taps = taps

    # ----------------------------------------------------------------------------------- adapter
    def pretrained_parameters(self) -> list[nn.Parameter]:
        """The transformer's weights less the adapter's (those are new weights: they train at the parser's rate and
        ship with the model)."""
        added = {id(p) for p in adapter_parameters(self.transformer)} if self.adapter else set()
        return [p for p in super().pretrained_parameters() if id(p) not in added]

    def merge_adapter(self, each: Callable[[nn.Module, torch.Tensor], None] | None = None) -> None:
        """Each adapted layer's weights become the base's plus the adapter's delta (``peft``'s
        ``merge_and_unload``; with ``each``, a layer at a time: :func:`~spandep.encoders.adapters.merge_layers`):
        the transformer is a plain one again, as fast as a fully fine-tuned one."""
        if self.adapter and not self.merged:
            self.transformer = self.transformer.merge_and_unload() if each is None else merge_layers(self.transformer, each)  # type: ignore[operator]
            self.merged = True

    # ----------------------------------------------------------------------------------- config
    def export_config(self) -> dict[str, Any]:
        if self.merged:
            raise ModelError("the encoder's adapter is merged into its base weights for inference; load the model with merge_adapter=False to save it")
        return {
            "type": self.name,
            "model": self.model_name,
            "pooling": self.pooling,
            "mix_layers": self.mix_layers,
            "dropout": self.dropout_p,
            "upos_vocab": self.upos_vocab,
            "upos_dim": self.upos_dim,
            "max_pieces": self.max_pieces,
            "freeze_embeddings": self.freeze_embeddings,
            "freeze_layers": self.freeze_layers,
            "adapter": self.adapter,
        }
