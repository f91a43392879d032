"""Training configuration: a TOML file with four tables, checked against known keys and defaults."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from spandep.errors import InputFormatError

DEFAULTS: dict[str, dict[str, Any]] = {
    "data": {"train": None, "dev": None, "format": "conllu", "max_train_sentences": 0},
    "encoder": {
        "type": "transformer",
        "model": "all-MiniLM-L6-v2",
        "pooling": "mean",
        "mix_layers": 4,
        "dropout": 0.1,
        "use_upos": False,
        "upos_dim": 100,
        "word_dim": 100,
        "char_dim": 50,
        "char_out": 100,
        "hidden": 400,
        "layers": 3,
        "min_freq": 2,
        "pretrained": True,
        "freeze_embeddings": True,
        "freeze_layers": 0,  # also freeze the lowest N transformer layers (they then need not ship with the model)
    },
    "model": {
        "type": "biaffine",
        "arc_mlp": 500,
        "rel_mlp": 100,
        "mlp_dropout": 0.33,
        "span_mlp": 500,
        "span_dropout": 0.33,
        "query_rate": 1.0,
        "max_queries": 0,
        "noisy_rate": 0.0,
        "linker": {"format": "late"},
        "k": 2,
        "lam": 1.0,
        "span_decoder": "dp",
        "retrieval": True,
        "word_scorer": False,  # true (default sizes) or a table of BiaffineScorer sizes: a word-level head
        "tagger": False,  # true: a UPOS tagging head trained jointly (tags taken from the training data)
    },
    "training": {
        "output": None,
        "epochs": 10,
        "batch_tokens": 2000,
        "lr": 1e-3,
        "encoder_lr": 5e-5,
        "betas": [0.9, 0.9],
        "weight_decay": 0.0,
        "warmup": 0.1,
        "clip": 5.0,
        "patience": 3,
        "seed": 1,
        "decoder": "mst",
        "threads": 0,
        "checkpoint_every": 200,
        "eval_batch_tokens": 4000,
        "device": "cpu",  # cpu, cuda, cuda:N or auto; the checkpoints and the saved model are the same either way
    },
}

MODEL_KEYS = {
    "biaffine": {"type", "arc_mlp", "rel_mlp", "mlp_dropout"},
    "span": {"type", "span_mlp", "span_dropout", "query_rate", "max_queries", "noisy_rate", "linker", "k", "lam", "span_decoder", "retrieval", "word_scorer", "tagger"},
}

ENCODER_KEYS = {
    "transformer": {"type", "model", "pooling", "mix_layers", "dropout", "use_upos", "upos_dim", "pretrained", "freeze_embeddings", "freeze_layers"},
    "bilstm": {"type", "word_dim", "char_dim", "char_out", "hidden", "layers", "dropout", "use_upos", "upos_dim", "min_freq"},
}


def _merged(base: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """`given` over `base`, table by table (inline tables such as the linker's merge too)."""
    out = dict(base)
    for key, value in given.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _read_toml(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """One config file as a dict, with its `base = "other.toml"` (relative to this file) read first and merged under it.

    A base lets a family of runs (an ablation grid) state only what differs; the merged config is what is saved next
    to the model, so a trained model never depends on the base file.
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        where = f" (the base of {chain[-1]})" if chain else ""
        raise InputFormatError(str(path), 0, f"config file not found{where}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputFormatError(str(path), getattr(exc, "lineno", 0) or 0, f"invalid TOML: {exc}") from exc
    base = raw.pop("base", None)
    if base is None:
        return raw
    if not isinstance(base, str):
        raise InputFormatError(str(path), 0, f"base must be a path to another config file, not {base!r}")
    chain = (*chain, path.resolve())  # the files being read, this one last
    base_path = (path.parent / base).resolve()
    if base_path in chain:
        raise InputFormatError(str(path), 0, f"base {base!r} forms a cycle: a config cannot be its own base, directly or through others")
    return _merged(_read_toml(base_path, chain), raw)


def load_config(path: str | Path, overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Read a TOML config (and its `base`), fill defaults, reject unknown keys.

    Relative data and output paths are taken from the working directory; a `base` path from the config's own folder.
    """
    path = Path(path)
    raw = _read_toml(path)
    for section, values in (overrides or {}).items():
        raw.setdefault(section, {}).update({k: v for k, v in values.items() if v is not None})
    cfg: dict[str, dict[str, Any]] = {}
    raw_sections: dict[str, dict[str, Any]] = {}
    for section, defaults in DEFAULTS.items():
        given = raw_sections[section] = raw.pop(section, {})
        unknown = set(given) - set(defaults)
        if unknown:
            raise InputFormatError(str(path), 0, f"unknown key(s) in [{section}]: {', '.join(sorted(unknown))}; known: {', '.join(defaults)}")
        cfg[section] = {**defaults, **given}
    if raw:
        raise InputFormatError(str(path), 0, f"unknown table(s): {', '.join(raw)}; known: {', '.join(DEFAULTS)}")
    for section, key in (("data", "train"), ("data", "dev"), ("training", "output")):
        if not cfg[section][key]:
            raise InputFormatError(str(path), 0, f"[{section}] {key} is required")
        cfg[section][key] = str(Path(cfg[section][key]).expanduser().resolve())
    for section, kinds in (("encoder", ENCODER_KEYS), ("model", MODEL_KEYS)):
        kind = cfg[section]["type"]
        if kind not in kinds:
            raise InputFormatError(str(path), 0, f"[{section}] type must be one of {sorted(kinds)}, not {kind!r}")
        stray = set(raw_sections[section]) - kinds[kind]
        if stray:
            raise InputFormatError(str(path), 0, f"[{section}] key(s) {', '.join(sorted(stray))} do not apply to type {kind!r}")
    if cfg["model"]["span_decoder"] not in ("dp", "mst"):
        raise InputFormatError(str(path), 0, "[model] span_decoder must be 'dp' or 'mst'")
    if cfg["training"]["decoder"] not in ("mst", "eisner"):
        raise InputFormatError(str(path), 0, "[training] decoder must be 'mst' or 'eisner'")
    return cfg
