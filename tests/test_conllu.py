"""Readers and writers of spandep.data.conllu, and the error types of spandep.errors."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from spandep.data.conllu import (
    check_trees,
    format_sentence,
    read_conllu,
    read_tokens,
    write_conllu,
)
from spandep.data.sentence import Sentence, Token
from spandep.errors import InputFormatError, ModelError, OutputError, SpandepError
from spandep.tokenization.inputs import read_input, read_raw_text

FIXTURE = Path(__file__).parent / "fixtures" / "en_ewt_excerpt.conllu"
EWT_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "en_ewt"  # ../shared/data beside the repository
if not EWT_DIR.is_dir():  # also look next to the repository, as the data README suggests (../shared/data)
    EWT_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "en_ewt"


def word(i: int, form: str, head: str | int = "_", deprel: str = "_", upos: str = "_", misc: str = "_") -> str:
    return f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{deprel}\t_\t{misc}"


def write(tmp_path: Path, text: str | bytes, name: str = "in.conllu") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


# Two well-formed sentences: sentence 1 on lines 1-4, sentence 2 on lines 6-8.
GOOD = "\n".join(
    [
        "# sent_id = a",
        word(1, "Hello", 0, "root"),
        word(2, "world", 1, "vocative"),
        word(3, "!", 1, "punct"),
        "",
        word(1, "Yes", 2, "discourse"),
        word(2, "indeed", 0, "root"),
        "",
        "",
    ]
)


# ------------------------------------------------------------------------------------------ errors


def test_error_types():
    err = InputFormatError("x.conllu", 7, "bad thing")
    assert str(err) == "x.conllu:7: bad thing"
    assert (err.source, err.line, err.reason) == ("x.conllu", 7, "bad thing")
    assert isinstance(err, SpandepError)
    assert InputFormatError.exit_code == 2
    assert ModelError("m").exit_code == 3
    assert OutputError("o").exit_code == 4


# ------------------------------------------------------------------------------------------ reading


def test_fixture_structure_and_round_trip(tmp_path):
    sents = list(read_conllu(FIXTURE))
    assert [len(s) for s in sents] == [7, 5, 5, 23]
    assert [s.line for s in sents] == [1, 13, 22, 31]
    assert all(s.source == str(FIXTURE) for s in sents)
    first = sents[0]
    assert first.comments[-1] == "# text = From the AP comes this story :"
    assert first.words[3] == Token(4, "comes", "come", "VERB", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 0, "root", "0:root", "_")
    # multiword token kept raw before word 1 (index 0)
    assert sents[1].extra_lines == [(0, "1-2\tWe've\t_\t_\t_\t_\t_\t_\t_\t_")]
    # empty node 11.1 kept raw between words 11 and 12 (before index 11)
    assert sents[3].extra_lines == [(11, "11.1\t_\tof\tADP\tIN\tTypo=Yes\t_\t_\t12:case\tCorrectForm=of")]
    text = FIXTURE.read_text(encoding="utf-8")
    assert "".join(format_sentence(s) for s in sents) == text
    out = tmp_path / "out.conllu"
    write_conllu(read_conllu(FIXTURE), out)
    assert out.read_bytes() == FIXTURE.read_bytes()


@pytest.mark.skipif(not (EWT_DIR / "en_ewt-ud-dev.conllu").is_file(), reason="shared treebanks not available")
def test_round_trip_ewt_dev_byte_for_byte(tmp_path):
    src = EWT_DIR / "en_ewt-ud-dev.conllu"
    out = tmp_path / "dev.conllu"
    write_conllu(read_conllu(src), out)
    assert out.read_bytes().rstrip(b"\n") == src.read_bytes().rstrip(b"\n")


def test_good_file_lines_and_heads(tmp_path):
    sents = list(read_conllu(write(tmp_path, GOOD)))
    assert [s.line for s in sents] == [1, 6]
    assert sents[0].heads == [0, 1, 1]
    assert sents[1].forms == ["Yes", "indeed"]
    assert sents[1].comments == []  # a sentence may start directly with a word line


def test_bom_crlf_missing_final_blank_and_extra_blank_lines(tmp_path):
    text = "\ufeff\n\n" + GOOD.rstrip("\n").replace("\n\n", "\n\n\n\n")
    path = write(tmp_path, text.replace("\n", "\r\n"))
    sents = list(read_conllu(path))
    assert len(sents) == 2
    assert sents[0].comments == ["# sent_id = a"]  # no BOM, no \r
    assert sents[0].words[2].misc == "_"
    assert [s.line for s in sents] == [3, 10]
    # written back with LF and exactly one blank line after each sentence
    assert "".join(map(format_sentence, sents)) == GOOD.rstrip("\n") + "\n\n"


def test_unparsed_heads_become_none_and_round_trip(tmp_path):
    text = word(1, "a") + "\n" + word(2, "b") + "\n\n"
    sents = list(read_conllu(write(tmp_path, text)))
    assert sents[0].heads == [None, None]
    assert format_sentence(sents[0]) == text
    assert list(check_trees(sents)) == sents  # unparsed input is valid


def test_form_with_inner_space_allowed_in_conllu_not_conllx(tmp_path):
    path = write(tmp_path, word(1, "New York", 0, "root") + "\n\n")
    assert next(read_conllu(path)).forms == ["New York"]
    with pytest.raises(InputFormatError, match="space"):
        list(read_conllu(path, fmt="conllx"))


def test_comment_after_words_is_kept_in_place(tmp_path):
    text = word(1, "a", 0, "root") + "\n# note\n" + word(2, "b", 1, "dep") + "\n\n"
    sents = list(read_conllu(write(tmp_path, text)))
    assert sents[0].extra_lines == [(1, "# note")]
    assert format_sentence(sents[0]) == text


def test_conllx_columns_map_in_order(tmp_path):
    line = "1\tdogs\tdog\tN\tNNS\tpl\t0\tROOT\t_\t_"
    tok = next(read_conllu(write(tmp_path, line + "\n"), fmt="conllx")).words[0]
    assert tok == Token(1, "dogs", "dog", "N", "NNS", "pl", 0, "ROOT", "_", "_")
    bad = write(tmp_path, "1-2\tdogs'\t_\t_\t_\t_\t_\t_\t_\t_\n" + line + "\n", "x.conll")
    with pytest.raises(InputFormatError, match="not an integer") as exc:
        list(read_conllu(bad, fmt="conllx"))
    assert exc.value.line == 1
    with pytest.raises(ValueError):
        list(read_conllu(bad, fmt="conll09"))


# Each case: sentence 2 (starting on line 6) is broken on the given line.
S1 = "\n".join(["# sent_id = ok", word(1, "Fine", 0, "root"), word(2, ".", 1, "punct"), "", "", ""])  # lines 1-5
MALFORMED = [
    # (lines of sentence 2, line number expected, part of the reason)
    ([word(1, "a", 0, "root"), "2\tb\t_\t_\t_\t_\t1\tdep\t_"], 7, "expected 10 tab-separated columns, found 9"),
    ([word(1, "a", 0, "root"), "2 b _ _ _ _ 1 dep _ _"], 7, "found 1"),
    ([word(1, "a", 0, "root"), word(2, "b", 1, "dep").replace("2", "x", 1)], 7, "ID 'x' is not an integer"),
    ([word(1, "a", 0, "root"), word(3, "b", 1, "dep")], 7, "expected 2, found 3"),
    ([word(2, "a", 0, "root")], 6, "expected 1, found 2"),
    ([word(1, "a", 0, "root"), word(2, "b", 1, "dep"), word(2, "c", 1, "dep")], 8, "duplicate word ID 2"),
    ([word(1, "a", 0, "root"), word(2, "b", "x", "dep")], 7, "HEAD 'x' is not an integer or _"),
    ([word(1, "a", 0, "root"), word(2, "b", "-1", "dep")], 7, "HEAD '-1' is not an integer or _"),
    ([word(1, "a", 3, "dep"), word(2, "b", 0, "root")], 6, "HEAD 3 out of range 0..2"),
    ([word(1, "a", 0, "root"), word(2, "", 1, "dep")], 7, "empty field in column 2 (FORM)"),
    ([word(1, "a", 0, "root"), word(2, "  ", 1, "dep")], 7, "FORM is whitespace only"),
    ([word(1, "a", 0, "root"), word(2, "b\x01c", 1, "dep")], 7, "control character U+0001"),
    ([word(1, "a", 0, "root"), word(2, "b", 1, "")], 7, "empty field in column 8 (DEPREL)"),
    (["# only a comment"], 6, "sentence has no words"),
]


@pytest.mark.parametrize("lines,lineno,reason", MALFORMED, ids=[m[2] for m in MALFORMED])
def test_malformed_input_names_file_and_line(tmp_path, lines, lineno, reason):
    path = write(tmp_path, S1 + "\n".join(lines) + "\n\n")
    reader = read_conllu(path)
    assert next(reader).forms == ["Fine", "."]  # streaming: sentence 1 comes before the error
    with pytest.raises(InputFormatError) as exc:
        next(reader)
    err = exc.value
    assert (err.source, err.line) == (str(path), lineno)
    assert reason in err.reason
    assert str(err) == f"{path}:{lineno}: {err.reason}"


def test_non_utf8_bytes_report_the_line(tmp_path):
    data = S1.encode() + word(1, "caf", 0, "root").encode().replace(b"caf", b"caf\xe9") + b"\n\n"
    path = write(tmp_path, data)
    with pytest.raises(InputFormatError, match="UTF-8") as exc:
        list(read_conllu(path))
    assert exc.value.line == 6


def test_missing_file(tmp_path):
    with pytest.raises(InputFormatError, match="file not found"):
        list(read_conllu(tmp_path / "nope.conllu"))


def test_check_trees(tmp_path):
    text = "\n".join(
        [
            word(1, "a", 0, "root"), word(2, "b", 1, "dep"), "",  # ok, lines 1-2
            word(1, "a", 2, "dep"), word(2, "b", 1, "dep"), word(3, "c", 0, "root"), "",  # cycle, line 4
            "",
        ]
    )
    it = check_trees(read_conllu(write(tmp_path, text)))
    assert next(it).heads == [0, 1]
    with pytest.raises(InputFormatError, match="do not form a tree") as exc:
        next(it)
    assert exc.value.line == 4
    two_roots = word(1, "a", 0, "root") + "\n" + word(2, "b", 0, "root") + "\n"
    with pytest.raises(InputFormatError, match="ROOT") as exc:
        list(check_trees(read_conllu(write(tmp_path, "\n\n" + two_roots, "r.conllu"))))
    assert exc.value.line == 3
    mixed = word(1, "a", 0, "root") + "\n" + word(2, "b") + "\n"
    with pytest.raises(InputFormatError, match="HEAD _"):
        list(check_trees(read_conllu(write(tmp_path, mixed, "m.conllu"))))


# ------------------------------------------------------------------------------------------ writing


def _sentences_then_failure(sents):
    yield from sents
    raise RuntimeError("model crashed")


def test_atomic_write_leaves_no_partial_file(tmp_path):
    sents = list(read_conllu(FIXTURE))
    out = tmp_path / "out.conllu"
    with pytest.raises(RuntimeError):
        write_conllu(_sentences_then_failure(sents), out)
    assert not out.exists()
    assert os.listdir(tmp_path) == []  # temporary file removed too

    out.write_text("old content\n", encoding="utf-8")
    with pytest.raises(RuntimeError):
        write_conllu(_sentences_then_failure(sents), out)
    assert out.read_text(encoding="utf-8") == "old content\n"
    assert os.listdir(tmp_path) == ["out.conllu"]

    write_conllu(sents, out)  # replaces it when all goes well
    assert out.read_bytes() == FIXTURE.read_bytes()
    assert os.listdir(tmp_path) == ["out.conllu"]


def test_write_errors_are_output_errors(tmp_path):
    sents = list(read_conllu(FIXTURE))
    with pytest.raises(OutputError, match="does not exist"):
        write_conllu(sents, tmp_path / "missing" / "out.conllu")
    with pytest.raises(OutputError, match="is a directory"):
        write_conllu(sents, tmp_path)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="not writable"):
            write_conllu(list(read_conllu(FIXTURE)), ro / "out.conllu")
    finally:
        ro.chmod(0o700)


def test_unwritable_directory_simulated(tmp_path, monkeypatch):
    import spandep.data.output as output

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(output.tempfile, "mkstemp", refuse)
    with pytest.raises(OutputError, match="not writable") as exc:
        write_conllu(list(read_conllu(FIXTURE)), tmp_path / "out.conllu")
    assert exc.value.exit_code == 4 and "Permission denied" in str(exc.value)


def test_written_file_has_normal_permissions(tmp_path):
    out = tmp_path / "out.conllu"
    write_conllu(read_conllu(FIXTURE), out)
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_write_to_stream_and_stdout(capsys):
    sents = list(read_conllu(FIXTURE))
    buf = io.StringIO()
    write_conllu(sents, buf)
    assert buf.getvalue() == FIXTURE.read_text(encoding="utf-8")
    write_conllu(sents[:1], "-")
    assert capsys.readouterr().out == format_sentence(sents[0])


def test_format_sentence_from_tokens():
    s = Sentence.from_tokens(["Hi", "there"])
    s.words[0].head, s.words[0].deprel = 0, "root"
    assert format_sentence(s) == word(1, "Hi", 0, "root") + "\n" + word(2, "there") + "\n\n"


# ------------------------------------------------------------------------------------------ plain text


def test_read_tokens(tmp_path):
    path = write(tmp_path, "\ufeffThe cat sat .\r\n\n   \nIt  purred\t!\n", "t.txt")
    sents = list(read_tokens(path))
    assert [s.forms for s in sents] == [["The", "cat", "sat", "."], ["It", "purred", "!"]]
    assert [s.line for s in sents] == [1, 4]
    assert [w.id for w in sents[1].words] == [1, 2, 3]
    assert sents[0].heads == [None] * 4
    with pytest.raises(InputFormatError) as exc:
        list(read_tokens(write(tmp_path, b"ok\nbad \xff byte\n", "b.txt")))
    assert exc.value.line == 2


def test_read_text(tmp_path, monkeypatch):
    text = "\ufeffDr. Smith's e-mail\r\nwas x_y@b.org. He\tstayed.\n\n\nA new-paragraph starts here.\n"
    path = write(tmp_path, text, "raw.txt")
    assert read_raw_text(path) == text[1:]  # the BOM goes, line ends stay: offsets are into this text
    sents = list(read_input(path, "text"))  # the rule fallback
    assert [s.line for s in sents] == [1, 2, 5]
    assert sents[0].forms == ["Dr.", "Smith's", "e-mail", "was", "x_y@b.org", "."]
    assert sents[0].comments == ["# newpar", "# text = Dr. Smith's e-mail  was x_y@b.org."]  # CR and LF as spaces
    assert sents[2].forms == ["A", "new-paragraph", "starts", "here", "."]
    for s in sents:
        for w in s.words:  # TokenRange points at the token in the text
            start, end = (int(x) for x in w.misc.split("TokenRange=")[1].split(":"))
            assert text[1:][start:end] == w.form
    monkeypatch.setattr("spandep.tokenization.text.BLOCK_CHARS", 10)  # one paragraph a block: the same sentences
    assert [s.words for s in read_input(path, "text")] == [s.words for s in sents]
    with pytest.raises(InputFormatError) as exc:
        read_raw_text(write(tmp_path, b"ok\nbad \xff byte\n", "b.txt"))
    assert exc.value.line == 2
    with pytest.raises(InputFormatError, match="U\\+001B") as exc:
        list(read_input(write(tmp_path, "ok\n\nesc \x1b[0m\n", "c.txt"), "text"))
    assert exc.value.line == 3