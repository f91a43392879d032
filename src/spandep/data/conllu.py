"""Readers and writers: CoNLL-U / CoNLL-X and pre-tokenised text (raw text, which needs a tokenizer, is read by
:mod:`spandep.tokenization.inputs`).

``read_conllu`` streams a file line by line (constant memory) and checks every line; it keeps comments,
multiword-token lines (``3-4``) and empty nodes (``5.1``) raw so that ``write_conllu`` gives the file back
byte for byte. Tree shape (one root, no cycles) is checked separately by :func:`check_trees`.

Every problem in the input raises :class:`~spandep.errors.InputFormatError` with file, 1-based line and
reason. Every reader takes a path, ``-`` (standard input) or an :class:`InputBytes` (data held in memory, such as
a web request's, read exactly as a file holding those bytes). ``write_conllu`` (like every output format) writes
through :func:`spandep.data.output.write_blocks`: a file atomically, a device, FIFO or standard output as a stream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from spandep.data.output import write_blocks
from spandep.data.reading import InputBytes, Source, check_text, decoded_lines, source_name
from spandep.data.sentence import Sentence, Token
from spandep.errors import InputFormatError
from spandep.limits import limit

__all__ = [
    "InputBytes",
    "read_conllu",
    "check_trees",
    "format_sentence",
    "write_conllu",
    "read_tokens",
    "check_text",
    "check_form",
    "source_name",
    "token_sentence",
    "too_many_words",
]

CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
CONLLX_COLUMNS = ("ID", "FORM", "LEMMA", "CPOSTAG", "POSTAG", "FEATS", "HEAD", "DEPREL", "PHEAD", "PDEPREL")
FORMATS = ("conllu", "conllx")

_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*\Z")
_EMPTY_ID = re.compile(r"[0-9]+\.[1-9][0-9]*\Z")
TOKEN_CHARS = int(limit("token_chars").high)
SENTENCE_WORDS = int(limit("sentence_words").high)


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


def too_many_words(what: str) -> str:
    """The message for ``what`` (a sentence) of more words than ``sentence_words``."""
    return f"{what} has more than {SENTENCE_WORDS} words (limit sentence_words): split it into sentences"


def check_form(form: str, source: str, lineno: int, allow_space: bool = True) -> None:
    if not form:
        raise InputFormatError(source, lineno, "empty FORM")
    if len(form) > TOKEN_CHARS:
        raise InputFormatError(source, lineno, f"a FORM of {len(form)} characters, more than {TOKEN_CHARS} (limit token_chars): split it")
    if form.isspace():
        raise InputFormatError(source, lineno, "FORM is whitespace only")
    bad = _control_char(form)
    if bad is not None:
        raise InputFormatError(source, lineno, f"control character U+{ord(bad):04X} in FORM {form!r}")
    if not allow_space and " " in form:
        raise InputFormatError(source, lineno, f"space in FORM {form!r} (not allowed in CoNLL-X)")


def token_sentence(tokens: object, where: str) -> Sentence:
    """A sentence from one list of token strings given in Python (the API, the integrations); errors name
    ``where``: a ``TypeError`` for anything but a list (a tuple, an array's ``tolist()``) of ``str`` (a bare string
    included: it is no list of tokens), a ``ValueError`` for no token or a form no CoNLL-U file can hold."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{where}: expected a list of token strings, got {type(tokens).__name__} {tokens!r:.60}")
    if not tokens:
        raise ValueError(f"{where}: a sentence needs at least one token")
    for j, form in enumerate(tokens):
        if not isinstance(form, str):
            raise TypeError(f"{where}, token {j}: expected a str, got {type(form).__name__} {form!r:.60}")
        try:
            check_form(form, where, 0)
        except InputFormatError as exc:
            raise ValueError(f"{where}, token {j}: {exc.reason}") from None
    return Sentence.from_tokens(list(tokens))


