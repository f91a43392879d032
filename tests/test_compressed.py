"""Compressed input (gzip, xz, bzip2), known by its first bytes: every reader reads it as the plain file, the bounds
apply to the decompressed bytes, and a broken archive or a decompression bomb is one line naming the file."""

from __future__ import annotations

import asyncio
import bz2
import gzip
import json
import lzma
import random
import string
from pathlib import Path

import pytest
from conftest import DEV
from typer.testing import CliRunner

import spandep
from spandep.cli.main import app
from spandep.data.compression import RATIO, RATIO_FROM, compression
from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.reading import InputBytes
from spandep.errors import InputFormatError
from spandep.tokenization.inputs import read_input, read_raw_text
from spandep.training.trainer import read_treebank

runner = CliRunner()
COMPRESS = {"gzip": gzip.compress, "xz": lzma.compress, "bzip2": bz2.compress}
PLAIN = DEV.read_bytes()
TEXT = "The dog barked.  It ran away.\n\nA new paragraph, here.\n".encode()


def written(tmp_path: Path, data: bytes, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("what", COMPRESS)
def test_each_compression_is_known_by_its_bytes_not_its_name(tmp_path, what):
    packed = COMPRESS[what](PLAIN)
    assert compression(packed[:10]) == what and compression(PLAIN[:10]) is None
    misnamed = written(tmp_path, packed, "dev.conllu")  # no .gz/.xz/.bz2: the bytes say it
    assert [format_sentence(s) for s in read_conllu(misnamed)] == [format_sentence(s) for s in read_conllu(DEV)]
    assert [s.words for s in read_conllu(InputBytes("data", packed))] == [s.words for s in read_conllu(DEV)]


@pytest.mark.parametrize("what", COMPRESS)
def test_raw_text_keeps_its_offsets_through_compression(tmp_path, what):
    plain, packed = written(tmp_path, TEXT, "a.txt"), written(tmp_path, COMPRESS[what](TEXT), "a.txt.packed")
    assert read_raw_text(packed) == TEXT.decode()
    assert [format_sentence(s) for s in read_input(packed, "text")] == [format_sentence(s) for s in read_input(plain, "text")]


def test_several_streams_are_read_one_after_the_other(tmp_path):
    half = PLAIN.index(b"\n\n") + 2
    path = written(tmp_path, gzip.compress(PLAIN[:half]) + gzip.compress(PLAIN[half:]), "two.gz")
    assert [s.words for s in read_conllu(path)] == [s.words for s in read_conllu(DEV)]


def test_a_text_that_starts_like_a_signature_is_text(tmp_path):
    path = written(tmp_path, b"BZh9 is no bzip2 stream.\n", "bzh.txt")
    assert read_raw_text(path) == "BZh9 is no bzip2 stream.\n"


@pytest.mark.parametrize("what", COMPRESS)
def test_a_cut_archive_is_one_line_naming_the_file(tmp_path, what):
    packed = COMPRESS[what](PLAIN)
    path = written(tmp_path, packed[: len(packed) // 2], "cut.conllu")
    with pytest.raises(InputFormatError, match=rf"^{path}:0: a broken {what} archive \(.*\): is the file complete\?"):
        list(read_conllu(path))


def test_a_corrupt_archive_is_one_line_naming_the_file(tmp_path):
    packed = bytearray(lzma.compress(PLAIN))
    packed[200:260] = bytes(60)
    with pytest.raises(InputFormatError, match=r"broken xz archive"):
        list(read_conllu(written(tmp_path, bytes(packed), "corrupt.xz")))


def test_a_decompression_bomb_stops_past_the_ratio(tmp_path):
    blank = b"\n" * (4 * RATIO_FROM)  # blank lines: no line is too long, no byte is binary, nothing is kept
    packed = bz2.compress(blank)
    assert len(blank) > RATIO * len(packed)
    with pytest.raises(InputFormatError, match=rf"more than {RATIO} times its size \(limit compressed_ratio\)"):
        list(read_conllu(written(tmp_path, packed, "bomb.bz2")))
    rng = random.Random(0)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 9))) for _ in range(400_000)]
    text = "\n".join(" ".join(words[i : i + 12]) for i in range(0, len(words), 12)) + "\n"  # text's ratio, past RATIO_FROM
    assert len(text) > 2 * RATIO_FROM and read_raw_text(InputBytes("data", lzma.compress(text.encode()))) == text


def test_the_bounds_apply_to_the_decompressed_bytes(tmp_path):
    letters = random.Random(0).choices(string.ascii_letters.encode(), k=1_100_000)  # one line of text's ratio
    long_line = written(tmp_path, gzip.compress(bytes(letters) + b"\n"), "long.gz")
    with pytest.raises(InputFormatError, match=r"^.*long.gz:1: line longer than .* \(limit line_chars\)"):
        read_raw_text(long_line)
    binary = written(tmp_path, lzma.compress(bytes(range(32)) * 100), "binary.xz")
    with pytest.raises(InputFormatError, match=r"binary.xz:1: binary data, not text"):
        read_raw_text(binary)
    twice = written(tmp_path, gzip.compress(gzip.compress(TEXT)), "twice.gz")
    with pytest.raises(InputFormatError, match=r"twice.gz:1: is gzip-compressed twice: decompress it once"):
        read_raw_text(twice)


def test_evaluate_reads_compressed_files_and_names_a_broken_one(tmp_path):
    gold = written(tmp_path, lzma.compress(PLAIN), "gold.conllu.xz")
    ok = runner.invoke(app, ["evaluate", str(gold), str(DEV), "--json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["las"] == 100.0 and json.loads(ok.output)["words"] == 40, ok.output
    cut = written(tmp_path, lzma.compress(PLAIN)[:300], "cut.conllu.xz")
    broken = runner.invoke(app, ["evaluate", str(cut), str(DEV)])
    assert broken.exit_code == 2 and broken.output.startswith(f"spandep: error: {cut}:0: a broken xz archive")
    assert broken.output.count("\n") == 1


def test_parse_train_and_the_api_read_compressed_files(tmp_path, tiny_models):
    model = tiny_models["biaffine"]
    packed = written(tmp_path, bz2.compress(PLAIN), "dev.conllu.bz2")
    out, plain_out = tmp_path / "out.conllu", tmp_path / "plain.conllu"
    for source, target in ((packed, out), (DEV, plain_out)):
        result = runner.invoke(app, ["parse", str(source), "-o", str(target), "--model", str(model)])
        assert result.exit_code == 0, result.output
    assert out.read_text() == plain_out.read_text()
    assert [s.words for s in read_treebank(str(packed), "conllu")] == [s.words for s in read_treebank(str(DEV), "conllu")]
    nlp = spandep.load(model)
    assert [w.head_id for w in nlp.parse_file(packed).words] == [w.head_id for w in nlp.parse_file(DEV).words]
    text = written(tmp_path, gzip.compress(TEXT), "a.txt.gz")
    assert nlp.parse_file(text, "text").text == TEXT.decode()


def test_the_service_reads_a_compressed_upload(tiny_models):
    from spandep.serve.service import ParseRequest, Service, ServiceSettings

    name = str(tiny_models["biaffine"])
    service = Service.load([name], ServiceSettings(), threads=1)
    service.start()
    try:
        packed = asyncio.run(service.parse(ParseRequest(gzip.compress(PLAIN), name, "conllu")))
        plain = asyncio.run(service.parse(ParseRequest(PLAIN, name, "conllu")))
    finally:
        service.stop()
    assert [s.words for s in packed] == [s.words for s in plain]
