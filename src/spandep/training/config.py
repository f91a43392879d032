"""Training configuration: a TOML file of tables, checked against known keys and defaults."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from spandep.checks import Range, device_problem
from spandep.data.conllu import FORMATS
from spandep.encoders import ENCODERS
from spandep.errors import InputFormatError, OptionError
from spandep.options import InferenceOptions
from spandep.models import PARSERS
from spandep.models.heads import HEADS
from spandep.registry import UnknownNameError, merged
from spandep.training.treebanks import train_treebanks_problem, treebanks_problem

DEFAULTS: dict[str, dict[str, Any]] = {
    "data": {
        "train": None, "dev": None, "format": "conllu", "max_train_sentences": 0, "max_dev_sentences": 0, "tokenizer": None,
        "ud_version": 2,  # 1: a UD v1 treebank, read with v2 relations (data/udv1.py)
        "treebanks": None, "sampling_exponent": 1.0, "treebank_cap": 0,  # several treebanks (training/treebanks.py); dropped for one
        "train_treebanks": None,  # several treebanks: the names an epoch trains on and dev chooses by (None: all of them)
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
        "threads": 0,
        "checkpoint_every": 200,
        "ema": 0.0,  # decay of a moving average of the weights, read at dev and saved (training/averaging.py); 0: none
        "eval_batch_tokens": 4000,
        "device": "cpu",  # cpu, cuda, cuda:N or auto; the checkpoints and the saved model are the same either way
        "select": "las",  # the dev figure the best epoch is chosen on: "las" or "las+mlas" (SELECTIONS)
        "init": None,  # a trained model folder whose weights the run starts from (training/init.py); None: fresh weights
    },
}
_RATE = Range(0, integer=False)  # a finite number ≥ 0
_ABOVE_ZERO = Range(0, integer=False, open_low=True)
NUMBERS: dict[str, dict[str, Range]] = {  # what each number of [data] and [training] allows
    "data": {"max_train_sentences": Range(0), "max_dev_sentences": Range(0), "sampling_exponent": _RATE, "treebank_cap": Range(0), "ud_version": Range(1, 2)},
    "training": {
        "epochs": Range(1), "batch_tokens": Range(1), "eval_batch_tokens": Range(1), "lr": _ABOVE_ZERO,
        "encoder_lr": _RATE, "weight_decay": _RATE, "warmup": Range(0, 1, integer=False), "clip": _ABOVE_ZERO,
        "patience": Range(1), "seed": Range(), "threads": Range(0), "checkpoint_every": Range(1),
        "ema": Range(0, 1, integer=False, open_high=True),
    },
}
SELECTIONS = ("las", "las+mlas")  # [training] select: dev LAS (punctuation excluded), or that plus dev MLAS
TYPED = {"encoder": ("transformer", ENCODERS), "model": ("biaffine", PARSERS)}  # table: (default type, registry)
TABLES = (*DEFAULTS, *TYPED, "heads", "inference")
MULTI_ONLY = {"data": ("treebanks", "sampling_exponent", "treebank_cap", "train_treebanks"), "model": ("treebank_dim",)}  # keys of several treebanks
TREEBANK_DIM = 16  # [model] treebank_dim when not given


def _read_toml(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """One config file as a dict, with its `base = "other.toml"` (relative to this file) read first and merged under it;
    `base = ["a.toml", "b.toml"]` merges them in that order, each over the one before, then this file over them.

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
    bases = base if isinstance(base, list) and base else [base]
    if not all(isinstance(b, str) for b in bases):
        raise InputFormatError(str(path), 0, f"base must be a path to another config file (or a list of them), not {base!r}")
    chain = (*chain, path.resolve())  # the files being read, this one last
    under: dict[str, Any] = {}
    for name in bases:
        base_path = (path.parent / name).resolve()
        if base_path in chain:
            raise InputFormatError(str(path), 0, f"base {name!r} forms a cycle: a config cannot be its own base, directly or through others")
        under = merged(under, _read_toml(base_path, chain))
    return merged(under, raw)


