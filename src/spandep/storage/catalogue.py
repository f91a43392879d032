"""The catalogue of shipped models: ``spandep.load("en")``, ``spandep parse --model en``, ``spandep models``.

``resources/catalogue.json`` names each shipped model once: its folder under ``resources/``, language and treebank,
and for a folder trained on several treebanks the one the name parses as (``model_treebank``: several names can
share one folder, each loading it with its own treebank and tokenizer).
A line's ``code`` is its treebank as UD names its folders (``fr_sequoia``): a model is loaded by its name, its code,
or its language's ISO 639-1 or 639-3 code or English name (``de``, ``deu``, ``german``: the language's default
treebank, :mod:`spandep.data.languages`), in that order (:func:`find`); a language or treebank without an installed
model is an error naming the package to install (:func:`missing_model`).
Everything else is read from the folder itself: the base encoder from ``config.json``, the size from its files,
and the measured accuracy and speed from ``card.json`` (written from a benchmark result by
``benchmarks/scripts/model_card.py``, never by hand; no card: no figures). A line whose folder is not installed is
not offered. Adding a shipped model is one folder plus one line (docs/design.md).

Where a line's folder is (:func:`locate`): among spandep's own resources when it is there (the core wheel's English
models; every folder in a source checkout, an editable install, so what the checkout holds is what it parses with),
else in its installed model distribution (``spandep-model-<folder>``, importable as ``spandep_model_<folder>``, the
folder inside it; ``spandep package-models`` builds them, ``make models`` installs them). The core wheel holds only
the models of ``CORE_LANGUAGE`` (pyproject.toml's package-data names their folders); every other folder ships in
its own distribution.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from spandep.data.languages import language, treebank_language
from spandep.errors import ModelError
from spandep.options import InferenceOptions

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
CATALOGUE_FILE = RESOURCES / "catalogue.json"
CARD_FILE = "card.json"
PACKAGE = "spandep-model-{code}"  # the installable distribution of a treebank's model (make models builds them)
MODULE = "spandep_model_{code}"  # its import package, holding the model folder as package data
CORE = "spandep"  # the distribution of the models of CORE_LANGUAGE: the core wheel itself
CORE_LANGUAGE = "en"  # whose models ship inside the core wheel (pyproject.toml's package-data names their folders)


def package_of(folder: str) -> str:
    """The distribution that ships a model folder of its own (``fr_sequoia`` → ``spandep-model-fr-sequoia``)."""
    return PACKAGE.format(code=Path(folder).name.replace("_", "-"))


def module_of(folder: str) -> str:
    """The import package of that distribution (``fr_sequoia`` → ``spandep_model_fr_sequoia``)."""
    return MODULE.format(code=Path(folder).name.replace("-", "_"))


def locate(folder: str) -> tuple[Path, bool]:
    """Where a catalogue line's ``folder`` is, and whether in its installed model distribution: under ``resources/``
    when a model is there (the core wheel, a source checkout), else in that distribution (its import package's
    subfolder of the same name) when it holds one, else under ``resources/`` (not installed)."""
    local = (CATALOGUE_FILE.parent / folder).resolve()
    if (local / "config.json").is_file():
        return local, False
    try:
        spec = importlib.util.find_spec(module_of(folder))
    except (ImportError, ValueError):  # a folder name that is no module name
        spec = None
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        packaged = Path(root) / Path(folder).name
        if (packaged / "config.json").is_file():
            return packaged.resolve(), True
    return local, False


def card_file(treebank: str | None = None) -> str:
    """The card's file name in a model folder: ``card.json``, or ``card-<treebank>.json`` for one of the treebanks of
    a folder trained on several (each name of such a folder has its own test figures)."""
    return CARD_FILE if treebank is None else f"card-{treebank}.json"


@dataclass(frozen=True)
class ModelChoice:
    """A model to load: its ``folder`` and, for a shipped name of a multi-treebank model, the ``treebank`` it parses
    as (``None``: the options say, or the model has one)."""

    folder: Path
    treebank: str | None = None

    def options(self, options: InferenceOptions) -> InferenceOptions:
        """``options`` with this choice's treebank where they name none."""
        return options if self.treebank is None or options.treebank is not None else replace(options, treebank=self.treebank)


@dataclass(frozen=True)
class ShippedModel:
    """One catalogue line: ``name`` → ``folder`` (absolute), with its language, treebank and a short note, and
    ``model_treebank``: the treebank to parse as in a folder trained on several (``None``: one)."""

    name: str
    folder: Path
    language: str
    treebank: str
    note: str = ""
    model_treebank: str | None = None
    code: str | None = None
    packaged: bool = False  # found in its installed model distribution (locate), not among spandep's own resources

    def choice(self) -> ModelChoice:
        return ModelChoice(self.folder, self.model_treebank)

    def in_core(self) -> bool:
        """Whether the core wheel ships it (a model of ``CORE_LANGUAGE``); else its own distribution does."""
        found = treebank_language(self.code) if self.code else None
        return found is not None and found.code == CORE_LANGUAGE

    def package(self) -> str:
        """The distribution that ships it: ``spandep`` for the core's, else ``spandep-model-<folder>``."""
        return CORE if self.in_core() else package_of(self.folder.name)

    def origin(self) -> str:
        """Where it is read from: its model distribution, ``spandep`` (the core's own), or ``source checkout`` (a
        folder of its own distribution read from ``resources/``, as in an editable install)."""
        return package_of(self.folder.name) if self.packaged else CORE if self.in_core() else "source checkout"

    def source(self) -> Path:
        """Its folder among spandep's own resources, which its distribution is built from: the one a source checkout's
        scripts write to and measure, whether or not it is the one read (:func:`locate`)."""
        return CATALOGUE_FILE.parent / self.folder.name

    def installed(self) -> bool:
        """Whether the folder is a model here (a line may come before its folder)."""
        return (self.folder / "config.json").is_file()

    def base(self) -> str:
        """The base encoder of the model (an alias of ``encoders.bases.BASES`` or a folder; ``""``: none, a BiLSTM)."""
        config = json.loads((self.folder / "config.json").read_text(encoding="utf-8"))
        return str(config.get("encoder", {}).get("model") or "")

    def size(self) -> int:
        """Bytes on disk of the shipped part (the folder: fine-tuned weights, tokenizer, card)."""
        return sum(f.stat().st_size for f in self.folder.rglob("*") if f.is_file())

    def card(self) -> dict[str, Any]:
        """The measured figures of its card (``card_file``; ``{}`` when the model has none yet)."""
        path = self.folder / card_file(self.model_treebank)
        if not path.is_file():
            return {}
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ModelError(f"{path}: unreadable JSON ({exc})") from None


