"""Opt-in encoder features of the tokenizer's network (issue 47): every character gets the hidden state of the word
piece that covers it, from the first ``layers`` layers of a named base encoder, frozen, with the base's own weights
(a segmenter that sees context, where characters and a lexicon are not enough: Chinese).

- each paragraph is cut into word pieces by the base's own tokenizer (no special tokens; each piece with the
  characters it covers), and the pieces are read in windows of at most :data:`SPAN` pieces (fewer where the encoder
  has fewer positions) between the base's ``[CLS]`` and ``[SEP]``: 7/9 of them the pieces whose vectors are kept,
  with up to 1/9 of the paragraph's pieces on either side as context (200 + 2 × 28);
- a character gets its covering piece's vector (the last piece's where two cover it, as XLM-R's lone ``▁`` and the
  piece after it do) and, in one more column, 1.0 where a piece starts (a piece boundary is itself a cue); a
  character no piece covers (whitespace) gets zeros.

So :meth:`PieceVectors.fill` gives ``width + 1`` float32 columns per character; the network projects them and adds
them to the character's embedding (:class:`~.model.CharTagger`). The base's weights are not copied into a saved
tokenizer: its ``config.json`` names the encoder and the layers (``NetConfig.encoder``, ``encoder_layers``), and
whoever loads it says how a name becomes a folder (``encoder_folder``: spandep's bases are resolved by
``spandep.encoders.bases.resolve_model_path``, a later layer; :func:`local_folder` here takes a folder path only).
Training computes the vectors of its fixed texts once into ``.npy`` files read through a memory map
(:func:`cached_vectors`), and hands them to the network as a :class:`PieceVectors`' known texts.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import weakref
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import numpy as np
import torch

from spandep.data.output import cached_array
from spandep.errors import ModelError
from spandep.hardware import native_bfloat16
from spandep.malloc import release

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no model hub is ever asked (as spandep.encoders does)
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__all__ = ["PRECISIONS", "SPAN", "PieceVectors", "cached_vectors", "local_folder", "piece_tokenizer"]

SPAN = 256  # pieces read at most per window, context included (and [CLS], [SEP])
BATCH = 16  # windows per forward pass
PRECISIONS = ("float32", "bfloat16")  # of the encoder layers at inference (PieceVectors)


def local_folder(name: str) -> str:
    """``name`` as the folder of a Hugging Face encoder (a :class:`~spandep.errors.ModelError` when it is none)."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    raise ModelError(f"the tokenizer reads the encoder {name!r}, which is no local folder; load it through spandep "
                     "(spandep parse, spandep.load) or give load_tokenizer encoder_folder=resolve_model_path")


_TOKENIZERS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def piece_tokenizer(folder: str) -> Any:
    """The ``transformers`` tokenizer of the encoder in ``folder``, one object per folder in a process for as long as
    anything holds it: a parser's encoder and a tokenizer's encoder features over the same base (the zh model), or
    the models of one base that a service holds, share it. multilingual-e5-small's (250,002 pieces) holds about
    0.29 GB. Every caller asks it the same way (no truncation, no padding), so sharing changes no output."""
    key = str(Path(folder).expanduser().resolve())
    found = _TOKENIZERS.get(key)
    if found is None:
        from transformers import AutoTokenizer

        found = AutoTokenizer.from_pretrained(key, local_files_only=True)
        _TOKENIZERS[key] = found
    return found


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """transformers' warnings and progress bars off for the block (its load report lists the layers left out)."""
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


