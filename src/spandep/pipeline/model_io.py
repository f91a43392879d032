"""Saving and loading parser models: a folder with ``config.json``, ``model.safetensors`` and encoder assets.

No pickles: weights are safetensors, everything else is JSON. ``format_version`` guards against loading a
folder written by an incompatible release.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from safetensors.torch import load_file, save_file

from spandep import __version__
from spandep.encoders import build_encoder
from spandep.errors import ModelError
from spandep.pipeline.int8 import dequantize, dynamic_int8, quantize

if TYPE_CHECKING:
    from spandep.models.biaffine import BiaffineParser
    from spandep.models.span_parser import SpanParser

    Parser = BiaffineParser | SpanParser

FORMAT_VERSION = 1
ENCODER_ASSETS = "encoder"
LINKER_ASSETS = "linker"  # a faithful span linker's own tokenizer and architecture
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent.parent / "resources" / "default_model"


def resolve_model_dir(model: str | Path | None) -> Path:
    """The model folder to use: the one given, else ``$SPANDEP_MODEL``, else the model shipped with spandep."""
    if model:
        return Path(model)
    if os.environ.get("SPANDEP_MODEL"):
        return Path(os.environ["SPANDEP_MODEL"])
    if (DEFAULT_MODEL_DIR / "config.json").is_file():
        return DEFAULT_MODEL_DIR
    raise ModelError("no model given and no default model installed: pass --model DIR (a folder written by `spandep train`)")


def build_model(config: dict[str, Any], assets: Path | None = None, linker_assets: Path | None = None) -> Parser:
    """Instantiate the model described by a saved config (random weights until a state dict is loaded).

    ``assets``/``linker_assets``: saved tokenizer and architecture folders of the encoder and of a faithful span
    linker; ``None`` builds them from their pretrained base packages."""
    from spandep.models.biaffine import BiaffineParser
    from spandep.models.span_parser import SpanParser

    encoder = build_encoder(config["encoder"], assets)
    m = dict(config["model"])
    kind = m.pop("model_type")
    if kind == "biaffine":
        return BiaffineParser(encoder, **m)
    if kind == "span":
        return SpanParser(encoder, linker_assets=str(linker_assets) if linker_assets else None, **m)
    raise ModelError(f"unknown model type {kind!r} in config (this spandep {__version__} knows 'biaffine' and 'span')")


def frozen_base_keys(model: Parser) -> list[str]:
    """State-dict keys of frozen pretrained weights: identical to the encoder's base package, so they need not ship."""
    return [name for name, p in model.named_parameters() if not p.requires_grad and ".transformer." in f".{name}"]


def save_model(
    model: Parser, directory: Path, training: dict[str, Any] | None = None, compact: bool = False, int8: bool = False
) -> None:
    """Write the model folder atomically: built in a temporary sibling, then swapped into place.

    ``compact`` stores floating-point weights in float16 and leaves out frozen pretrained weights, which are
    taken from the encoder's installed base package at load time (a small shippable model); ``int8`` (with
    ``compact``) also stores the transformer's weight matrices as int8 with per-row scales (``pipeline.int8``).
    """
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        config = {
            "format_version": FORMAT_VERSION,
            "spandep_version": __version__,
            "model": model.export_config(),
            "encoder": model.encoder.export_config(),
            "training": training or {},
        }
        state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        if compact:
            omitted = frozen_base_keys(model)
            state = {k: (v.half() if v.is_floating_point() else v) for k, v in state.items() if k not in omitted}
            config["compact"] = {"dtype": "float16", "from_base": omitted}
            if int8:
                state, config["compact"]["int8"] = quantize(state)
        save_file(state, str(tmp / "model.safetensors"), metadata={"format_version": str(FORMAT_VERSION)})
        save_assets = getattr(model.encoder, "save_assets", None)
        if save_assets is not None and not compact:  # a compact model takes its tokenizer from the base package
            save_assets(tmp / ENCODER_ASSETS)
        linker_assets = getattr(getattr(model, "linker", None), "save_assets", None)
        if linker_assets is not None and not compact:
            linker_assets(tmp / LINKER_ASSETS)
        (tmp / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        old = directory.with_name(directory.name + ".old")
        if directory.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.replace(directory, old)
        os.replace(tmp, directory)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda``, ``cuda:N`` (or ``auto``: CUDA when there is one) as a device, with a clear error for
    a device this machine lacks."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise ModelError(f"unknown device {name!r}; use cpu, cuda, cuda:N or auto") from exc
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"device {name!r} asked for but torch sees no CUDA GPU here; use --device cpu")
    return device


def load_model(directory: str | Path, device: str = "cpu", int8: bool = False) -> Parser:
    """Load a saved model folder for inference (eval mode) onto ``device``; ``int8``: with dynamically
    quantised int8 linear layers in the encoder (CPU only, see ``pipeline.int8.dynamic_int8``)."""
    directory = Path(directory)
    cfg_path = directory / "config.json"
    if not cfg_path.is_file():
        raise ModelError(f"{directory}: not a spandep model folder (no config.json); train one with `spandep train`")
    try:
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ModelError(f"{cfg_path}: unreadable JSON ({exc})") from exc
    if config.get("format_version") != FORMAT_VERSION:
        raise ModelError(
            f"{directory}: model format {config.get('format_version')} but this spandep {__version__} reads "
            f"format {FORMAT_VERSION}; use the spandep release that trained it"
        )
    assets = directory / ENCODER_ASSETS
    compact = config.get("compact")
    try:
        # a compact model takes its frozen weights from the base encoder package, so it is built from it
        linker_assets = directory / LINKER_ASSETS
        model = build_model(
            config,
            None if compact or not assets.is_dir() else assets,
            None if compact or not linker_assets.is_dir() else linker_assets,
        )
    except (OSError, ImportError) as exc:
        raise ModelError(f"{directory}: cannot build the encoder {config['encoder'].get('model')!r} ({exc})") from exc
    try:
        state = load_file(str(directory / "model.safetensors"))
        if compact and compact.get("int8"):
            state = dequantize(state, compact["int8"])
        missing, unexpected = model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state.items()}, strict=False)
    except (OSError, RuntimeError) as exc:
        raise ModelError(f"{directory}/model.safetensors: cannot load weights ({exc})") from exc
    expected_missing = set(compact["from_base"]) if compact else set()
    if unexpected or set(missing) != expected_missing:
        raise ModelError(f"{directory}: weights do not match the config (missing {sorted(set(missing) - expected_missing)[:5]}, unexpected {unexpected[:5]})")
    model.eval()
    model.config = config  # type: ignore[attr-defined]
    model = model.to(resolve_device(device))
    if int8:
        try:
            dynamic_int8(model)
        except ValueError as exc:
            raise ModelError(f"{directory}: {exc}") from exc
    return model
