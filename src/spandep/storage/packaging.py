"""The language models as installable distributions, as spaCy ships ``en_core_web_sm``: ``spandep package-models``.

The core wheel ships the models of ``catalogue.CORE_LANGUAGE`` only; every other catalogue folder is built here from
spandep's own resources (a source checkout) into a wheel of its own, ``spandep-model-<folder>`` (import package
``spandep_model_<folder>``, the folder inside it as package data), of spandep's version and depending on that
spandep: a generated ``pyproject.toml`` in a temporary folder, built by setuptools (``BACKEND``: it writes wheels
itself, no ``wheel`` package) through ``pip wheel --no-deps --no-build-isolation --no-index`` (offline). ``make models`` installs them; the catalogue reads
them where its resources lack the folder (``catalogue.locate``). A distribution installed already whose files are the source folder's (by the SHA-256 of its
``RECORD``) and whose version is spandep's is up to date (``--changed`` builds only the others).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from spandep.errors import ModelError, OutputError
from spandep.storage.catalogue import ShippedModel, module_of
from spandep.version import __version__

BACKEND = "setuptools>=70.1"  # the build backend: since 70.1 setuptools writes wheels without the `wheel` package


def _files(folder: Path) -> list[Path]:
    """The files of a model folder, relative to it, in order (Python's caches left out)."""
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def pyproject(model: ShippedModel) -> str:
    """The ``pyproject.toml`` of ``model``'s distribution: its folder as package data of its import package."""
    module, name = module_of(model.folder.name), model.folder.name
    project = {
        "name": model.package(), "version": __version__, "requires-python": ">=3.10",
        "description": f"spandep's model of {model.treebank} ({model.language}): spandep.load({model.name!r})",
    }
    lines = [
        "[build-system]", f"requires = {json.dumps([BACKEND])}", 'build-backend = "setuptools.build_meta"', "", "[project]",
        *(f"{key} = {json.dumps(value)}" for key, value in project.items()),
        f"dependencies = {json.dumps([f'spandep=={__version__}'])}", "", "[tool.setuptools]",
        f"packages = {json.dumps([module])}", "include-package-data = false", "", "[tool.setuptools.package-data]",
        f"{module} = {json.dumps([f'{name}/**/*'])}",
    ]
    return "\n".join(lines) + "\n"


def backend_problem() -> str | None:
    """Why this interpreter cannot build the wheels (no ``BACKEND``: a venv's own setuptools is often older), in one
    line; ``None``: it can."""
    from packaging.requirements import Requirement

    wanted = Requirement(BACKEND)
    try:
        found: str | None = metadata.version(wanted.name)
    except metadata.PackageNotFoundError:
        found = None
    if found is not None and wanted.specifier.contains(found):
        return None
    return f"spandep package-models builds wheels with {BACKEND} (found: {found or 'none'}): pip install '{BACKEND}' (make models does)"


def build_wheel(model: ShippedModel, out: Path) -> Path:
    """Build ``model``'s wheel into ``out`` from its source folder; the wheel's path. ``ModelError`` for a folder that
    is not here (an installed spandep carries only the core's), ``OutputError`` for a build that fails (pip's output is
    then kept beside the wheels)."""
    source, out = model.source(), out.resolve()  # pip runs in the temporary folder
    if not (source / "config.json").is_file():
        raise ModelError(f"{source} is not a model folder: spandep package-models builds from a source checkout of spandep (git clone; make models)")
    problem = backend_problem()
    if problem:
        raise OutputError(problem)
    module = module_of(source.name)
    with tempfile.TemporaryDirectory(prefix="spandep-package-") as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text(pyproject(model), encoding="utf-8")
        (root / module).mkdir()
        (root / module / "__init__.py").write_text(
            f'"""spandep\'s model of {model.treebank} ({model.language}): the folder {source.name}/ beside this file, which '
            f'spandep.load({model.name!r}) finds (built by spandep package-models)."""\n', encoding="utf-8",
        )
        shutil.copytree(source, root / module / source.name, ignore=shutil.ignore_patterns("__pycache__"))
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot make the wheels' folder {out} ({exc.strerror}): choose another with -o") from None
        run = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), str(root)]
        done = subprocess.run(run, capture_output=True, text=True, cwd=root)
        if done.returncode != 0:
            log = out / f"{model.package()}.log"
            log.write_text(done.stdout + done.stderr, encoding="utf-8")
            raise OutputError(f"building {model.package()} failed (pip wheel exited with {done.returncode}; its output: {log})")
    wheels = sorted(out.glob(f"{module}-{__version__}-*.whl"))
    if not wheels:
        raise OutputError(f"building {model.package()} wrote no wheel into {out}")
    return wheels[-1]


def _sha256(path: Path) -> str:
    """A file's SHA-256 as a wheel's ``RECORD`` writes it (URL-safe base64, no padding)."""
    digest = hashlib.sha256(path.read_bytes()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def up_to_date(model: ShippedModel) -> bool:
    """Whether ``model``'s distribution is installed at spandep's version with exactly its source folder's files."""
    try:
        dist = metadata.distribution(model.package())
    except metadata.PackageNotFoundError:
        return False
    source = model.source()
    prefix = f"{module_of(source.name)}/{source.name}/"
    recorded = {str(f): f.hash.value for f in dist.files or () if f.hash is not None and str(f).startswith(prefix)}
    wanted = {f"{prefix}{rel.as_posix()}": _sha256(source / rel) for rel in _files(source)}
    return dist.version == __version__ and recorded == wanted
