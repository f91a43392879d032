"""Readers and writers: CoNLL-U / CoNLL-X, pre-tokenised text and raw text.

``read_conllu`` streams a file line by line (constant memory) and checks every line; it keeps comments,
multiword-token lines (``3-4``) and empty nodes (``5.1``) raw so that ``write_conllu`` gives the file back
byte for byte. Tree shape (one root, no cycles) is checked separately by :func:`check_trees`.

Every problem in the input raises :class:`~spandep.errors.InputFormatError` with file, 1-based line and
reason. ``write_conllu`` (like every output format, through ``write_blocks``) writes to a temporary file next
to the target and renames it at the end, so a failure midway never leaves a partial output.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, BinaryIO

from spandep.data.sentence import Sentence, Token
from spandep.errors import InputFormatError, OutputError

if TYPE_CHECKING:
    from spandep.tokenization.text import Tokenizer

__all__ = [
    "read_conllu",
    "check_trees",
    "format_sentence",
    "write_conllu",
    "read_tokens",
    "read_raw_text",
    "check_text",
    "read_input",
    "check_form",
    "write_blocks",
]

CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
CONLLX_COLUMNS = ("ID", "FORM", "LEMMA", "CPOSTAG", "POSTAG", "FEATS", "HEAD", "DEPREL", "PHEAD", "PDEPREL")
FORMATS = ("conllu", "conllx")
INPUT_FORMATS = ("conllu", "conllx", "tokens", "text")

_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*\Z")
_EMPTY_ID = re.compile(r"[0-9]+\.[1-9][0-9]*\Z")
_BOM = "\ufeff"


# --------------------------------------------------------------------------------------------- reading


def _open_input(path: str | Path) -> BinaryIO:
    source = str(path)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputFormatError(source, 0, "file not found") from None
    except IsADirectoryError:
        raise InputFormatError(source, 0, "is a directory, not a file") from None
    except OSError as exc:
        raise InputFormatError(source, 0, f"cannot read: {exc.strerror or exc}") from None


def _decoded_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for every line of ``path``, decoded as UTF-8 one line at a time, without the
    line end (LF or CRLF) and without a UTF-8 BOM at the start of the file."""
    source = str(path)
    with _open_input(path) as fh:
        lineno = 0
        for raw in fh:
            lineno += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputFormatError(
                    source,
                    lineno,
                    f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at byte offset {exc.start} of the line",
                ) from None
            if lineno == 1 and line.startswith(_BOM):
                line = line[1:]
            if line.endswith("\n"):
                line = line[:-2] if line.endswith("\r\n") else line[:-1]
            yield lineno, line


# C0 controls, DEL and NEL: they break line-based formats and terminals. Other C1 controls (U+0080-U+009F,
# category Cc too) are accepted: they are mojibake in some released treebanks (e.g. UD 2.2 ca_ancora test
# has U+0093 in a form) and harmless to the format.
_CONTROL = re.compile("[\x00-\x1f\x7f\x85]")


def _control_char(text: str) -> str | None:
    """The first forbidden control character (C0, DEL or NEL) in ``text``, or None."""
    if text.isprintable():  # fast path; isprintable() is also False for e.g. NBSP or ZWNJ, which are fine
        return None
    m = _CONTROL.search(text)
    return m.group() if m else None


def check_form(form: str, source: str, lineno: int, allow_space: bool = True) -> None:
    if not form:
        raise InputFormatError(source, lineno, "empty FORM")
    if form.isspace():
        raise InputFormatError(source, lineno, "FORM is whitespace only")
    bad = _control_char(form)
    if bad is not None:
        raise InputFormatError(source, lineno, f"control character U+{ord(bad):04X} in FORM {form!r}")
    if not allow_space and " " in form:
        raise InputFormatError(source, lineno, f"space in FORM {form!r} (not allowed in CoNLL-X)")


