"""``spandep parse`` used as a careless user would (issue 43): every case a real process, bounded in time and
memory, on loopback-free local files; one line on stderr and the documented exit status each time.

Timing: no test measures how fast the machine is. A bound below is a generous ceiling on a stuck process (the
case's reason is in its comment), and a stop is sent only once a file says parsing has started.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DEV, write_config

SRC = Path(__file__).resolve().parent.parent / "src"
ENV = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
MEMORY = 4 * 1024**3  # an address-space cap: a reader that grew without bound would fail here, not fill the machine
STUCK = 120  # seconds: far above any case here (each needs seconds), only to end a process that hangs


def limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def as_from_a_terminal() -> None:
    """``limited_memory``, and SIGINT at its default as in a process a terminal starts (a test run started in the
    background of a shell without job control inherits it ignored, and an ignored SIGINT survives ``exec``)."""
    limited_memory()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spandep(*args: str, given: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spandep", *args], input=given, capture_output=True, env=ENV, timeout=STUCK,
        preexec_fn=limited_memory,
    )


def one_error(result: subprocess.CompletedProcess, code: int, *parts: str) -> str:
    lines = result.stderr.decode().splitlines()
    assert result.returncode == code and len(lines) == 1 and lines[0].startswith("spandep: error: "), result.stderr.decode()
    assert all(part in lines[0] for part in parts), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny BiLSTM model trained for one epoch (seconds)."""
    from spandep.storage.model_io import save_model
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("hostile")
    folder = root / "model"
    save_model(Trainer(load_config(write_config(root / "c.toml", root / "run", "bilstm", epochs=1))).model, folder)
    return folder


@pytest.fixture
def text(tmp_path: Path) -> Path:
    path = tmp_path / "plain.txt"
    path.write_text("I saw her.\nShe left early today.\n")
    return path


@pytest.mark.slow
def test_version_is_the_package_metadata():
    from importlib.metadata import version

    from spandep import __version__

    done = spandep("--version")
    assert done.returncode == 0 and done.stdout.decode() == f"spandep {version('spandep')}\n" and not done.stderr
    assert version("spandep") == __version__  # the two cannot drift apart


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["parse", "x", "--foo"], "spandep: error: no such option: --foo (spandep parse --help)"),
        (["parse"], "spandep: error: missing argument 'input' (spandep parse --help)"),
        (["prase"], "spandep: error: no such command 'prase'. Did you mean 'parse'? (spandep --help)"),
    ],
)
def test_usage_errors_are_one_line(args, message):
    done = spandep(*args)
    assert done.returncode == 2 and done.stderr.decode() == message + "\n" and not done.stdout


@pytest.mark.slow
def test_help_stays_readable():
    done = spandep("parse", "--help")
    assert done.returncode == 0 and "--input-format" in done.stdout.decode() and not done.stderr


@pytest.mark.slow
def test_checks_come_before_the_model(tmp_path, text):
    """A model folder that does not exist is never reached (exit 3): each of these is found first."""
    nowhere = ["--model", str(tmp_path / "nowhere")]
    one_error(spandep("parse", str(text), "--k", "1000000000", *nowhere), 2, "--k must be an int in [1, 64]")
    one_error(spandep("parse", str(text), "-f", "tokens", "-o", str(tmp_path / "no" / "out"), *nowhere), 4, "does not exist")
    readonly = tmp_path / "readonly.conllu"
    readonly.write_text("keep me\n")
    readonly.chmod(0o444)
    one_error(spandep("parse", str(text), "-f", "tokens", "-o", str(readonly), *nowhere), 4, "read-only")
    assert readonly.read_text() == "keep me\n"
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes(text.read_text().encode("utf-16"))
    one_error(spandep("parse", str(utf16), "-f", "text", *nowhere), 2, "looks like UTF-16")
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(DEV.read_bytes() + b"\xff\n")
    one_error(spandep("parse", str(bad), *nowhere), 2, "not valid UTF-8")


@pytest.mark.slow
def test_plain_text_as_conllu_gets_the_hint(tmp_path, text):
    one_error(spandep("parse", str(text), "--model", str(tmp_path / "nowhere")), 2, "--input-format text")