def read_conllu(path: Source, fmt: str = "conllu", heads: bool = True) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U (``fmt="conllu"``) or CoNLL-X (``fmt="conllx"``) file.

    CoNLL-X columns map onto :class:`Token` in order (CPOSTAG -> upos, POSTAG -> xpos, PHEAD -> deps,
    PDEPREL -> misc); CoNLL-X has no multiword tokens or empty nodes. Comment lines before the first word
    go to ``Sentence.comments``; multiword-token and empty-node lines (and any comment line that appears
    after a word line) go to ``Sentence.extra_lines`` at their position, raw. HEAD ``_`` becomes ``None``.

    Accepted: ``-`` for standard input, a UTF-8 BOM, CRLF or CR line ends, several blank lines between sentences,
    no final blank line.
    Raises :class:`InputFormatError` (file, line, reason) for: a missing/unreadable file, bytes that are
    not UTF-8, a column count other than 10, an empty field, a non-integer ID, word IDs that are not
    1..n in order (duplicates included), a HEAD that is neither an integer nor ``_``, a HEAD outside
    [0, n], an empty or whitespace-only FORM, a control character (C0, DEL or NEL) in a FORM, a
    multiword-token range that is reversed, goes beyond the sentence or overlaps another, an empty node
    beyond the sentence or out of place, and a sentence without words. UTF-16 input is named as such.
    Tree shape is not checked here: see :func:`check_trees`.
    ``heads=False`` (input to be parsed, whose HEAD is replaced) reads the HEAD column leniently: an integer is
    kept (so that a column not predicted can be given back, and DEPS kept where the tree is unchanged), anything
    else is ``None``, so a garbled or out-of-range HEAD there is no error.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    conllu = fmt == "conllu"
    columns = CONLLU_COLUMNS if conllu else CONLLX_COLUMNS
    source = source_name(path)

    words: list[Token] = []
    word_lines: list[int] = []
    comments: list[str] = []
    extra: list[tuple[int, str]] = []
    nodes: list[tuple[int, str, int]] = []  # multiword tokens and empty nodes: (line, ID, words before it)
    start = 0

    def finish() -> Sentence:
        n = len(words)
        if n == 0:
            raise InputFormatError(source, start, "sentence has no words (only comments or multiword/empty-node lines)")
        for w, ln in zip(words, word_lines):
            if heads and w.head is not None and w.head > n:
                raise InputFormatError(source, ln, f"HEAD {w.head} out of range 0..{n}")
        _check_nodes(source, nodes, n)
        return Sentence(words=words, comments=comments, extra_lines=extra, source=source, line=start)

    for lineno, line in decoded_lines(path):
        if not line or line.isspace():
            if start:
                yield finish()
                words, word_lines, comments, extra, nodes, start = [], [], [], [], [], 0
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
            hint = "; this looks like plain text: give --input-format text (raw text) or tokens (a sentence a line)" if len(cols) == 1 and " " in line else ""
            raise InputFormatError(source, lineno, f"expected 10 tab-separated columns, found {len(cols)}{hint}")
        if "" in cols:
            i = cols.index("")
            raise InputFormatError(source, lineno, f"empty field in column {i + 1} ({columns[i]})")
        wid = cols[0]
        if not (wid.isascii() and wid.isdigit()):
            if conllu and (_RANGE_ID.match(wid) or _EMPTY_ID.match(wid)):
                extra.append((len(words), line))
                nodes.append((lineno, wid, len(words)))
                continue
            raise InputFormatError(source, lineno, f"ID {wid!r} is not an integer")
        i = int(wid)
        expected = len(words) + 1
        if i != expected:
            if 1 <= i < expected:
                raise InputFormatError(source, lineno, f"duplicate word ID {i}")
            raise InputFormatError(source, lineno, f"word IDs must be 1..n in order: expected {expected}, found {i}")
        if i > SENTENCE_WORDS:
            raise InputFormatError(source, lineno, too_many_words("a sentence"))
        form = cols[1]
        if not form or form.isspace() or not form.isprintable() or len(form) > TOKEN_CHARS or (not conllu and " " in form):
            check_form(form, source, lineno, allow_space=conllu)
        h = cols[6]
        if h.isascii() and h.isdigit():
            head = int(h)
        elif h == "_" or not heads:
            head = None
        else:
            raise InputFormatError(source, lineno, f"HEAD {h!r} is not an integer or _")
        words.append(Token(i, form, cols[2], cols[3], cols[4], cols[5], head, cols[7], cols[8], cols[9]))
        word_lines.append(lineno)
    if start:
        yield finish()


def _check_nodes(source: str, nodes: list[tuple[int, str, int]], n: int) -> None:
    """Multiword-token ranges ``a-b`` (a ≤ b ≤ n, just before word a, not overlapping) and empty nodes ``i.k``
    (i ≤ n, just after word i) of a sentence of ``n`` words, each ``(line, ID, words before it)``."""
    covered = 0  # the last word of the previous multiword token
    for line, wid, before in nodes:
        if "-" in wid:
            first, last = map(int, wid.split("-"))
            if first > last:  # (a one-word range, 3-3, is odd but harmless: the official scorer takes it too)
                problem = f"multiword token {wid} is reversed: write its range as FIRST-LAST, e.g. {last}-{first}"
            elif last > n:
                problem = f"multiword token {wid} goes beyond the sentence's {n} words"
            elif first <= covered:
                problem = f"multiword token {wid} overlaps the one before it (which ends at word {covered})"
            elif first != before + 1:
                problem = f"multiword token {wid} must come just before word {first}, not after word {before}"
            else:
                covered = last
                continue
        else:
            word = int(wid.split(".")[0])
            if word > n:
                problem = f"empty node {wid} out of range: the sentence has {n} words"
            elif word != before:
                problem = f"empty node {wid} must come just after word {word}, not after word {before}"
            else:
                continue
        raise InputFormatError(source, line, problem)


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


def read_tokens(path: Source) -> Iterator[Sentence]:
    """Pre-tokenised text: one sentence per line, tokens separated by whitespace. Blank lines are skipped;
    ``Sentence.line`` is the line the sentence is on. Raises :class:`InputFormatError` for bytes that are
    not UTF-8 and for control characters."""
    source = source_name(path)
    for lineno, line in decoded_lines(path):
        forms = line.split()
        if not forms:
            continue
        if len(forms) > SENTENCE_WORDS:
            raise InputFormatError(source, lineno, too_many_words(f"a line of {len(forms)} tokens"))
        for form in forms:
            check_form(form, source, lineno)
        yield Sentence.from_tokens(forms, source=source, line=lineno)


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


def write_conllu(sentences: Iterable[Sentence], path_or_file: str | Path | IO[str]) -> None:
    """Write ``sentences`` as CoNLL-U (UTF-8, LF line ends) with :func:`~spandep.data.output.write_blocks`."""
    write_blocks(map(format_sentence, sentences), path_or_file)