def read_conllu(path: str | Path, fmt: str = "conllu", heads: bool = True) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U (``fmt="conllu"``) or CoNLL-X (``fmt="conllx"``) file.

    CoNLL-X columns map onto :class:`Token` in order (CPOSTAG -> upos, POSTAG -> xpos, PHEAD -> deps,
    PDEPREL -> misc); CoNLL-X has no multiword tokens or empty nodes. Comment lines before the first word
    go to ``Sentence.comments``; multiword-token and empty-node lines (and any comment line that appears
    after a word line) go to ``Sentence.extra_lines`` at their position, raw. HEAD ``_`` becomes ``None``.

    Accepted: a UTF-8 BOM, CRLF line ends, several blank lines between sentences, no final blank line.
    Raises :class:`InputFormatError` (file, line, reason) for: a missing/unreadable file, bytes that are
    not UTF-8, a column count other than 10, an empty field, a non-integer ID, word IDs that are not
    1..n in order (duplicates included), a HEAD that is neither an integer nor ``_``, a HEAD outside
    [0, n], an empty or whitespace-only FORM, a control character (C0, DEL or NEL) in a FORM, and a
    sentence without words.
    Tree shape is not checked here: see :func:`check_trees`.
    ``heads=False`` (input to be parsed, whose HEAD is replaced) leaves the HEAD column unread: every head is
    ``None``, so a garbled or out-of-range HEAD there is no error.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    conllu = fmt == "conllu"
    columns = CONLLU_COLUMNS if conllu else CONLLX_COLUMNS
    source = str(path)

    words: list[Token] = []
    word_lines: list[int] = []
    comments: list[str] = []
    extra: list[tuple[int, str]] = []
    start = 0

    def finish() -> Sentence:
        n = len(words)
        if n == 0:
            raise InputFormatError(source, start, "sentence has no words (only comments or multiword/empty-node lines)")
        for w, ln in zip(words, word_lines):
            if w.head is not None and w.head > n:
                raise InputFormatError(source, ln, f"HEAD {w.head} out of range 0..{n}")
        return Sentence(words=words, comments=comments, extra_lines=extra, source=source, line=start)

    for lineno, line in _decoded_lines(path):
        if not line or line.isspace():
            if start:
                yield finish()
                words, word_lines, comments, extra, start = [], [], [], [], 0
            continue
        if not start:
            start = lineno
        if line[0] == "#":
            if words or extra:
                extra.append((len(words), line))
            else:
                comments.append(line)
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise InputFormatError(source, lineno, f"expected 10 tab-separated columns, found {len(cols)}")
        if "" in cols:
            i = cols.index("")
            raise InputFormatError(source, lineno, f"empty field in column {i + 1} ({columns[i]})")
        wid = cols[0]
        if not (wid.isascii() and wid.isdigit()):
            if conllu and (_RANGE_ID.match(wid) or _EMPTY_ID.match(wid)):
                extra.append((len(words), line))
                continue
            raise InputFormatError(source, lineno, f"ID {wid!r} is not an integer")
        i = int(wid)
        expected = len(words) + 1
        if i != expected:
            if 1 <= i < expected:
                raise InputFormatError(source, lineno, f"duplicate word ID {i}")
            raise InputFormatError(source, lineno, f"word IDs must be 1..n in order: expected {expected}, found {i}")
        form = cols[1]
        if not form or form.isspace() or not form.isprintable() or (not conllu and " " in form):
            check_form(form, source, lineno, allow_space=conllu)
        h = cols[6]
        if h == "_" or not heads:
            head = None
        elif h.isascii() and h.isdigit():
            head = int(h)
        else:
            raise InputFormatError(source, lineno, f"HEAD {h!r} is not an integer or _")
        words.append(Token(i, form, cols[2], cols[3], cols[4], cols[5], head, cols[7], cols[8], cols[9]))
        word_lines.append(lineno)
    if start:
        yield finish()


def check_trees(sentences: Iterable[Sentence]) -> Iterator[Sentence]:
    """Pass sentences through, raising :class:`InputFormatError` (at the sentence's first line) where the
    heads are present but do not form a tree (exactly one word attached to 0, no cycles, heads in range).
    Sentences whose heads are all ``_`` (unparsed input) pass; a mix of ``_`` and integers does not."""
    from spandep.data.trees import tree_problems

    for sent in sentences:
        heads = sent.heads
        missing = sum(h is None for h in heads)
        if missing == len(heads):
            yield sent
            continue
        if missing:
            raise InputFormatError(
                sent.source, sent.line, f"{missing} of {len(heads)} words have HEAD _, the others an integer"
            )
        problems = tree_problems(heads)  # type: ignore[arg-type]
        if problems:
            raise InputFormatError(sent.source, sent.line, "heads do not form a tree: " + "; ".join(problems))
        yield sent


def read_tokens(path: str | Path) -> Iterator[Sentence]:
    """Pre-tokenised text: one sentence per line, tokens separated by whitespace. Blank lines are skipped;
    ``Sentence.line`` is the line the sentence is on. Raises :class:`InputFormatError` for bytes that are
    not UTF-8 and for control characters."""
    source = str(path)
    for lineno, line in _decoded_lines(path):
        forms = line.split()
        if not forms:
            continue
        for form in forms:
            check_form(form, source, lineno)
        yield Sentence.from_tokens(forms, source=source, line=lineno)


# Control characters that are not whitespace: a CoNLL-U FORM cannot hold them, so raw text with one is refused.
_TEXT_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f]")


def read_raw_text(path: str | Path) -> str:
    """The whole of ``path`` decoded as UTF-8 (a BOM at the start dropped, line ends kept as they are), for a
    tokenizer. Raises :class:`InputFormatError` at the line of bytes that are not UTF-8 or of a control character
    that is not whitespace (such as U+0000 or U+001B: no CoNLL-U FORM can hold it)."""
    source = str(path)
    with _open_input(path) as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputFormatError(source, line, f"not valid UTF-8: byte 0x{data[exc.start]:02x}") from None
    if text.startswith(_BOM):
        text = text[1:]
    check_text(text, source)
    return text


