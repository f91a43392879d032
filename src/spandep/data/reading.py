"""Reading an input's lines in bounded memory, each decoded and checked: the layer under every reader.

An input is a path, ``-`` (standard input) or an :class:`InputBytes` (data held in memory, such as a web request's,
read exactly as a file holding those bytes). Its lines are read one at a time, at most :data:`LINE_BYTES` bytes each
(``readline(size)``), so an endless line (``/dev/zero``) is an error after a few megabytes, never a process that
grows until the kernel kills it. Before the first line is used, its start is sniffed (:func:`sniff`): binary data
(NUL bytes, control bytes, a known file signature) and UTF-16 are each named as what they are.

An input compressed with gzip, xz or bzip2 (known by its first bytes, not its name) is read decompressed, as a
stream, and every check here applies to the decompressed bytes (:mod:`spandep.data.compression`).

Every problem is an :class:`~spandep.errors.InputFormatError` naming the input and the 1-based line.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from spandep.data.compression import compression, decompressed
from spandep.errors import InputFormatError
from spandep.limits import limit

__all__ = [
    "LINE_BYTES", "PIECE_CHARS", "STDIN", "InputBytes", "Source", "TextPiece", "check_text", "decoded_lines", "open_input",
    "sniff", "source_name", "text_pieces",
]

STDIN = "-"  # the input path that reads standard input
BOM = "\ufeff"
LINE_CHARS = int(limit("line_chars").high)
# UTF-8 takes at most 4 bytes a character (and a line end 2): a chunk this long without a line end holds more than
# LINE_CHARS characters, so no line is read further than this
LINE_BYTES = 4 * (LINE_CHARS + 1) + 2
SNIFF_BYTES = 8000  # the start of an input looked at for binary data (as git does)
_CHUNK = 1 << 16  # bytes read at a time from a file of CR line ends
_BYTE_LINE_END = re.compile(rb"\r\n|\r|\n")
# the signatures of files often given by mistake, named in the message
_SIGNATURES = {
    b"\x7fELF": "an ELF executable", b"PK\x03\x04": "a zip archive (unzip it first, or give gzip, xz or bzip2)",
    b"\x28\xb5\x2f\xfd": "zstd-compressed (unzstd it first)", b"\x89PNG": "a PNG image", b"%PDF-": "a PDF document",
}
PARAGRAPH_CHARS = int(limit("paragraph_chars").high)
PIECE_CHARS = 200_000  # raw text is read a piece of about this many characters (whole paragraphs) at a time
# Control characters that are not whitespace: a CoNLL-U FORM cannot hold them, so raw text with one is refused.
_TEXT_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f]")
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")  # C0 controls (NUL included) that are neither whitespace nor ESC


@dataclass(frozen=True)
class InputBytes:
    """An input held in memory, read exactly as a file holding ``data`` would be; ``name`` stands for the file's
    path in messages."""

    name: str
    data: bytes


Source = str | Path | InputBytes  # what a reader reads: a path, "-" for standard input, or bytes in memory


def source_name(path: Source) -> str:
    """How messages name an input: its path, ``<stdin>`` for ``-``, an :class:`InputBytes`' name."""
    if isinstance(path, InputBytes):
        return path.name
    return "<stdin>" if str(path) == STDIN else str(path)


@contextlib.contextmanager
def open_input(path: Source) -> Iterator[BinaryIO]:
    """``path`` opened for reading bytes (``-``: standard input, left open), decompressed as a stream where its first
    bytes are those of gzip, xz or bzip2 data (:func:`~spandep.data.compression.decompressed`)."""
    source = source_name(path)
    if isinstance(path, InputBytes):
        yield decompressed(io.BytesIO(path.data), source)
        return
    if str(path) == STDIN:
        yield decompressed(sys.stdin.buffer, source)
        return
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise InputFormatError(source, 0, "file not found") from None
    except IsADirectoryError:
        raise InputFormatError(source, 0, "is a directory; give a file") from None
    except OSError as exc:
        raise InputFormatError(source, 0, f"cannot read: {exc.strerror or exc}") from None
    with fh:
        yield decompressed(fh, source)


def sniff(head: bytes, source: str, lineno: int = 1) -> None:
    """An error naming what the bytes ``head`` of line ``lineno`` are when they are no UTF-8 text: at the start of an
    input, a known file signature or UTF-16 (its byte-order mark, or NUL bytes in every other place: ASCII in
    UTF-16); anywhere, other binary data (NUL and other control bytes, at least 4 making a twentieth of the bytes;
    fewer, or none of them NUL, are named as the control characters they are by the readers, or kept where a column
    may hold them)."""
    head = head[:SNIFF_BYTES]
    utf16 = "looks like UTF-16; convert it to UTF-8 with iconv -f UTF-16 -t UTF-8"
    if lineno == 1:
        twice = compression(head)  # open_input has decompressed one layer: this is a second
        if twice is not None:
            raise InputFormatError(source, 1, f"is {twice}-compressed twice: decompress it once and read that file")
        for signature, what in _SIGNATURES.items():
            if head.startswith(signature):
                raise InputFormatError(source, 1, f"is {what}, not text: give a UTF-8 text file")
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise InputFormatError(source, 1, utf16)
    if lineno == 1 and len(head) >= 4 and 0 in head:
        even, odd = head[0::2], head[1::2]
        for zeros, chars in ((odd, even), (even, odd)):  # little-endian, big-endian
            if zeros.count(0) * 2 >= len(zeros) and chars.count(0) * 8 <= len(chars):
                raise InputFormatError(source, 1, utf16)
    controls = _CONTROL_BYTES.findall(head)
    if 0 in head and len(controls) >= 4 and len(controls) * 20 >= len(head):
        first = _CONTROL_BYTES.search(head).start()
        raise InputFormatError(
            source, lineno, f"binary data, not text ({len(controls)} NUL or control bytes, the first at byte offset {first} "
            "of the line): give a UTF-8 text file",
        )