class PieceVectors:
    """The first ``layers`` layers of the encoder in ``folder`` (eval mode, no gradients), read over a text's pieces
    (module docstring); ``known`` maps a text to vectors computed before (training's cached files). ``precision``
    ``"bfloat16"``: the layers run under ``torch.autocast`` in bfloat16 where the processor computes it natively
    (:func:`spandep.hardware.native_bfloat16`; float32 elsewhere), the vectors given back in float32."""

    def __init__(self, name: str, folder: str, layers: int, precision: str = "float32") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"encoder precision must be {' or '.join(map(repr, PRECISIONS))}, not {precision!r}")
        from transformers import AutoConfig, AutoModel

        with _quiet():
            config = AutoConfig.from_pretrained(folder, local_files_only=True)
            if not 1 <= layers <= config.num_hidden_layers:
                raise ValueError(f"encoder layers must be in [1, {config.num_hidden_layers}] for {name!r}, not {layers}")
            self.tokenizer = piece_tokenizer(folder)
            self.model = AutoModel.from_pretrained(folder, local_files_only=True, num_hidden_layers=layers).eval()
        for tensor in [*self.model.parameters(), *self.model.buffers()]:
            release(tensor)  # read from the file: its pages come back where used (a few rows of the embedding table)
        self.name, self.layers, self.width = name, layers, int(config.hidden_size)
        span = min(SPAN, int(config.max_position_embeddings) - 2)
        self.context = span // 9  # (module docstring)
        self.window = span - 2 * self.context
        self.known: dict[str, np.ndarray] = {}
        self.precision = precision
        self._bfloat16 = precision == "bfloat16" and native_bfloat16(torch.device("cpu"))

    @property
    def columns(self) -> int:
        """How many columns :meth:`fill` writes: the hidden state and the piece-start flag."""
        return self.width + 1

    def key(self, text: str) -> str:
        """A name for the vectors of ``text`` under this encoder and depth (for a cache file)."""
        return hashlib.sha256(f"{self.name}\n{self.layers}\n{text}".encode("utf-8")).hexdigest()[:20]

    def vectors(self, text: str, spans: list[tuple[int, int]]) -> np.ndarray:
        """``(len(text), columns)`` float32: the vectors of the characters of ``spans`` of ``text`` (each span, a
        paragraph, read on its own), zeros elsewhere; a known text's vectors as they were computed."""
        if text in self.known:
            return self.known[text]
        out = np.zeros((len(text), self.columns), dtype=np.float32)  # (n_chars, width + 1)
        self.fill(text, spans, out)
        return out

    def fill(self, text: str, spans: list[tuple[int, int]], out: np.ndarray) -> None:
        """Write the vectors of the characters of ``spans`` into ``out`` (len(text), columns), zeros before."""
        windows: list[tuple[list[int], list[tuple[int, int]], int, int]] = []  # ids, offsets, core from, core to
        with _quiet():
            for a, b in spans:
                enc = self.tokenizer(text[a:b], add_special_tokens=False, return_offsets_mapping=True)
                ids, offsets = enc["input_ids"], [(a + s, a + e) for s, e in enc["offset_mapping"]]
                for start in range(0, len(ids), self.window):
                    lo, hi = max(0, start - self.context), min(len(ids), start + self.window + self.context)
                    windows.append((ids[lo:hi], offsets[lo:hi], start - lo, min(len(ids), start + self.window) - lo))
        for first in range(0, len(windows), BATCH):
            self._read(windows[first : first + BATCH], out)

    def _read(self, batch: list[tuple[list[int], list[tuple[int, int]], int, int]], out: np.ndarray) -> None:
        """One forward pass over ``batch`` windows, their core pieces' vectors written into ``out``."""
        tok = self.tokenizer
        width = max(len(ids) for ids, *_ in batch) + 2
        input_ids = torch.full((len(batch), width), tok.pad_token_id, dtype=torch.long)  # (batch, 2 + pieces)
        mask = torch.zeros((len(batch), width), dtype=torch.long)  # (batch, 2 + pieces)
        for row, (ids, *_) in enumerate(batch):
            input_ids[row, : len(ids) + 2] = torch.tensor([tok.cls_token_id, *ids, tok.sep_token_id])  # (2 + n,)
            mask[row, : len(ids) + 2] = 1
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self._bfloat16):
            hidden = self.model(input_ids=input_ids, attention_mask=mask).last_hidden_state.float().numpy()  # (batch, 2 + pieces, width)
        for row, (_, offsets, core_from, core_to) in enumerate(batch):
            for k in range(core_from, core_to):
                s, e = offsets[k]
                if e > s:
                    out[s:e, : self.width] = hidden[row, 1 + k]  # (e - s, width) ← (width,)
                    out[s, self.width] = 1.0


def cached_vectors(pieces: PieceVectors, text: str, spans: list[tuple[int, int]], folder: Path, label: str) -> np.ndarray:
    """The vectors of ``text`` (:meth:`PieceVectors.vectors`), computed once into ``folder/LABEL-KEY.npy`` (written
    atomically; the key names the text, encoder and depth, so a resumed run reuses the file and other settings make
    another) and read back through a memory map; ``pieces`` knows them from then on."""
    path = folder / f"{label}-{pieces.key(text + repr(spans))}.npy"
    vectors = cached_array(path, (len(text), pieces.columns), lambda out: pieces.fill(text, spans, out))  # (n_chars, width + 1)
    pieces.known[text] = vectors
    return vectors
