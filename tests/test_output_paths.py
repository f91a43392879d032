"""Where ``-o`` leads decides how it is written: a regular file (or nothing) atomically, a symlink's target
atomically with the link kept, a device, FIFO or ``-`` as a stream with no temporary file; temporary files are
removed on failures, on SIGTERM, and (left by ``kill -9``) by the next write. Nothing here writes under /dev: a
device is only ``os.stat``-ed, the stream path is tested with a FIFO."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from spandep.data.output import remove_stale_temporaries, write_blocks, write_bytes, writes_atomically
from spandep.errors import OutputError

SRC = Path(__file__).resolve().parent.parent / "src"
STUCK = 300  # seconds: a bound on a process that hangs, never reached by one that works, however loaded the machine


def temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_only_regular_files_and_new_paths_are_written_atomically(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "file").write_text("x")
    assert writes_atomically(None) and writes_atomically(os.stat(tmp_path / "file").st_mode)
    assert not writes_atomically(os.stat(fifo).st_mode)
    assert not writes_atomically(os.stat("/dev/null").st_mode)  # a character device: read-only look, never written


def read_in_background(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


def test_a_fifo_is_written_as_a_stream(tmp_path):
    fifo = tmp_path / "out.conllu"
    os.mkfifo(fifo)
    reader, got = read_in_background(fifo)
    write_blocks(["a\n", "b\n"], fifo)
    reader.join(10)
    assert got == [b"a\nb\n"]
    assert Path(fifo).is_fifo() and os.listdir(tmp_path) == ["out.conllu"]  # still a FIFO; no temporary file


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    target, link, chain = tmp_path / "target.conllu", tmp_path / "link.conllu", tmp_path / "chain.conllu"
    target.write_text("old\n")
    link.symlink_to(target.name)
    chain.symlink_to(link)
    write_blocks(["new\n"], chain)
    assert chain.is_symlink() and link.is_symlink() and target.read_text() == "new\n"
    dangling = tmp_path / "dangling.conllu"
    dangling.symlink_to(tmp_path / "created.conllu")
    write_blocks(["x\n"], dangling)
    assert dangling.is_symlink() and (tmp_path / "created.conllu").read_text() == "x\n"
    assert temporaries(tmp_path) == []


def test_a_link_to_a_fifo_writes_the_fifo(tmp_path):
    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to(fifo)
    reader, got = read_in_background(fifo)
    write_blocks(["a\n"], link)
    reader.join(10)
    assert got == [b"a\n"] and link.is_symlink() and fifo.is_fifo()


def test_a_path_through_an_open_descriptor_is_written_in_place(tmp_path):
    """As ``-o /dev/stdout`` with stdout a pipe, or redirected to a file (``> out.txt``): never replaced."""
    read_end, write_end = os.pipe()
    write_blocks(["a\n"], f"/proc/self/fd/{write_end}")
    os.close(write_end)
    assert os.read(read_end, 100) == b"a\n"
    os.close(read_end)
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        inode = os.stat(out).st_ino
        write_blocks(["b\n"], f"/proc/self/fd/{fh.fileno()}")
    assert out.read_text() == "b\n" and os.stat(out).st_ino == inode and temporaries(tmp_path) == []


def test_dash_is_standard_output(capsys, tmp_path):
    write_blocks(["a\n"], "-")
    assert capsys.readouterr().out == "a\n"


def failing_blocks():
    yield "a\n"
    raise RuntimeError("model crashed")


def test_failures_remove_the_temporary_file(tmp_path):
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_text("old\n")
    link.symlink_to(target)
    for path in (link, tmp_path / "new"):
        with pytest.raises(RuntimeError):
            write_blocks(failing_blocks(), path)
    assert target.read_text() == "old\n" and link.is_symlink() and temporaries(tmp_path) == []
    with pytest.raises(OutputError, match="is a directory"):
        write_blocks(["a\n"], tmp_path)


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    stale = tmp_path / f".out.conllu.spandep-{host}-{dead.pid}-abc.tmp"
    alive = tmp_path / f".out.conllu.spandep-{host}-{os.getppid()}-def.tmp"  # a running writer's: kept
    elsewhere = tmp_path / f".out.conllu.spandep-another-host-{dead.pid}-ghi.tmp"  # that PID is another machine's
    other = tmp_path / ".notes.tmp"  # not ours: kept
    for p in (stale, alive, elsewhere, other):
        p.write_text("partial")
    write_blocks(["a\n"], tmp_path / "out.conllu")
    assert not stale.exists() and alive.exists() and elsewhere.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path) == []


@pytest.mark.slow
def test_sigterm_removes_the_temporary_file_and_kill_9_leaves_one_the_next_run_removes(tmp_path):
    """The parse waits on its input (a pipe) with its temporary output open, as a long parse would."""
    from conftest import write_config

    from spandep.storage.model_io import save_model
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    out, model = tmp_path / "out.conllu", tmp_path / "model"
    save_model(Trainer(load_config(write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm"))).model, model)
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "spandep", "parse", "-", "-f", "tokens", "-o", str(out), "--model", str(model)]
    for sig, code in ((signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL)):
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        # the event: the temporary output exists (the model is loaded and parsing waits on its input); the bounds
        # only end a process that is stuck, far above the seconds each step takes on a busy machine
        deadline = time.monotonic() + STUCK
        while not temporaries(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None and temporaries(tmp_path), "no temporary output while parsing"
        proc.send_signal(sig)
        assert proc.wait(STUCK) == code
        proc.stdin.close()
        assert len(temporaries(tmp_path)) == (0 if sig == signal.SIGTERM else 1) and not out.exists()
    result = subprocess.run(command, input=b"I saw her\n", capture_output=True, env=env)
    assert result.returncode == 0, result.stderr.decode()
    assert temporaries(tmp_path) == [] and out.read_text().count("\n\n") == 1  # kill -9's file removed


def test_bytes_are_written_like_text(tmp_path):
    """write_bytes (the reliability diagram's PNG) takes the same paths: atomically through a symlink, in place to a
    FIFO, an OutputError for a missing folder."""
    png = bytes(range(256)) + b"\r\n\x00"
    target, link = tmp_path / "plot.png", tmp_path / "link.png"
    target.write_bytes(b"old")
    link.symlink_to(target.name)
    write_bytes(png, link)
    assert link.is_symlink() and target.read_bytes() == png and temporaries(tmp_path) == []
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    reader, got = read_in_background(fifo)
    write_bytes(png, fifo)
    reader.join(10)
    assert got == [png] and fifo.is_fifo()
    with pytest.raises(OutputError, match="does not exist"):
        write_bytes(png, tmp_path / "no" / "plot.png")