def _raw_lines(fh: BinaryIO) -> Iterator[bytes]:
    """The lines of ``fh`` with their line ends, each at most :data:`LINE_BYTES` bytes (a longer line is cut
    there): LF or CRLF, or CR alone (old Mac files: a CR inside the first line means the whole file uses CR)."""
    first = fh.readline(LINE_BYTES)
    if b"\r" in first.rstrip(b"\r\n"):
        yield from _cr_lines(first, fh)
        return
    line = first
    while line:
        yield line
        line = fh.readline(LINE_BYTES)


def _cr_lines(buffer: bytes, fh: BinaryIO) -> Iterator[bytes]:
    """The lines of a file of CR line ends (LF and CRLF end a line too), ``buffer`` its start, read a chunk at a time."""
    eof = False
    while buffer or not eof:
        end = _BYTE_LINE_END.search(buffer)
        if end and (eof or end.end() < len(buffer) or end.group() != b"\r"):  # a CR last in the buffer may be a CRLF
            yield buffer[: end.end()]
            buffer = buffer[end.end() :]
        elif len(buffer) >= LINE_BYTES or (eof and buffer):
            yield buffer[:LINE_BYTES]
            buffer = buffer[LINE_BYTES:]
        else:
            chunk = fh.read(_CHUNK)
            eof = not chunk
            buffer += chunk


def _too_long(source: str, lineno: int) -> InputFormatError:
    return InputFormatError(
        source, lineno, f"line longer than {LINE_CHARS} characters (limit line_chars): split it (is this a text file in the "
        "--input-format given?)",
    )


def decoded_lines(path: Source, keepends: bool = False) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for every line of ``path``, decoded as UTF-8 one line at a time, without a UTF-8 BOM
    at the start of the file and, unless ``keepends``, without the line end (LF, CRLF or CR). A line of more than
    ``line_chars`` characters is an error once that many are read."""
    source = source_name(path)
    with open_input(path) as fh:
        offset = 0
        for lineno, raw in enumerate(_raw_lines(fh), 1):
            if offset < SNIFF_BYTES:  # the start of the input
                sniff(raw, source, lineno)
                offset += len(raw)
            if len(raw) >= LINE_BYTES and not raw.endswith(b"\n"):
                raise _too_long(source, lineno)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputFormatError(
                    source, lineno, f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at byte offset {exc.start} of the line"
                ) from None
            if lineno == 1 and line.startswith(BOM):
                line = line[1:]
            body = line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith(("\n", "\r")) else line
            if len(body) > LINE_CHARS:
                raise _too_long(source, lineno)
            yield lineno, line if keepends else body


def check_text(text: str, source: str, line: int = 1) -> None:
    """Raise :class:`InputFormatError` at the line of the first control character of raw ``text`` (whose first line
    is ``line``) that is not whitespace (such as U+0000 or U+001B): no CoNLL-U FORM can hold it."""
    bad = _TEXT_CONTROL.search(text)
    if bad is not None:
        line += text.count("\n", 0, bad.start())
        raise InputFormatError(
            source, line, f"control character U+{ord(bad.group()):04X} in the text: remove it (e.g. with tr -d) and parse again"
        )


@dataclass(frozen=True)
class TextPiece:
    """Whole lines of raw text, line ends kept: ``text``, the offset of its first character in the input (a BOM left
    out), the number of its first line, and whether it ``continues`` a paragraph of the piece before."""

    text: str
    offset: int = 0
    line: int = 1
    continues: bool = False


def text_pieces(path: Source) -> Iterator[TextPiece]:
    """The raw text of ``path`` (checked as :func:`decoded_lines` and :func:`check_text` do) in pieces of whole
    paragraphs, each ending at a blank line once it holds :data:`PIECE_CHARS` characters, so that memory stays
    bounded on any input. A paragraph of more than ``paragraph_chars`` characters is cut after the line that reaches
    it, where the next piece ``continues`` it (a sentence going on over that line end is ended there); no
    character is left out or changed: the pieces put together are the text."""
    source = source_name(path)
    lines: list[str] = []
    size = paragraph = offset = 0
    first = 1
    continues = False
    for lineno, line in decoded_lines(path, keepends=True):
        check_text(line, source, lineno)
        lines.append(line)
        size += len(line)
        blank = line.isspace()  # with the line end before it, a paragraph break
        paragraph = 0 if blank else paragraph + len(line)
        if (blank and size >= PIECE_CHARS) or paragraph >= PARAGRAPH_CHARS:
            yield TextPiece("".join(lines), offset, first, continues)
            lines, offset, first, continues = [], offset + size, lineno + 1, not blank
            size = paragraph = 0
    if lines:
        yield TextPiece("".join(lines), offset, first, continues)
