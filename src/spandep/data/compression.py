"""Compressed inputs: gzip, xz and bzip2, known by their first bytes (never by the file's name) and read as a stream.

:func:`decompressed` looks at the first bytes of an opened input: the signature of one of :data:`COMPRESSIONS`
makes it a stream of the decompressed bytes, read a block at a time as the readers above it ask (a whole file is
never decompressed into memory); anything else is given back as it is, those first bytes included. So every reader
(``spandep parse``, ``evaluate``, ``train``, the API, a request to the service) reads ``treebank.conllu.xz`` as it
reads ``treebank.conllu``, and the bounds of :mod:`spandep.data.reading` (line length, binary data) apply to the
decompressed bytes.

Two problems are one line naming the input: an archive that is cut short or corrupt, and a decompression bomb, more
than ``compressed_ratio`` decompressed bytes per compressed byte once :data:`RATIO_FROM` bytes are out (the treebanks
of UD decompress 5 to 15 times; a file of zeros, a thousand times and more).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable
from typing import BinaryIO

from spandep.errors import InputFormatError
from spandep.limits import limit

__all__ = ["COMPRESSIONS", "RATIO", "RATIO_FROM", "compression", "decompressed"]

# name: (signature test on the first SIGNATURE_BYTES bytes, the stream that decompresses a file object)
COMPRESSIONS: dict[str, tuple[Callable[[bytes], bool], Callable[[BinaryIO], BinaryIO]]] = {
    "gzip": (lambda head: head.startswith(b"\x1f\x8b\x08"), lambda fh: gzip.GzipFile(fileobj=fh, mode="rb")),
    "xz": (lambda head: head.startswith(b"\xfd7zXZ\x00"), lambda fh: lzma.LZMAFile(fh, "rb")),
    # "BZh", the block size 1-9, then the magic of a first block (pi) or of the end of an empty stream (sqrt(pi))
    "bzip2": (
        lambda head: head[:3] == b"BZh" and head[3:4] in (b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9")
        and head[4:10] in (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90"),
        lambda fh: bz2.BZ2File(fh, "rb"),
    ),
}
SIGNATURE_BYTES = 10
RATIO = int(limit("compressed_ratio").high)
RATIO_FROM = 1 << 20  # decompressed bytes before the ratio is checked (a small file's header weighs too much)
_BROKEN = (EOFError, OSError, lzma.LZMAError, zlib.error)  # what a cut or corrupt archive raises


def compression(head: bytes) -> str | None:
    """The name of the compression whose signature starts ``head`` (``None``: none of :data:`COMPRESSIONS`)."""
    return next((name for name, (matches, _) in COMPRESSIONS.items() if matches(head)), None)


class _Replayed(io.RawIOBase):
    """The bytes of ``fh`` with its first bytes ``head`` (already read from it) put back in front; counts the bytes
    it gives (``given``)."""

    def __init__(self, head: bytes, fh: BinaryIO) -> None:
        super().__init__()
        self._head, self._fh, self.given = head, fh, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n], self._head = self._head[:n], self._head[n:]
        else:
            data = self._fh.read(len(view))
            n = len(data)
            view[:n] = data
        self.given += n
        return n


class _Decompressing(io.RawIOBase):
    """The decompressed bytes of ``compressed`` (``what`` decompresses it), each problem an
    :class:`InputFormatError` naming ``source``: a broken archive, or more than :data:`RATIO` bytes out per byte in."""

    def __init__(self, compressed: _Replayed, what: str, source: str) -> None:
        super().__init__()
        self._compressed, self._what, self._source, self._out = compressed, what, source, 0
        self._stream = COMPRESSIONS[what][1](compressed)  # type: ignore[arg-type]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        try:
            data = self._stream.read(len(view))
        except _BROKEN as exc:
            raise InputFormatError(
                self._source, 0, f"a broken {self._what} archive ({exc}): is the file complete? Download or compress it again"
            ) from None
        self._out += len(data)
        if self._out > RATIO_FROM and self._out > RATIO * self._compressed.given:
            raise InputFormatError(
                self._source, 0, f"{self._what} data that decompresses to more than {RATIO} times its size (limit "
                "compressed_ratio): a decompression bomb? Decompress it yourself if it is meant to be read",
            )
        view[: len(data)] = data
        return len(data)


def decompressed(fh: BinaryIO, source: str) -> BinaryIO:
    """``fh`` read as a stream of decompressed bytes where it starts with the signature of a compression, else as it
    is; either way a buffered stream (``readline(size)``) from its first byte. ``source`` names it in errors."""
    head = fh.read(SIGNATURE_BYTES)  # blocks until that many bytes or the end (a pipe's first write may be shorter)
    replayed = _Replayed(head, fh)
    what = compression(head)
    return io.BufferedReader(replayed if what is None else _Decompressing(replayed, what, source))
