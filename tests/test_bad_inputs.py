"""``spandep parse`` (and ``evaluate``) on a corpus of bad inputs: each gives a correct parse or exactly one error
line naming file and line, with the documented exit code (2 bad input, 4 output not writable), and no partial
output file. The corpus is ``fixtures/bad_inputs/``; bytes that are awkward to keep in a file (BOM, CRLF,
control characters, invalid UTF-8) and the 10,000-token sentence are written here. See docs/robustness.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FIXTURES, TINY_BIAFFINE, write_config
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.conllu import read_conllu, read_tokens
from spandep.data.trees import is_valid_tree

BAD = FIXTURES / "bad_inputs"
runner = CliRunner()


@dataclass(frozen=True)
class Error:
    """Expected failure: exit code, 1-based line of the input named in the message, part of the reason."""

    code: int
    line: int
    reason: str


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained tiny BiLSTM Biaffine model: parses fast, and its trees are as arbitrary as can be."""
    from spandep.storage.model_io import save_model
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("bad_inputs_model")
    trainer = Trainer(load_config(write_config(root / "c.toml", root / "run", "bilstm", model=TINY_BIAFFINE)))
    save_model(trainer.model, root / "model")
    return root / "model"


def conllu_row(i: int, form: str, head: str = "_") -> str:
    return "\t".join([str(i), form, "_", "_", "_", "_", head, "_", "_", "_"])


def parse(model: Path, path: Path, out: Path, fmt: str = "conllu"):
    return runner.invoke(app, ["parse", str(path), "-o", str(out), "--model", str(model), "-f", fmt])


def assert_one_error(result, path: Path, expected: Error, out: Path | None = None) -> None:
    assert result.exit_code == expected.code, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"spandep: error: {path}:{expected.line}: ") and expected.reason in lines[0], lines[0]
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    if out is not None:
        assert not out.exists() and not list(out.parent.glob(f".{out.name}.*"))  # atomic: nothing left behind


def assert_parsed(result, path: Path, out: Path, fmt: str, sentences: int) -> None:
    """Exit 0; the output has the input's sentences in order with every line and column kept except HEAD and
    DEPREL, and each has a tree: one root, no cycles, heads in range."""
    assert result.exit_code == 0, result.output
    assert result.exception is None
    expected = list(read_tokens(path) if fmt == "tokens" else read_conllu(path, fmt, heads=False))
    got = list(read_conllu(out))
    assert len(got) == len(expected) == sentences
    for e, g in zip(expected, got):
        assert (e.comments, e.extra_lines) == (g.comments, g.extra_lines)
        assert [(w.id, w.form, w.lemma, w.upos, w.xpos, w.feats, w.deps, w.misc) for w in e.words] == [
            (w.id, w.form, w.lemma, w.upos, w.xpos, w.feats, w.deps, w.misc) for w in g.words
        ]
        assert is_valid_tree(g.heads) and all(w.deprel not in ("", "_") for w in g.words)


