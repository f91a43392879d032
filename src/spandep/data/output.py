"""Writing an output: atomically to a file, as a stream to anything else.

Where a path leads decides how it is written (:func:`writes_atomically`):

- a regular file, or nothing yet: atomically, into a temporary file beside the target renamed over it at the end, so
  a failure midway never leaves a partial output and an existing one stays untouched;
- a symbolic link: followed, and its final target written as above (the link stays a link);
- a character device (``/dev/null``, a terminal), a FIFO or a socket, a path through an open descriptor
  (``/dev/stdout``), or ``-`` (standard output): written in place as a stream, with no temporary file (such a target
  must never be replaced by a file);
- a directory, or a file that is read-only (no write permission bit, which a rename over it would ignore): an
  :class:`~spandep.errors.OutputError`.

A temporary file is named ``.NAME.spandep-HOST-PID-XXXX.tmp`` after the writing process. It is removed on every
failure the process lives through (an exception, Ctrl-C, and SIGTERM, which the command line turns into an exit); one
left by a killed process (``kill -9``) is recognised by its host and dead PID and removed the next time that
directory is written.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

import numpy as np

from spandep.errors import OutputError

__all__ = ["check_writable", "remove_stale_temporaries", "write_blocks", "write_bytes", "writes_atomically"]

_TEMP = re.compile(r"\..+\.spandep-(.+)-([0-9]+)-[^.]+\.tmp\Z")  # write_blocks' temporary files: host, PID


_HOST = socket.gethostname().replace("/", "_") or "host"  # a PID means something on its own machine only


def writes_atomically(mode: int | None) -> bool:
    """Whether a target of ``os.stat(...).st_mode`` ``mode`` (``None``: nothing there yet) is written through a
    temporary file and a rename: a regular file or nothing; never a device, FIFO or socket (a stream)."""
    return mode is None or stat.S_ISREG(mode)


def sibling_folder(final: Path, fix: str) -> Path:
    """A new empty hidden folder beside ``final`` (its parents created), where a folder is built before it is renamed
    into place; an ``OutputError`` ending with ``fix`` (how to get room) when it cannot be made."""
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    except OSError as exc:
        raise OutputError(f"cannot write {final.parent}: {exc.strerror or exc}; {fix}") from None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: a process of another user has that PID
        return True
    return True


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Remove the temporary files that writers killed before their end left in ``directory`` (those whose PID is no
    running process); returns what was removed."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = _TEMP.match(name)
        if match and match.group(1) == _HOST and int(match.group(2)) != os.getpid() and not _pid_alive(int(match.group(2))):
            try:
                os.unlink(directory / name)
                removed.append(directory / name)
            except OSError:
                pass
    return removed


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def usual_permissions(folder: Path) -> None:
    """Give ``folder`` and everything under it the permissions a new file or folder gets (the umask's), as
    ``mkdtemp`` and safetensors create owner-only ones: a model or encoder folder others may read."""
    files = _default_mode()
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, files | ((files & 0o444) >> 2) if path.is_dir() else files)


def check_writable(path: Path) -> None:
    """Before long work whose result goes to ``path``: the :class:`OutputError` that writing there would raise at the
    end (a directory, a missing directory, a read-only file, a path that cannot be looked at), raised now."""
    _destination(path)


def write_blocks(blocks: Iterable[str], path_or_file: str | Path | IO[str]) -> None:
    """Write text ``blocks`` one after the other (UTF-8, newlines as given): the writer of every output format.

    ``path_or_file`` is a path, ``"-"`` (standard output) or an open text stream; a path is written as the module
    says (atomically to a file, through a symlink to its target, as a stream to a device or FIFO). Raises
    :class:`OutputError` when the target cannot be written (missing directory, no permission, a directory, disk
    full, ...); errors of the ``blocks`` iterable pass through, after the temporary file is removed.
    """
    if not isinstance(path_or_file, (str, Path)):
        _write_stream(blocks, path_or_file, getattr(path_or_file, "name", "<stream>"))
    elif str(path_or_file) == "-":
        _write_stream(blocks, sys.stdout, "<stdout>")
        sys.stdout.flush()
    else:
        _write_path(blocks, Path(path_or_file), binary=False)


def write_bytes(data: bytes, path: Path) -> None:
    """Write binary ``data`` (a PNG, ...) to ``path`` the way :func:`write_blocks` writes text: atomically to a file,
    in place to a device or FIFO; an :class:`OutputError` when it cannot be written."""
    _write_path([data], path, binary=True)


def _destination(path: Path) -> tuple[int | None, Path | None]:
    """How ``path`` is written: the ``st_mode`` of what it leads to (``None``: nothing yet) and, for an atomic write,
    the file to replace (a symlink's final target; ``None``: written in place as a stream). An
    :class:`OutputError` for a target that cannot be written."""
    try:
        mode: int | None = os.stat(path).st_mode  # follows links: what the path leads to
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {path}: it is a directory")
    if not writes_atomically(mode) or _through_descriptor(path):
        return mode, None
    target = Path(os.path.realpath(path))  # a symlink's final target (the link itself stays)
    if not target.parent.is_dir():
        raise OutputError(f"cannot write {path}: directory {target.parent} does not exist")
    if mode is not None and (not mode & 0o222 or not os.access(target, os.W_OK)):  # root may write any file: the bits say
        raise OutputError(
            f"cannot write {path}: the file is read-only (mode {stat.S_IMODE(mode):04o}), as cp would refuse; make it "
            f"writable (chmod u+w) or give another output"
        )
    return mode, target


def _write_path(blocks: Iterable[str] | Iterable[bytes], path: Path, binary: bool) -> None:
    mode, target = _destination(path)
    if target is None:
        _write_device(blocks, path, binary)
    else:
        _write_atomically(blocks, path, target, mode, binary)


def _write_device(blocks: Iterable[str] | Iterable[bytes], path: Path, binary: bool) -> None:
    """A device, FIFO or socket, or a file reached through an open descriptor (``/dev/stdout``): opened for
    appending (nothing truncated, no temporary file) and written in place."""
    try:
        fh = _open(path, "a", binary)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        _write_stream(blocks, fh, str(path))
        _close(fh, path)  # a full device reports its error at the final flush
    except BaseException:
        try:
            fh.close()
        except OSError:
            pass
        raise


def _close(fh: IO[Any], path: Path) -> None:
    try:
        fh.close()
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _through_descriptor(path: Path) -> bool:
    """Whether ``path`` leads to its file through ``/proc/PID/fd`` or ``/dev/fd`` (as ``/dev/stdout`` does): a
    stream a process holds open, written in place even when it is a regular file (``> out.txt``)."""
    hop = Path(os.path.abspath(path))
    for _ in range(40):  # the kernel's own limit of links followed
        if str(hop).startswith(("/proc/", "/dev/fd/")):
            return True
        if not hop.is_symlink():
            return False
        hop = Path(os.path.abspath(hop.parent / os.readlink(hop)))
    return False


def _open(fd_or_path: int | Path, mode: str, binary: bool) -> IO[Any]:
    return open(fd_or_path, mode + "b") if binary else open(fd_or_path, mode, encoding="utf-8", newline="")


def _write_atomically(blocks: Iterable[str] | Iterable[bytes], path: Path, target: Path, mode: int | None, binary: bool) -> None:
    directory = target.parent
    remove_stale_temporaries(directory)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.spandep-{_HOST}-{os.getpid()}-", suffix=".tmp", dir=directory)
    except OSError as exc:
        reason = exc.strerror or exc
        raise OutputError(f"cannot write {path}: directory {directory} is not writable ({reason})") from None
    fh = _open(fd, "w", binary)
    try:
        _write_stream(blocks, fh, str(path))  # OutputError on write errors; errors of `blocks` pass through
        try:
            fh.close()
            os.chmod(tmp_name, _default_mode() if mode is None else mode & 0o7777)
            os.replace(tmp_name, target)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        try:
            fh.close()
        except OSError:
            pass
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def _write_stream(blocks: Iterable[str] | Iterable[bytes], fh: IO[Any], name: str) -> None:
    for text in blocks:
        try:
            fh.write(text)
        except BrokenPipeError:  # its reader went away (| head): the caller decides (the command line stops quietly)
            raise
        except OSError as exc:
            raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None


def relative_paths(record: Any) -> Any:
    """``record`` (a model's training record: dicts, lists, strings) with every absolute path made relative to the
    current folder (``/srv/data/x`` run from ``/srv/repo``: ``../data/x``), so that a saved model
    names no machine's folders; other values as they are."""
    if isinstance(record, dict):
        return {key: relative_paths(value) for key, value in record.items()}
    if isinstance(record, list):
        return [relative_paths(value) for value in record]
    if isinstance(record, str) and os.path.isabs(record) and "\n" not in record:
        return os.path.relpath(record)
    return record


def cached_array(path: Path, shape: tuple[int, ...], fill: Callable[[np.ndarray], None]) -> np.ndarray:
    """A float32 array of ``shape`` kept in the ``.npy`` file ``path`` (a cache of vectors computed once, reused when a
    run resumes): where the file is missing, ``fill`` writes the array (given zeroed and memory-mapped, so memory stays
    bounded) into a temporary file beside it, renamed to ``path`` when done; then read back through a memory map,
    read-only, as the file holds it (whatever its shape: the caller checks that it is the one wanted)."""
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp.npy")
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=shape)  # shape, zeros
        fill(out)
        out.flush()
        del out
        os.replace(tmp, path)
    return np.load(path, mmap_mode="r")
