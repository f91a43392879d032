"""Saving and loading parser models: a folder with ``config.json``, ``model.safetensors`` and encoder assets.

No pickles: weights are safetensors, everything else is JSON (the output heads' large tables xz-compressed, format
3: :func:`write_model_config`). ``format_version`` guards against loading a folder written by an incompatible
release; folders of format 1 are read through :func:`upgrade_v1`.
"""

from __future__ import annotations

import json
import lzma
import os
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from spandep.version import __version__
from spandep.checks import device_problem
from spandep.data.output import relative_paths, sibling_folder, usual_permissions
from spandep.errors import ModelError, OptionError
from spandep.options import InferenceOptions
from spandep.models import ENCODER_ASSETS, PARSERS, Parser, build_model
from spandep.models.heads import HEADS
from spandep.models.confidence import Calibration
from spandep.storage.catalogue import ModelChoice, default_model, model_choice
from spandep.tokenization.text import TOKENIZER_FOLDER, tokenizer_folder
from spandep.tokenization.text import treebank_tokenizers as own_tokenizers
from spandep.tokenization.trained import WEIGHTS_FILE as TOKENIZER_WEIGHTS, packed
from spandep.storage.kernels import bound_kernel_cache
from spandep.quantised import ALL_MIN_ELEMENTS, dequantize, halved, quantize
from spandep.storage.int8 import Int8Scope, dynamic_int8
from spandep.registry import UnknownNameError

FORMAT_VERSION = 3  # 3: format 2 with the output heads' large tables in HEAD_TABLES (written only where a head has one)
CURRENT = (2, FORMAT_VERSION)  # the formats whose folders are written again as they are (2: every table in config.json)
WEIGHTS_FORMAT = 2  # model.safetensors as formats 2 and 3 store it
HEAD_TABLES = "heads.json.xz"  # each head's settings it stores apart (OutputHead.stored_apart), xz-compressed JSON
WITH_TABLES = ("tags",)  # settings of every head moved into HEAD_TABLES too once a folder has them: a pool's class lists
CHOICE_FILE = "inference_choice.json"  # beside a model whose settings were chosen on dev: what was chosen, and how


def resolve_model_dir(model: str | Path | None) -> Path:
    """The model folder to use (:func:`resolve_model`'s)."""
    return resolve_model(model).folder


def resolve_model(model: str | Path | None) -> ModelChoice:
    """The model to use: a shipped model's name (``en``, ``spandep models``; its folder and, in a folder of several
    treebanks, the name's treebank) or a folder; none given: ``$SPANDEP_MODEL`` (either), else the default shipped
    model. ``ModelError`` for a bare word that is neither."""
    choice = model or os.environ.get("SPANDEP_MODEL")
    if choice:
        return model_choice(choice)
    default = default_model()
    if default.installed():
        return default.choice()
    raise ModelError("no model given and no default model installed: pass --model DIR (a folder written by `spandep train`)")


def upgrade_v1(config: dict[str, Any], state: dict[str, torch.Tensor]) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """A format-1 folder's config and weights in format 2 (each parser type renames its own parts,
    ``Parser.upgrade_v1``); a compact model's lists of weight names follow the renaming."""
    parser = PARSERS.get(config["model"]["model_type"])
    model, new_state = parser.upgrade_v1(config["model"], state, config.get("training", {}))
    upgraded = {**config, "format_version": FORMAT_VERSION, "model": model}
    if config.get("compact"):
        compact = dict(config["compact"])
        for key in ("from_base", "int8"):
            if key in compact:
                _, names = parser.upgrade_v1(config["model"], dict.fromkeys(compact[key], torch.empty(0)), config.get("training", {}))
                compact[key] = list(names)
        upgraded["compact"] = compact
    return upgraded, new_state


def frozen_base_keys(model: Parser) -> list[str]:
    """State-dict keys of frozen pretrained weights: identical to the base packages', so they need not ship."""
    pretrained = {id(p) for p in model.pretrained_parameters()}
    return [name for name, p in model.named_parameters() if not p.requires_grad and id(p) in pretrained]