CASES = {
    "wrong_column_count.conllu": Error(2, 5, "expected 10 tab-separated columns, found 9"),
    "non_integer_head.conllu": 1,  # parse replaces HEAD: the input's is not read (evaluate rejects it, below)
    "out_of_range_head.conllu": 1,
    "cycle.conllu": 1,
    "duplicate_ids.conllu": Error(2, 3, "duplicate word ID 2"),
    "no_final_blank_line.conllu": 2,
    "no_final_newline.conllu": 2,
    "empty.conllu": 0,
    "blank_lines_only.conllu": 0,
    "many_blank_lines_between.conllu": 2,
    "comments_only_sentence.conllu": Error(2, 5, "sentence has no words"),
    "whitespace_form.conllu": Error(2, 2, "FORM is whitespace only"),
    "space_inside_form.conllu": 1,
    "emoji.conllu": 1,
    "cjk.conllu": 3,
    "rtl.conllu": 2,
    "mixed_scripts.tokens.txt": 2,
    "blank_and_whitespace_lines.tokens.txt": 2,  # blank and whitespace-only lines are no sentences
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_corpus(model, tmp_path, name):
    path, out = BAD / name, tmp_path / "out.conllu"
    fmt = "tokens" if name.endswith(".txt") else "conllu"
    result = parse(model, path, out, fmt)
    expected = CASES[name]
    if isinstance(expected, Error):
        assert_one_error(result, path, expected, out)
    else:
        assert_parsed(result, path, out, fmt, expected)


def test_empty_input_gives_an_empty_output_file(model, tmp_path):
    out = tmp_path / "out.conllu"
    assert parse(model, BAD / "empty.conllu", out).exit_code == 0
    assert out.read_bytes() == b""


def _body(forms: list[str]) -> str:
    return "\n".join(conllu_row(i + 1, f) for i, f in enumerate(forms)) + "\n"


def _nodes(*placed: str | int) -> bytes:
    """A 4-word sentence with multiword-token or empty-node lines: ``ID, words before it, ID, words before it, ...``."""
    lines = [conllu_row(i + 1, f) for i, f in enumerate(["du", "de", "le", "chat"])]
    for wid, before in sorted(zip(placed[::2], placed[1::2]), key=lambda p: -int(p[1])):
        lines.insert(int(before), conllu_row(str(wid), "x"))
    return ("\n".join(lines) + "\n").encode()


GENERATED = {
    # name: (bytes, format, sentences or Error)
    "bom.conllu": (b"\xef\xbb\xbf# text = I saw her\n" + _body(["I", "saw", "her"]).encode() + b"\n", "conllu", 1),
    "crlf.conllu": ((_body(["I", "saw"]) + "\n" + _body(["She", "ran"]) + "\n").replace("\n", "\r\n").encode(), "conllu", 2),
    "bom_crlf.tokens.txt": (b"\xef\xbb\xbfI saw her .\r\n\r\nShe ran\r\n", "tokens", 2),
    "invisible_forms.conllu": (_body(["a", "\u200b", "\ufeff", "\u200e", "b\u2028c", "\u00ad", "\U000e0041"]).encode(), "conllu", 1),
    "c1_control_in_form.conllu": (_body(["mojibake", "\x93quoted\x94"]).encode(), "conllu", 1),  # as in UD 2.2 ca_ancora
    "control_char_in_form.conllu": (_body(["I", "saw"]).encode() + b"\n" + _body(["a\x07b", "c"]).encode(), "conllu", Error(2, 4, "control character U+0007")),
    "nul_in_form.conllu": (_body(["a\x00"]).encode(), "conllu", Error(2, 1, "control character U+0000")),
    "escape_in_tokens.tokens.txt": (b"I saw\nher \x1b[31m red\n", "tokens", Error(2, 2, "control character U+001B")),
    "latin1.conllu": (_body(["I", "saw"]).encode() + b"\n" + _body(["caf\xe9"]).encode("latin-1"), "conllu", Error(2, 4, "not valid UTF-8: byte 0xe9")),
    "utf16.tokens.txt": ("I saw her\n".encode("utf-16"), "tokens", Error(2, 1, "looks like UTF-16; convert it to UTF-8 with iconv")),
    "utf16be_no_bom.conllu": (_body(["I", "saw"]).encode("utf-16-be"), "conllu", Error(2, 1, "looks like UTF-16")),
    "utf16.text.txt": ("I saw her.\n".encode("utf-16"), "text", Error(2, 1, "looks like UTF-16")),
    "cr_only.conllu": ((_body(["I", "saw"]) + "\n" + _body(["She", "ran"])).replace("\n", "\r").encode(), "conllu", 2),
    "cr_only.tokens.txt": (b"I saw her .\rShe ran\r", "tokens", 2),
    "multiword_and_empty_nodes.conllu": (_nodes("1-2", 0, "3.1", 3), "conllu", 1),
    "reversed_range.conllu": (_nodes("3-2", 2), "conllu", Error(2, 3, "multiword token 3-2 is reversed: write its range as FIRST-LAST, e.g. 2-3")),
    "range_beyond_the_words.conllu": (_nodes("3-5", 2), "conllu", Error(2, 3, "multiword token 3-5 goes beyond the sentence's 4 words")),
    "overlapping_ranges.conllu": (_nodes("1-2", 0, "2-3", 1), "conllu", Error(2, 3, "multiword token 2-3 overlaps the one before it")),
    "range_out_of_place.conllu": (_nodes("3-4", 0), "conllu", Error(2, 1, "multiword token 3-4 must come just before word 3")),
    "empty_node_out_of_range.conllu": (_nodes("8.1", 4), "conllu", Error(2, 5, "empty node 8.1 out of range: the sentence has 4 words")),
    "empty_node_out_of_place.conllu": (_nodes("2.1", 1), "conllu", Error(2, 2, "empty node 2.1 must come just after word 2")),
    "truncated_utf8.text.txt": ("The caf\u00e9 is open.\n".encode()[:8] + b"\n", "text", Error(2, 1, "not valid UTF-8")),
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_inputs(model, tmp_path, name):
    data, fmt, expected = GENERATED[name]
    path, out = tmp_path / name, tmp_path / "out.conllu"
    path.write_bytes(data)
    result = parse(model, path, out, fmt)
    if isinstance(expected, Error):
        assert_one_error(result, path, expected, out)
    else:
        assert_parsed(result, path, out, fmt, expected)
        assert b"\r" not in out.read_bytes() and not out.read_bytes().startswith(b"\xef\xbb\xbf")  # LF, no BOM


@pytest.mark.slow
def test_a_10000_token_sentence(model, tmp_path):
    """One sentence of 10,000 tokens: a (10,001)² score matrix (400 MB in float32) and O(n²) MST decoding."""
    words = ["the", "cat", "sat", "on", "a", "mat", ",", "and", "\u732b", "\U0001f408", "ran", "."]
    path, out = tmp_path / "long.conllu", tmp_path / "out.conllu"
    path.write_text(_body([words[i % len(words)] for i in range(10_000)]) + "\n", encoding="utf-8")
    assert_parsed(parse(model, path, out), path, out, "conllu", 1)


def test_unwritable_output_paths(model, tmp_path):
    src = BAD / "cycle.conllu"
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for out, reason in (
        (tmp_path / "missing" / "out.conllu", "does not exist"),
        (a_file / "out.conllu", "does not exist"),
        (tmp_path, "is a directory"),
    ):
        result = parse(model, src, out)
        assert result.exit_code == 4, result.output
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"spandep: error: cannot write {out}") and reason in lines[0]
    assert a_file.read_text() == "x"


def test_an_error_midway_leaves_an_existing_output_untouched(model, tmp_path):
    path, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    path.write_bytes((_body(["I", "saw"]) + "\n").encode() * 600 + b"1\tcaf\xe9" + b"\t_" * 8 + b"\n")
    out.write_text("previous result\n")
    result = parse(model, path, out)
    assert_one_error(result, path, Error(2, 600 * 3 + 1, "not valid UTF-8"))
    assert out.read_text() == "previous result\n"
    assert {p.name for p in tmp_path.iterdir()} == {"in.conllu", "out.conllu"}  # no temporary file left


@pytest.mark.parametrize(
    "name, expected",
    [
        ("cycle.conllu", Error(2, 1, "gold heads do not form a tree: cycle among words [2, 3]")),
        ("out_of_range_head.conllu", Error(2, 3, "HEAD 9 out of range 0..3")),
        ("non_integer_head.conllu", Error(2, 2, "HEAD 'root' is not an integer or _")),
    ],
)
def test_evaluate_rejects_gold_heads_that_are_no_tree(tmp_path, name, expected):
    """Gold heads are what ``evaluate`` scores against, so there they must be a tree."""
    path = BAD / name
    assert_one_error(runner.invoke(app, ["evaluate", str(path), str(path)]), path, expected)


def test_standard_input_and_a_directory(model, tmp_path):
    data = (BAD / "rtl.conllu").read_bytes()
    result = runner.invoke(app, ["parse", "-", "--model", str(model)], input=data)
    parsed = tmp_path / "stdout.conllu"
    parsed.write_text(result.stdout)
    assert result.exit_code == 0 and len(list(read_conllu(parsed))) == 2, result.output
    bad = b"1\tI" + b"\t_" * 7 + b"\n"
    assert_one_error(runner.invoke(app, ["parse", "-", "--model", str(model)], input=bad), "<stdin>", Error(2, 1, "expected 10"))
    result = runner.invoke(app, ["evaluate", str(parsed), "-"], input=parsed.read_bytes())
    assert result.exit_code == 0 and "100.00" in result.stdout, result.output
    for command in (["parse", str(tmp_path), "--model", str(model)], ["evaluate", str(tmp_path), "-"]):
        assert_one_error(runner.invoke(app, command), tmp_path, Error(2, 0, "is a directory; give one file"))

