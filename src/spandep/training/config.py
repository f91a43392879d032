"""Training configuration: a TOML file of tables, checked against known keys and defaults."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from spandep.encoders import ENCODERS
from spandep.errors import InputFormatError
from spandep.inference import InferenceOptions
from spandep.models import PARSERS
from spandep.models.heads import HEADS
from spandep.registry import UnknownNameError

DEFAULTS: dict[str, dict[str, Any]] = {
    "data": {"train": None, "dev": None, "format": "conllu", "max_train_sentences": 0, "tokenizer": None},
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
        "threads": 0,
        "checkpoint_every": 200,
        "eval_batch_tokens": 4000,
        "device": "cpu",  # cpu, cuda, cuda:N or auto; the checkpoints and the saved model are the same either way
    },
}
TYPED = {"encoder": ("transformer", ENCODERS), "model": ("biaffine", PARSERS)}  # table: (default type, registry)
TABLES = (*DEFAULTS, *TYPED, "heads", "inference")


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


def _typed_table(path: Path, section: str, given: dict[str, Any]) -> dict[str, Any]:
    """``[encoder]`` or ``[model]``: its ``type`` (a registry name) and that type's settings over its defaults."""
    default_type, registry = TYPED[section]
    kind = given.get("type", default_type)
    try:
        defaults = registry.get(kind).config_defaults
    except UnknownNameError as exc:
        raise InputFormatError(str(path), 0, f"[{section}] type: {exc}") from None
    unknown = sorted(set(given) - set(defaults) - {"type"})
    if unknown:
        raise InputFormatError(
            str(path), 0, f"[{section}] key(s) {', '.join(unknown)} do not apply to type {kind!r}; known: {', '.join(defaults)}"
        )
    return {"type": kind, **_merged(defaults, {k: v for k, v in given.items() if k != "type"})}


def _heads(path: Path, given: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``[heads.NAME]`` tables: each a registered output head, its settings over its defaults."""
    out = {}
    for name, settings in given.items():
        try:
            defaults = HEADS.get(name).config_defaults
        except UnknownNameError as exc:
            raise InputFormatError(str(path), 0, f"[heads.{name}]: {exc}") from None
        if not isinstance(settings, dict) or set(settings) - set(defaults):
            raise InputFormatError(str(path), 0, f"[heads.{name}] takes {', '.join(defaults) or 'no keys'}")
        out[name] = {**defaults, **settings}
    return out


def load_config(path: str | Path, overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Read a TOML config (and its `base`), fill defaults, reject unknown keys.

    Tables: ``[data]``, ``[training]``, ``[encoder]`` and ``[model]`` (each with a ``type`` from the encoder and
    parser registries, whose classes declare their settings and defaults), ``[heads.NAME]`` (output heads trained
    with the parser) and ``[inference]`` (the settings the model is saved with; ``spandep tune`` chooses them on dev).
    Relative data and output paths are taken from the working directory; a `base` path from the config's own folder.
    """
    path = Path(path)
    raw = _read_toml(path)
    for section, values in (overrides or {}).items():
        raw.setdefault(section, {}).update({k: v for k, v in values.items() if v is not None})
    unknown_tables = sorted(set(raw) - set(TABLES))
    if unknown_tables:
        raise InputFormatError(str(path), 0, f"unknown table(s): {', '.join(unknown_tables)}; known: {', '.join(TABLES)}")
    cfg: dict[str, dict[str, Any]] = {}
    for section, defaults in DEFAULTS.items():
        given = raw.get(section, {})
        unknown = set(given) - set(defaults)
        if unknown:
            raise InputFormatError(str(path), 0, f"unknown key(s) in [{section}]: {', '.join(sorted(unknown))}; known: {', '.join(defaults)}")
        cfg[section] = {**defaults, **given}
    for section in TYPED:
        cfg[section] = _typed_table(path, section, raw.get(section, {}))
    cfg["heads"] = _heads(path, raw.get("heads", {}))
    inference = dict(raw.get("inference", {}))
    try:
        InferenceOptions.from_dict(inference)
    except ValueError as exc:
        raise InputFormatError(str(path), 0, f"[inference] {exc}") from None
    known = PARSERS.get(cfg["model"]["type"]).inference_defaults
    if set(inference) - set(known):
        raise InputFormatError(
            str(path), 0, f"[inference] {', '.join(sorted(set(inference) - set(known)))} do not apply to model type "
            f"{cfg['model']['type']!r}; it takes {', '.join(known)}"
        )
    cfg["inference"] = inference
    for section, key in (("data", "train"), ("data", "dev"), ("training", "output")):
        if not cfg[section][key]:
            raise InputFormatError(str(path), 0, f"[{section}] {key} is required")
        cfg[section][key] = str(Path(cfg[section][key]).expanduser().resolve())
    if cfg["data"]["tokenizer"]:
        tokenizer = Path(cfg["data"]["tokenizer"]).expanduser().resolve()
        if not (tokenizer / "config.json").is_file():
            raise InputFormatError(
                str(path), 0, f"[data] tokenizer {tokenizer} is not a tokenizer folder (spandep train-tokenizer writes RUN/tokenizer)"
            )
        cfg["data"]["tokenizer"] = str(tokenizer)
    return cfg