def save_model(
    model: Parser,
    directory: Path,
    training: dict[str, Any] | None = None,
    compact: bool = False,
    int8: Int8Scope | None = None,
    tokenizer: Path | None = None,
    treebank_tokenizers: dict[str, Path] | None = None,
) -> None:
    """Write the model folder atomically: built in a temporary sibling, then swapped into place.

    ``tokenizer``: a trained tokenizer folder copied in as ``tokenizer/`` (raw text); without it, the folder's own
    ``tokenizer/`` is kept when the folder is written again. ``treebank_tokenizers``: a model of several treebanks'
    tokenizers by treebank, copied in as ``tokenizers/<treebank>/``; without them, the folder's own are kept.

    ``compact`` stores floating-point weights in float16 and leaves out frozen pretrained weights, which are
    taken from the encoder's installed base package at load time (a small shippable model); ``int8`` (with
    ``compact``) also stores weight matrices as int8 with per-row scales (``spandep.quantised``): ``"encoder"`` the
    pretrained modules' linear weights, ``"all"`` every floating-point weight of two or more dimensions, the
    tokenizers' too.
    """
    directory = Path(directory)
    tmp = sibling_folder(directory, "choose a writable folder for the model")
    try:
        config = {
            "format_version": FORMAT_VERSION,
            "spandep_version": __version__,
            "model": model.export_config(),
            "encoder": model.encoder.export_config(),
            "training": relative_paths(training or {}),
        }
        state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        if compact:
            omitted = frozen_base_keys(model)
            state = halved({k: v for k, v in state.items() if k not in omitted})
            config["compact"] = {"dtype": "float16", "from_base": omitted}
            if int8 is not None:
                config["compact"]["int8_scope"] = int8  # a tokenizer added later is stored alike (int8 rows under "all")
            if int8 == "all":
                state, config["compact"]["int8"] = quantize(state, set(state), ALL_MIN_ELEMENTS)
            elif int8 == "encoder":
                pretrained = {id(p) for p in model.pretrained_parameters()}
                linear = {
                    f"{name}.weight" for name, m in model.named_modules()
                    if isinstance(m, torch.nn.Linear) and id(m.weight) in pretrained
                }
                state, config["compact"]["int8"] = quantize(state, linear)
        save_file(state, str(tmp / "model.safetensors"), metadata={"format_version": str(WEIGHTS_FORMAT)})
        if not compact:  # a compact model takes its tokenizers from the base packages
            save_assets = getattr(model.encoder, "save_assets", None)
            if save_assets is not None:
                save_assets(tmp / ENCODER_ASSETS)
            model_assets = getattr(model, "save_assets", None)
            if model_assets is not None:
                model_assets(tmp)
        tokenizer = tokenizer or (directory / TOKENIZER_FOLDER if (directory / TOKENIZER_FOLDER).is_dir() else None)
        if tokenizer is not None:
            copy_tokenizer(tokenizer, tmp / TOKENIZER_FOLDER, compact, int8 == "all")
        for name, folder in (treebank_tokenizers or own_tokenizers(directory)).items():
            copy_tokenizer(folder, tokenizer_folder(tmp, name), compact, int8 == "all")
        write_model_config(tmp, config)
        usual_permissions(tmp)
        old = directory.with_name(directory.name + ".old")
        if directory.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.replace(directory, old)
        os.replace(tmp, directory)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def copy_tokenizer(source: Path, target: Path, compact: bool, int8: bool = False) -> None:
    """A trained tokenizer folder copied into a model folder; into a compact one with its floating-point weights in
    float16, half the bytes (a multilingual model ships eighty of them): 9 of 10 tokenizers measured wrote their dev
    split as in float32, zh_gsd_v1 Words F1 95.75 → 95.76 (``benchmarks/scripts/tokenizer_float16.py``). ``int8``
    (a compact model's ``--int8-all``): its matrices of ``ALL_MIN_ELEMENTS`` values or more in int8 rows, a quarter
    of the float32 bytes (the same script's ``--int8``: docs/tokenizer.md); its JSON files :func:`packed`."""
    shutil.copytree(source, target)
    weights = target / TOKENIZER_WEIGHTS
    if compact and weights.is_file():
        state = load_file(str(weights))
        if int8:
            state = quantize(state, set(state), ALL_MIN_ELEMENTS)[0]  # from the weights as trained
        save_file(halved(state), str(weights))
        packed(target)


READABLE_JSON = 200_000  # characters: a longer JSON file (a lemma lexicon, a pool model's class lists) is written without indentation


def _write_json(path: Path, content: dict[str, Any]) -> None:
    """``content`` as JSON at ``path``, atomically (a temporary sibling swapped into place): indented to be read,
    unless that makes it longer than ``READABLE_JSON`` characters (the multilingual model's config.json: 4.35 MB
    indented, 2.63 MB not, its per-treebank class ids one number a line; ru_taiga's, its lemma lexicon inline, 1.28
    and 0.92 MB)."""
    text = json.dumps(content, indent=2, ensure_ascii=False)
    if len(text) > READABLE_JSON:
        text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)