def _value_problems(cfg: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str, str | None]]:
    """``(table, key, problem or None)`` for the values of ``[data]`` and ``[training]``: each must be of the type
    (TOML says it) and in the range it takes."""
    for section, ranges in NUMBERS.items():
        for key, allowed in ranges.items():
            yield section, key, allowed.problem(f"[{section}] {key}", cfg[section][key])
    for section, key in (("data", "train"), ("data", "dev"), ("data", "tokenizer"), ("training", "output"), ("training", "init")):
        if not isinstance(cfg[section][key], (str, type(None))):
            yield section, key, f"[{section}] {key} must be a path in quotes, not {cfg[section][key]!r}"
    if cfg["data"]["treebanks"] is not None:
        yield "data", "treebanks", treebanks_problem(cfg["data"]["treebanks"])
    if cfg["data"]["format"] not in FORMATS:
        yield "data", "format", f"[data] format must be {' or '.join(FORMATS)}, not {cfg['data']['format']!r}"
    betas, beta = cfg["training"]["betas"], Range(0, 1, integer=False, open_high=True)
    if not isinstance(betas, list) or len(betas) != 2 or any(beta.problem("", b) for b in betas):
        yield "training", "betas", f"[training] betas must be a list of two numbers in [0, 1), not {betas!r}"
    yield "training", "device", device_problem("[training] device", cfg["training"]["device"])
    if cfg["training"]["select"] not in SELECTIONS:
        yield "training", "select", f"[training] select must be {' or '.join(map(repr, SELECTIONS))}, not {cfg['training']['select']!r}"


def _value_error(path: Path, section: str, key: str, problem: str) -> InputFormatError:
    """The error of a bad value, at the line of ``key = ...`` in ``[section]`` of ``path`` (0 where the value is not
    written there: a command-line override or a base config's)."""
    table, line = None, 0
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = text.strip()
        if text.startswith("["):
            table = text.strip("[] ")
        elif table == section and re.match(rf"{re.escape(key)}\s*=", text):
            line = number
    return InputFormatError(str(path), line, f"{problem}; fix it in the config")


def _typed_table(path: Path, section: str, given: dict[str, Any]) -> dict[str, Any]:
    """``[encoder]`` or ``[model]``: its ``type`` (a registry name) and that type's settings over its defaults."""
    default_type, registry = TYPED[section]
    try:
        kind, settings = registry.configured(given, default_type)
    except ValueError as exc:
        raise InputFormatError(str(path), 0, f"[{section}] {exc}") from None
    defaults = registry.get(kind).config_defaults
    for key, default in defaults.items():  # numbers and names of the type the defaults have (TOML says the type)
        value, name = settings[key], f"[{section}] {key}"
        if isinstance(default, str) and not isinstance(value, str):
            problem: str | None = f"{name} must be a string in quotes, not {value!r}"
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            problem = Range(integer=isinstance(default, int)).problem(name, value)
        else:
            continue
        if problem:
            raise _value_error(path, section, key, problem)
    problem = registry.get(kind).settings_problem(settings)
    if problem:
        raise InputFormatError(str(path), 0, f"[{section}] {problem}")
    return {"type": kind, **settings}