def check_text(text: str, source: str) -> None:
    """Raise :class:`InputFormatError` at the line of the first control character of raw ``text`` that is not
    whitespace (such as U+0000 or U+001B): no CoNLL-U FORM can hold it."""
    bad = _TEXT_CONTROL.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        raise InputFormatError(
            source, line, f"control character U+{ord(bad.group()):04X} in the text: remove it (e.g. with tr -d) and parse again"
        )


def read_input(path: str | Path, fmt: str = "conllu", tokenizer: Tokenizer | None = None) -> Iterator[Sentence]:
    """Stream the sentences of ``path`` in one of :data:`INPUT_FORMATS`: ``conllu``/``conllx``
    (:func:`read_conllu`), ``tokens`` (:func:`read_tokens`) or ``text`` (raw text, split by ``tokenizer``: a
    model's, see :func:`spandep.tokenization.tokenizer_for`; ``None``: the rule fallback). This is input to
    be parsed: a CoNLL file's HEAD column, which parsing replaces, is not read (``heads=False``)."""
    if fmt in FORMATS:
        return read_conllu(path, fmt, heads=False)
    if fmt == "tokens":
        return read_tokens(path)
    if fmt == "text":
        if tokenizer is None:
            from spandep.tokenization import RuleTokenizer

            tokenizer = RuleTokenizer()
        return tokenizer.iter_sentences(read_raw_text(path), str(path))
    raise ValueError(f"unknown input format {fmt!r}; use one of {', '.join(INPUT_FORMATS)}")


# --------------------------------------------------------------------------------------------- writing


def format_sentence(sentence: Sentence) -> str:
    """The CoNLL-U block of ``sentence``: comments, word lines with the extra lines at their positions,
    and the terminating blank line."""
    out = list(sentence.comments)
    extra = sentence.extra_lines
    if extra and any(extra[i][0] > extra[i + 1][0] for i in range(len(extra) - 1)):
        extra = sorted(extra, key=lambda e: e[0])
    k = 0
    n_extra = len(extra)
    for i, w in enumerate(sentence.words):
        while k < n_extra and extra[k][0] <= i:
            out.append(extra[k][1])
            k += 1
        out.append(
            f"{w.id}\t{w.form}\t{w.lemma}\t{w.upos}\t{w.xpos}\t{w.feats}\t"
            f"{'_' if w.head is None else w.head}\t{w.deprel}\t{w.deps}\t{w.misc}"
        )
    while k < n_extra:
        out.append(extra[k][1])
        k += 1
    out.append("")
    return "\n".join(out) + "\n"


def _is_stdout(target: object) -> bool:
    return isinstance(target, (str, Path)) and str(target) == "-"


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_conllu(sentences: Iterable[Sentence], path_or_file: str | Path | IO[str]) -> None:
    """Write ``sentences`` as CoNLL-U (UTF-8, LF line ends) with :func:`write_blocks`."""
    write_blocks(map(format_sentence, sentences), path_or_file)


def write_blocks(blocks: Iterable[str], path_or_file: str | Path | IO[str]) -> None:
    """Write text ``blocks`` one after the other (UTF-8, newlines as given): the writer of every output format.

    ``path_or_file`` is a path, ``"-"`` (standard output) or an open text stream. A path is written
    atomically: into a temporary file in the same directory, renamed over the target at the end; if
    anything fails midway (including the ``blocks`` iterable raising), the temporary file is removed
    and an existing target is left untouched. Raises :class:`OutputError` when the target cannot be
    written (missing directory, no permission, target is a directory, disk full, ...).
    """
    if _is_stdout(path_or_file):
        _write_stream(blocks, sys.stdout, "<stdout>")
        sys.stdout.flush()
        return
    if not isinstance(path_or_file, (str, Path)):
        _write_stream(blocks, path_or_file, getattr(path_or_file, "name", "<stream>"))
        return

    path = Path(path_or_file)
    directory = path.parent
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    if not directory.is_dir():
        raise OutputError(f"cannot write {path}: directory {directory} does not exist")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        reason = exc.strerror or exc
        raise OutputError(f"cannot write {path}: directory {directory} is not writable ({reason})") from None
    fh = os.fdopen(fd, "w", encoding="utf-8", newline="")
    try:
        _write_stream(blocks, fh, str(path))  # OutputError on write errors; errors of `blocks` pass through
        try:
            mode = os.stat(path).st_mode & 0o7777 if path.exists() else _default_mode()
            fh.close()
            os.chmod(tmp_name, mode)
            os.replace(tmp_name, path)
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


def _write_stream(blocks: Iterable[str], fh: IO[str], name: str) -> None:
    for text in blocks:
        try:
            fh.write(text)
        except OSError as exc:
            raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None