def choice_file(treebank: str | None = None) -> str:
    """The file beside a model that says how its settings were chosen: ``CHOICE_FILE``, or
    ``inference_choice-<treebank>.json`` for one treebank of a model of several."""
    return CHOICE_FILE if treebank is None else f"{Path(CHOICE_FILE).stem}-{treebank}.json"


def save_inference(directory: str | Path, settings: InferenceOptions, choice: dict[str, Any], treebank: str | None = None) -> None:
    """Make ``settings`` the saved inference settings of the model folder (``config.json``'s ``model.inference``, or
    for ``treebank``, one of a model of several, ``model.treebanks.inference[treebank]``), with ``choice`` (how they
    were chosen) beside it (``choice_file``); the weights are not touched."""
    if treebank is None:
        _set_model_entry(directory, "inference", settings.given())
    else:
        table = dict(read_model_config(directory)["model"].get("treebanks") or {})
        if treebank not in table.get("names", ()):
            raise ModelError(f"{directory}: treebank {treebank!r} is not one of this model's: {', '.join(table.get('names', ())) or 'it has one'}")
        table["inference"] = {**table.get("inference", {}), treebank: settings.given()}
        _set_model_entry(directory, "treebanks", table)
    _write_json(Path(directory) / choice_file(treebank), choice)


def save_calibration(directory: str | Path, calibration: Calibration) -> None:
    """Make ``calibration`` the model folder's own (``config.json``'s ``model.calibration``); weights untouched."""
    _set_model_entry(directory, "calibration", calibration.to_dict())


def _set_model_entry(directory: str | Path, key: str, value: Any) -> None:
    """Replace ``config.json``'s ``model[key]`` in a model folder of a current format (``CURRENT``)."""
    directory = Path(directory)
    config = read_model_config(directory)
    if config["format_version"] not in CURRENT:
        raise ModelError(f"{directory}: a format-{config['format_version']} folder; save it again with this spandep first")
    config["model"][key] = value
    write_model_config(directory, config, apart=config["format_version"] == FORMAT_VERSION)  # the folder's layout kept