def _heads(path: Path, given: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``[heads.NAME]`` tables: each a registered output head, its settings over its defaults. ``NAME = false`` under
    ``[heads]`` leaves out a head that a base config trains (a treebank without that column)."""
    out = {}
    for name, settings in given.items():
        if settings is False:
            continue
        try:
            defaults = HEADS.get(name).config_defaults
        except UnknownNameError as exc:
            raise InputFormatError(str(path), 0, f"[heads.{name}]: {exc}") from None
        if not isinstance(settings, dict) or set(settings) - set(defaults):
            raise InputFormatError(str(path), 0, f"[heads.{name}] takes {', '.join(defaults) or 'no keys'}")
        out[name] = {**defaults, **settings}
    made = {HEADS.get(name).column for name in out}
    for name, settings in out.items():
        missing = sorted(set(HEADS.get(name).columns_read(settings)) - made)
        if missing:
            raise InputFormatError(
                str(path), 0, f"[heads.{name}] is conditioned on the {missing[0].upper()} column, which no head predicts: "
                f"add [heads.{missing[0]}] or leave out the [heads.{name}] setting that reads it"
            )
    return out


def check_resources(cfg: dict[str, dict[str, Any]]) -> None:
    """An :class:`OptionError` (exit code 2) for what this machine lacks for the ``[encoder]`` or ``[model]`` of a
    read config (an encoder folder, say): called before any data is read, never asking a model hub."""
    for section, (_, registry) in TYPED.items():
        settings = {k: v for k, v in cfg[section].items() if k != "type"}
        problem = registry.get(cfg[section]["type"]).missing(settings)
        if problem:
            raise OptionError(f"[{section}] {problem}; fix the config or get the files onto this machine")


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
    for section, key, problem in _value_problems(cfg):
        if problem:
            raise _value_error(path, section, key, problem)
    treebank_dim = raw.get("model", {}).get("treebank_dim", TREEBANK_DIM)
    for section in TYPED:
        cfg[section] = _typed_table(path, section, {k: v for k, v in raw.get(section, {}).items() if k not in MULTI_ONLY.get(section, ())})
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
    if cfg["data"]["treebanks"] is None:
        _one_treebank(path, cfg, raw)
    else:
        _several_treebanks(path, cfg, treebank_dim)
    if not cfg["training"]["output"]:
        raise InputFormatError(str(path), 0, "[training] output is required")
    cfg["training"]["output"] = str(Path(cfg["training"]["output"]).expanduser().resolve())
    return cfg


def _paths(path: Path, table: dict[str, Any], where: str) -> None:
    """``table``'s ``train`` and ``dev`` (required) and ``tokenizer`` (a tokenizer folder, optional) made absolute."""
    for key in ("train", "dev"):
        if not table.get(key):
            raise InputFormatError(str(path), 0, f"{where} {key} is required")
        table[key] = str(Path(table[key]).expanduser().resolve())
    if table.get("tokenizer"):
        tokenizer = Path(table["tokenizer"]).expanduser().resolve()
        if not (tokenizer / "config.json").is_file():
            raise InputFormatError(
                str(path), 0, f"{where} tokenizer {tokenizer} is not a tokenizer folder (spandep train-tokenizer writes RUN/tokenizer)"
            )
        table["tokenizer"] = str(tokenizer)


def _one_treebank(path: Path, cfg: dict[str, dict[str, Any]], raw: dict[str, Any]) -> None:
    """``[data] train`` and ``dev``: the keys of several treebanks are refused and left out of the saved config."""
    for section, keys in MULTI_ONLY.items():
        given = sorted(set(raw.get(section, {})) & set(keys))
        if given:
            raise InputFormatError(str(path), 0, f"[{section}] {', '.join(given)} apply to several treebanks: give [data] treebanks or leave them out")
        for key in keys:
            cfg[section].pop(key, None)
    _paths(path, cfg["data"], "[data]")


def _several_treebanks(path: Path, cfg: dict[str, dict[str, Any]], treebank_dim: int) -> None:
    """``[data] treebanks``: each one's paths, no ``[data] train``, ``dev``, ``tokenizer`` or ``ud_version``, ``[model]
    treebank_dim``."""
    given = [key for key in ("train", "dev", "tokenizer") if cfg["data"][key]] + (["ud_version"] if cfg["data"]["ud_version"] != 2 else [])
    if given:
        raise InputFormatError(str(path), 0, f"[data] {', '.join(given)}: with [data] treebanks, give them in each treebank's table")
    problem = Range(0).problem("[model] treebank_dim", treebank_dim)
    if problem:
        raise _value_error(path, "model", "treebank_dim", problem)
    cfg["data"]["treebanks"] = [dict(t) for t in cfg["data"]["treebanks"]]
    for table in cfg["data"]["treebanks"]:
        _paths(path, table, f"[data] treebanks: {table['name']}'s")
        table.setdefault("ud_version", 2)
    cfg["model"]["treebank_dim"] = treebank_dim
    problem = train_treebanks_problem(cfg["data"]["train_treebanks"], [t["name"] for t in cfg["data"]["treebanks"]])
    if problem:
        raise _value_error(path, "data", "train_treebanks", problem)