def _shipped(name: str, line: dict[str, Any]) -> ShippedModel:
    """The catalogue line ``name``, its folder located (:func:`locate`)."""
    folder, packaged = locate(line["folder"])
    return ShippedModel(
        name, folder, line["language"], line["treebank"], line.get("note", ""), line.get("model_treebank"), line.get("code"), packaged,
    )


def read_catalogue() -> tuple[str, dict[str, ShippedModel]]:
    """The default model's name and every catalogue line by name (installed or not)."""
    try:
        data = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
        models = {name: _shipped(name, line) for name, line in data["models"].items()}
        return str(data["default"]), models
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{CATALOGUE_FILE}: not a readable catalogue ({exc!r}); reinstall spandep") from None


def shipped_models() -> list[ShippedModel]:
    """The catalogue's models whose folders are installed, in catalogue order."""
    return [m for m in read_catalogue()[1].values() if m.installed()]


def default_model() -> ShippedModel:
    """The model used when none is named (``en``)."""
    name, models = read_catalogue()
    return models[name]


def find(text: str, models: dict[str, ShippedModel]) -> ShippedModel | None:
    """The catalogue line ``text`` names, among ``models`` (by name, in catalogue order): a line's name, else its
    ``code`` (``fr_sequoia``, any case), else a language's code or name (``de``, ``deu``, ``german``): the line of its
    default treebank, else its first line; ``None``: none."""
    if text in models:
        return models[text]
    by_code = [m for m in models.values() if m.code and m.code.casefold() == text.casefold()]
    if by_code:
        return by_code[0]
    lang = language(text)
    if lang is None:
        return None
    default = [m for m in models.values() if m.code == lang.treebank]
    own = [m for m in models.values() if m.code and treebank_language(m.code) == lang]
    return (default or own or [None])[0]


def model_language(folder: Path | None, treebank: str | None = None) -> str | None:
    """The ISO 639-1 code of what a model parses: the language of ``treebank`` (a model of several parsing as it),
    else that of the shipped model in ``folder``; ``None``: neither says (a model folder of the user's)."""
    if treebank is None and folder is not None:
        here = Path(folder).resolve()
        treebank = next((m.code for m in shipped_models() if m.code and m.folder.resolve() == here), None)
    found = treebank_language(treebank) if treebank else None
    return found.code if found else None


def missing_model(text: str) -> str | None:
    """What to install for ``text`` when it names a catalogue line, a language or a treebank (``fr``, ``de``,
    ``german``, ``de_gsd``) whose model is not installed, in one line: the distribution of the line it names (found
    as :func:`find` finds it among every line), else of the treebank's own folder; ``None``: it names none."""
    line = find(text, read_catalogue()[1])
    lang = language(text)
    code = lang.treebank if lang is not None else text.casefold() if treebank_language(text) else None
    if code is not None:
        what = f"{lang.name}, whose default treebank is {code}" if lang is not None else f"the treebank {code}"
    elif line is not None:
        what = f"the shipped model {line.name} ({line.treebank})"
    else:
        return None
    package = line.package() if line is not None else package_of(str(code))
    return f"{text!r} names {what}, and no model of it is installed: install {package} (make models builds and installs the language models); `spandep models` lists the installed ones"


def only_treebank(folder: Path) -> str | None:
    """The one treebank of a folder cut to it (``spandep export --treebank``), which a parse of the folder is as
    untold (its settings, calibration and tokenizer are that treebank's); ``None`` for any other folder."""
    try:
        names = json.loads((folder / "config.json").read_text(encoding="utf-8"))["model"]["treebanks"]["names"]
    except (OSError, ValueError, KeyError, TypeError):  # no folder, no config, a model of one treebank: loading says
        return None
    return names[0] if isinstance(names, list) and len(names) == 1 and isinstance(names[0], str) else None


def model_choice(name_or_path: str | os.PathLike[str]) -> ModelChoice:
    """A shipped model's folder (and treebank) by name, code or language (:func:`find`), else the path given. A name
    takes precedence over a folder of that name in the working directory (write ``./en`` for that); a bare word that
    is neither is a ``ModelError`` naming the package to install (:func:`missing_model`) or listing the names."""
    text = str(name_or_path)
    shipped = {m.name: m for m in shipped_models()}
    found = find(text, shipped)
    if found is not None:
        return found.choice()
    path = Path(text).expanduser()
    if path.exists() or os.sep in text or "/" in text:
        return ModelChoice(path, only_treebank(path))
    raise ModelError(
        missing_model(text) or f"{text!r} is neither a shipped model ({', '.join(shipped) or 'none installed'}) nor a "
        "model folder; `spandep models` lists the shipped models"
    )