def write_model_config(directory: Path, config: dict[str, Any], apart: bool = True) -> None:
    """Write a model folder's ``config.json`` (atomically) with each output head's settings that it stores apart
    (``OutputHead.stored_apart``: a lemma head's lexicons, 19 MB of a pool model's JSON) taken out into
    ``HEAD_TABLES``, xz-compressed (a tenth of the bytes; format 3), and with them every head's ``WITH_TABLES`` (its
    class list: 2.3 MB of a pool model's ``config.json``); a config with no such table, or ``apart`` false, is
    written whole as format 2, as a spandep before these tables reads it."""
    heads = config["model"].get("heads") or {}
    tables = {name: {k: head[k] for k in HEADS.get(name).stored_apart if k in head} for name, head in heads.items() if apart}
    if any(tables.values()):  # format 3 anyway: the class lists (megabytes of a pool model's JSON) compressed beside them
        tables = {name: {**{k: heads[name][k] for k in WITH_TABLES if k in heads[name]}, **table} for name, table in tables.items()}
    tables = {name: table for name, table in tables.items() if table}
    kept = {name: {k: v for k, v in head.items() if k not in tables.get(name, {})} for name, head in heads.items()}
    written = {**config, "format_version": FORMAT_VERSION if tables else 2, "model": {**config["model"], **({"heads": kept} if heads else {})}}
    if tables:  # the tables first, then the config that says they are there
        tmp = directory / f".{HEAD_TABLES}.tmp"
        with lzma.open(tmp, "wt", encoding="utf-8") as f:
            json.dump(tables, f, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, directory / HEAD_TABLES)
    _write_json(directory / "config.json", written)
    if not tables:
        (directory / HEAD_TABLES).unlink(missing_ok=True)


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda``, ``cuda:N`` (or ``auto``: CUDA when there is one) as a device: an :class:`OptionError` for
    another name, a :class:`ModelError` for a device this machine lacks."""
    problem = device_problem("device", name)
    if problem:
        raise OptionError(problem)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"device {name!r} asked for but torch sees no CUDA GPU here; use --device cpu")
    return device


def read_model_config(directory: str | Path) -> dict[str, Any]:
    """A model folder's ``config.json`` (``ModelError`` when it is missing, unreadable or of another format)."""
    directory = Path(directory)
    cfg_path = directory / "config.json"
    if not cfg_path.is_file():
        raise ModelError(f"{directory}: not a spandep model folder (no config.json); train one with `spandep train`")
    try:
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ModelError(f"{cfg_path}: unreadable JSON ({exc})") from exc
    if config.get("format_version") not in (1, *CURRENT):
        raise ModelError(
            f"{directory}: model format {config.get('format_version')} but this spandep {__version__} reads "
            f"formats 1 to {FORMAT_VERSION}; use the spandep release that trained it"
        )
    if config["format_version"] == FORMAT_VERSION:  # written so only with tables: a folder without them is damaged
        try:
            with lzma.open(directory / HEAD_TABLES, "rt", encoding="utf-8") as f:
                tables = json.load(f)
        except (OSError, EOFError, lzma.LZMAError, json.JSONDecodeError) as exc:
            raise ModelError(f"{directory}/{HEAD_TABLES}: cannot read the output heads' tables ({_first_line(exc)}); copy the folder again") from None
        heads = config["model"].get("heads") or {}
        for name, table in tables.items():
            if name not in heads:
                raise ModelError(f"{directory}/{HEAD_TABLES}: a table of the head {name!r}, which config.json lacks; copy the folder again")
            heads[name].update(table)
    return config


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def load_model(directory: str | Path, device: str = "cpu", int8: bool = False, merge_adapter: bool = True) -> Parser:
    """Load a saved model folder for inference (eval mode) onto ``device``; ``int8``: with dynamically
    quantised int8 linear layers in the encoder (CPU only, see ``storage.int8.dynamic_int8``). An encoder's
    adapter is merged into its base weights (as fast as full fine-tuning) unless ``merge_adapter`` is false, as it
    must be to save the model again. Bounds oneDNN's kernel cache first, unless the environment says
    (:mod:`spandep.storage.kernels`)."""
    bound_kernel_cache()  # before any model runs: oneDNN reads it at its first kernel
    directory = Path(directory)
    target = resolve_device(device)  # a bad device fails before the model is read
    config = read_model_config(directory)
    damaged = "the folder is damaged (copy it again, or export it again from its training run)"
    try:
        state = load_file(str(directory / "model.safetensors"))
    except (OSError, SafetensorError) as exc:  # missing, truncated, garbled
        raise ModelError(f"{directory}/model.safetensors: cannot load weights ({_first_line(exc)}); {damaged}") from None
    if config["format_version"] == 1:
        config, state = upgrade_v1(config, state)
    compact = config.get("compact")
    try:
        # a compact model takes its frozen weights from the base packages, so it is built from them
        model = build_model(config, None if compact else directory)
    except UnknownNameError as exc:
        raise ModelError(f"{directory}: {exc} (this is spandep {__version__})") from exc
    except ModelError as exc:  # a base encoder not installed, or its one-time build failing its checksum
        raise ModelError(f"{directory}: {exc}") from None
    except (OSError, ImportError) as exc:
        raise ModelError(f"{directory}: cannot build the encoder {config['encoder'].get('model')!r} ({exc})") from exc
    except (KeyError, TypeError, ValueError) as exc:  # a config.json edited by hand, or of another release
        raise ModelError(f"{directory}/config.json: describes no model this spandep {__version__} can build ({_first_line(exc)}); {damaged}") from None
    try:
        if compact and compact.get("int8"):
            state = dequantize(state, compact["int8"])
        missing, unexpected = model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state.items()}, strict=False)
    except RuntimeError as exc:  # "Error(s) in loading state_dict ...:" and a line per mismatch: the first one said
        first = str(exc).splitlines()[1:2] or [str(exc)]
        raise ModelError(f"{directory}: the weights do not match config.json ({first[0].strip()}); {damaged}") from None
    expected_missing = set(compact["from_base"]) if compact else set()
    if unexpected or set(missing) != expected_missing:
        raise ModelError(f"{directory}: weights do not match the config (missing {sorted(set(missing) - expected_missing)[:5]}, unexpected {unexpected[:5]})")
    model.eval()
    model.config = config
    if merge_adapter or int8:
        model.encoder.merge_adapter()
    model = model.to(target)
    if int8:
        try:
            dynamic_int8(model)
        except ValueError as exc:
            raise ModelError(f"{directory}: {exc}") from exc
    return model