@pytest.mark.slow
def test_binary_input_is_named_binary(tmp_path):
    nowhere = ["--model", str(tmp_path / "nowhere")]
    one_error(spandep("parse", sys.executable, *nowhere), 2, "not text")  # an ELF file (or on another system, binary)
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)) * 40)
    line = one_error(spandep("parse", str(blob), "-f", "text", *nowhere), 2, "binary data")
    assert "UTF-16" not in line


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "conllu"])
def test_dev_zero_is_refused_in_bounded_memory(model, fmt):
    """An endless input with no line end: the process stays under the address-space cap (a read of it whole would
    not) and ends with one line."""
    one_error(spandep("parse", "/dev/zero", "-f", fmt, "--model", str(model)), 2, "/dev/zero:1:")


@pytest.mark.slow
def test_an_endless_line_is_refused_after_line_chars(model):
    """Standard input (no check before the model): a line with no end, 2 MB of it, refused at line_chars."""
    one_error(spandep("parse", "-", "-f", "tokens", "--model", str(model), given=b"a " * 1_000_000), 2, "<stdin>:1:", "limit line_chars")


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly(model, tmp_path):
    many = tmp_path / "many.txt"
    many.write_text("I saw her .\n" * 3000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "spandep", "parse", str(many), "-f", "tokens", "--model", str(model)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, preexec_fn=limited_memory,
    )
    assert proc.stdout.readline()  # parsing has started: the reader takes one line and goes away, as `| head -1`
    proc.stdout.close()
    assert proc.wait(STUCK) == 0 and proc.stderr.read() == b""


def damaged_copies(model: Path, root: Path) -> list[Path]:
    import json
    import shutil

    folders = []
    for name in ("truncated", "garbled", "mismatched"):
        folder = root / name
        shutil.copytree(model, folder)
        folders.append(folder)
    weights = (model / "model.safetensors").read_bytes()
    (root / "truncated" / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    (root / "garbled" / "model.safetensors").write_bytes(b"\xff" * 64 + weights[64:])
    config = json.loads((model / "config.json").read_text())
    config["model"]["arc_mlp"] *= 2  # the weights were trained at the other size
    (root / "mismatched" / "config.json").write_text(json.dumps(config))
    return folders


@pytest.mark.slow
def test_damaged_model_folders_are_one_line(model, tmp_path, text):
    for folder in damaged_copies(model, tmp_path):
        one_error(spandep("parse", str(text), "-f", "tokens", "--model", str(folder)), 3, str(folder))


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "workers"), [
    (signal.SIGTERM, 143, "1"), (signal.SIGINT, 130, "1"), (signal.SIGTERM, 143, "2"), (signal.SIGINT, 130, "2"),
])
def test_a_stop_ends_the_parse_midway_and_removes_the_partial_output(model, tmp_path, sig, code, workers):
    """Parsing has started once the temporary output holds a sentence (an event, not a time); the stop (SIGTERM to
    the process, Ctrl-C to its process group as a terminal sends it) then ends it with its status, the partial
    file removed, no worker left and nothing on stderr."""
    out = tmp_path / "out" / "parsed.conllu"
    out.parent.mkdir()
    many = tmp_path / "many.txt"
    many.write_text("I saw her and she saw me .\n" * 200_000)  # far more than parses before the stop
    proc = subprocess.Popen(
        [sys.executable, "-m", "spandep", "parse", str(many), "-f", "tokens", "-o", str(out), "--model", str(model),
         "--workers", workers],
        stderr=subprocess.PIPE, env=ENV, preexec_fn=as_from_a_terminal, start_new_session=True,
    )
    deadline = time.monotonic() + STUCK
    while proc.poll() is None and time.monotonic() < deadline and not any(
        (out.parent / name).stat().st_size for name in temporaries(out.parent)
    ):
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()
    os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)
    deadline = time.monotonic() + STUCK
    status = proc.wait(STUCK)
    assert (status, proc.stderr.read()) == (code, b"")  # both shown when it fails
    assert temporaries(out.parent) == [] and not out.exists()
    while running_in_session(proc.pid) and time.monotonic() < deadline:  # multiprocessing's resource tracker ends
        time.sleep(0.1)  # a moment after the process, once its pipe closes
    assert running_in_session(proc.pid) == []  # no worker left running


def running_in_session(session: int) -> list[str]:
    """The processes still running in ``session`` (not zombies, which have ended)."""
    listed = subprocess.run(["ps", "-o", "stat=,pid=,args=", "-s", str(session)], capture_output=True, text=True).stdout
    return [line for line in listed.splitlines() if not line.lstrip().startswith("Z")]
