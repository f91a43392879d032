"""The command line's contract with a new user, checked case by case on a fresh clone (docs/robustness.md).

Each case runs ``spandep`` as a child process with the shipped model and the tiny files under ``tests/fixtures`` in
a temporary folder, prints its exit code and the first line of its stderr, and checks: the documented exit code (0 ok,
2 bad input, config or option, 3 model, 4 output), one message line and no traceback, no temporary file left behind,
and that no device, FIFO or link given as ``-o`` was replaced. The Ray cases call the Ray Data batch function in this
process and check it raises what the Python API raises for the same tokens. Exit status 1 if any case fails.

    .venv/bin/python benchmarks/scripts/robustness/user_contract.py

Writing to ``/dev/null`` and ``/dev/full`` is only tried when ``spandep.data.output`` classes them as streams (so a
broken build cannot replace them, even as root); both are checked to be the same device afterwards.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "src"))
FIXTURES = ROOT / "tests" / "fixtures"
EXCERPT = FIXTURES / "en_ewt_excerpt.conllu"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1", "SPANDEP_MODEL": ""}
SPANDEP = [sys.executable, "-m", "spandep"]
SENTENCES = EXCERPT.read_bytes().count(b"\n\n")  # blank lines after sentences: a parse of EXCERPT has as many
ROW = "\t".join(["{}", "{}", "_", "_", "_", "_", "_", "_", "_", "_"])

failures: list[str] = []


def words(*forms: str, extra: dict[int, str] | None = None) -> bytes:
    """A CoNLL-U sentence of ``forms``, with ``extra`` ID lines (multiword tokens, empty nodes) before word N."""
    lines = []
    for i, form in enumerate(forms, 1):
        if extra and i in extra:
            lines.append(ROW.format(extra[i], "x"))
        lines.append(ROW.format(i, form))
    if extra and len(forms) + 1 in extra:
        lines.append(ROW.format(extra[len(forms) + 1], "x"))
    return ("\n".join(lines) + "\n\n").encode()


def snapshot(path: Path) -> tuple[int, int, int, bool]:
    info = os.lstat(path)
    return info.st_ino, stat.S_IFMT(info.st_mode), info.st_rdev, path.is_symlink()


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.tmp")]


def run(args: list[str], cwd: Path, stdin: bytes | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*SPANDEP, *args], cwd=cwd, input=stdin, capture_output=True, env=ENV, timeout=timeout)


def case(name: str, work: Path, args: list[str], code: int, says: str = "", stdin: bytes | None = None,
         keep: list[Path] = (), check: Callable[[subprocess.CompletedProcess], str | None] | None = None) -> None:
    """Run ``spandep ARGS``; expect exit ``code``, a first stderr line containing ``says``, no traceback, no
    temporary file, every path of ``keep`` unchanged (inode, type, device, link), and ``check`` to return None."""
    before = {p: snapshot(p) for p in keep}
    result = run(args, work, stdin)
    stderr = result.stderr.decode(errors="replace")
    first = next((line for line in stderr.splitlines() if line.strip()), "")
    problems = []
    if result.returncode != code:
        problems.append(f"exit {result.returncode}, expected {code}")
    if "Traceback" in stderr:
        problems.append("traceback")
    if says and says not in first:
        problems.append(f"message lacks {says!r}")
    if temporaries(work):
        problems.append(f"temporary files left: {[p.name for p in temporaries(work)]}")
    problems += [f"{p} was replaced" for p in keep if snapshot(p) != before[p]]
    if check is not None and (problem := check(result)):
        problems.append(problem)
    report(name, str(result.returncode), first, problems)


def report(name: str, code: str, line: str, problems: list[str]) -> None:
    print(f"{'ok  ' if not problems else 'FAIL'} {name}: exit {code}: {line or '(no error line)'}")
    for problem in problems:
        print(f"       {problem}")
        failures.append(f"{name}: {problem}")


def output_cases(work: Path) -> None:
    """Part 1: where -o leads."""
    from spandep.data.output import writes_atomically

    parse = ["parse", str(EXCERPT), "-o"]
    for device, code, says in ((Path("/dev/null"), 0, ""), (Path("/dev/full"), 4, "No space left on device")):
        if not device.exists() or writes_atomically(os.stat(device).st_mode):
            report(f"-o {device}", "-", "", [] if not device.exists() else ["would be written atomically: not run"])
            continue
        case(f"-o {device} (a character device)", work, [*parse, str(device)], code, says, keep=[device])
    case("-o /dev/stdout (a link to this process's stdout)", work, [*parse, "/dev/stdout"], 0, keep=[Path("/dev/stdout")],
         check=lambda r: None if r.stdout.count(b"\n\n") == SENTENCES else "the parse did not reach stdout")
    fifo = work / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    case("-o FIFO", work, [*parse, str(fifo)], 0, keep=[fifo])
    reader.join(30)
    report("  the FIFO's reader got the parse", "-", "", [] if got and got[0].count(b"\n\n") == SENTENCES else ["nothing read"])
    target, link = work / "target.conllu", work / "link.conllu"
    target.write_text("old\n")
    link.symlink_to(target)
    case("-o a user's symlink", work, [*parse, str(link)], 0, keep=[link],
         check=lambda r: None if target.read_text().count("\n\n") == SENTENCES else "the link's target was not written")
    case("-o a missing folder", work, [*parse, str(work / "missing" / "out.conllu")], 4, "does not exist")
    kill_cases(work)


def kill_cases(work: Path) -> None:
    """SIGTERM during a parse leaves no temporary file; kill -9 leaves one that the next write there removes."""
    out = work / "killed.conllu"
    command = [*SPANDEP, "parse", "-", "-f", "tokens", "-o", str(out)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen(command, cwd=work, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
        deadline = time.monotonic() + 120
        while not temporaries(work) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        started = bool(temporaries(work))
        proc.send_signal(sig)
        code = proc.wait(60)
        proc.stdin.close()
        stderr = proc.stderr.read().decode(errors="replace")
        left = temporaries(work)
        problems = [] if started else ["no temporary output seen while parsing"]
        problems += ["traceback"] if "Traceback" in stderr else []
        if sig == signal.SIGTERM:
            problems += [f"exit {code}, expected 143"] if code != 143 else []
            problems += [f"temporary files left: {left}"] if left else []
        report(f"kill -{sig.name} during a parse", str(code), f"{len(left)} temporary file(s) left", problems)
    case("  the next parse into that folder", work, ["parse", "-", "-f", "tokens", "-o", str(out)], 0, stdin=b"I saw her .\n")


def config_cases(work: Path) -> None:
    """Part 2: training configs, checked before any data is read."""
    tables = {
        "data": f'train = "{FIXTURES / "en_ewt_train_40.conllu"}"\ndev = "{EXCERPT}"',
        "encoder": 'type = "bilstm"\nword_dim = 16\nchar_dim = 8\nchar_out = 16\nhidden = 16\nlayers = 1',
        "model": "arc_mlp = 32\nrel_mlp = 16",
        "training": 'output = "run"\nepochs = 1',
    }
    for table, change, says in (
        ("training", 'epochs = "ten"', "[training] epochs must be an int ≥ 1, not 'ten'"),
        ("training", "epochs = -3", "[training] epochs must be an int ≥ 1, not -3"),
        ("training", "epochs = 1.5", "[training] epochs must be an int ≥ 1, not 1.5"),
        ("training", 'lr = "fast"', "[training] lr must be a finite number > 0"),
        ("training", 'threads = "x"', "[training] threads must be an int ≥ 0"),
        ("training", "batch_tokens = -5", "[training] batch_tokens must be an int ≥ 1"),
        ("training", 'device = "gpu"', "[training] device must be cpu, cuda, cuda:N or auto"),
        ("data", 'train = ["a.conllu", "b.conllu"]', "[data] train must be a path in quotes"),
        ("encoder", 'type = "transformer"\nmodel = "bert-base-uncased"', "is neither a known base (all-MiniLM-L6-v2"),
    ):
        keys = {line.split(" =")[0] for line in change.splitlines()}
        given = dict(tables, **{table: change if table == "encoder" else "\n".join(
            [change, *(line for line in tables[table].splitlines() if line.split(" =")[0] not in keys)])})
        config = work / "c.toml"
        config.write_text("".join(f"[{name}]\n{body}\n\n" for name, body in given.items()))
        start = time.monotonic()
        case(f"config {change.splitlines()[-1]}", work, ["train", str(config)], 2, says,
             check=lambda r: "took over 20 s" if time.monotonic() - start > 20 else ("trained" if (work / "run").exists() else None))


def input_cases(work: Path) -> None:
    """Part 2: options and inputs."""
    for option in (["--lam", "nan"], ["--threads", "-1"], ["--batch-tokens", "0"], ["--k", "0"], ["--workers", "0"],
                   ["--device", "gpu"]):
        case(f"parse {' '.join(option)}", work, ["parse", str(EXCERPT), *option], 2, option[0])
    case("train --epochs 0", work, ["train", "c.toml", "--epochs", "0"], 2, "--epochs must be an int ≥ 1")
    case("parse - (stdin)", work, ["parse", "-"], 0, stdin=EXCERPT.read_bytes(),
         check=lambda r: None if r.stdout.count(b"\n\n") == SENTENCES else "no parse on stdout")
    case("evaluate GOLD - (stdin)", work, ["evaluate", str(EXCERPT), "-"], 0, stdin=EXCERPT.read_bytes(),
         check=lambda r: None if b"100.00" in r.stdout else "no scores on stdout")
    case("parse a directory", work, ["parse", str(work)], 2, "is a directory; give one file")
    cr = work / "cr.conllu"
    cr.write_bytes(EXCERPT.read_bytes().replace(b"\n", b"\r"))
    case("parse CR-only line ends", work, ["parse", str(cr)], 0, check=lambda r: None if r.stdout.count(b"\n\n") == SENTENCES else "not parsed")
    for name, data, fmt in (("UTF-16 with BOM", "I saw her .\n".encode("utf-16"), "tokens"),
                            ("UTF-16 without BOM", words("I", "saw").decode().encode("utf-16-le"), "conllu")):
        path = work / f"{name.replace(' ', '_')}.txt"
        path.write_bytes(data)
        case(f"parse {name}", work, ["parse", str(path), "-f", fmt], 2, "looks like UTF-16; convert it to UTF-8 with iconv")
    for name, data, says in (
        ("multiword token 3-2 (reversed)", words("a", "b", "c", "d", extra={3: "3-2"}), "multiword token 3-2"),
        ("multiword token 3-5 in 4 words", words("a", "b", "c", "d", extra={3: "3-5"}), "goes beyond the sentence's 4 words"),
        ("multiword tokens 1-2 and 2-3", words("a", "b", "c", extra={1: "1-2", 2: "2-3"}), "overlaps"),
        ("empty node 8.1 in 4 words", words("a", "b", "c", "d", extra={5: "8.1"}), "empty node 8.1 out of range"),
    ):
        path = work / "nodes.conllu"
        path.write_bytes(data)
        case(f"parse {name}", work, ["parse", str(path)], 2, says)


def ray_cases() -> None:
    """Part 3: the Ray Data batch function raises what the Python API raises for the same tokens."""
    import numpy as np

    import spandep
    from spandep.integrations.ray_data import RayParser
    from spandep.api import ModelSpec

    parser, nlp = RayParser(ModelSpec.resolve()), spandep.load()
    for tokens in ([1, None, "x"], "I saw her"):
        column = np.empty(1, dtype=object)
        column[0] = tokens
        errors = []
        for call in (lambda: parser({"tokens": column}), lambda: nlp.parse_tokens([tokens, ["a"]])):
            try:
                call()
                errors.append("no error")
            except (TypeError, ValueError) as exc:
                errors.append(f"{type(exc).__name__}: {str(exc).split(': ', 1)[1]}")
        same = errors[0] == errors[1] and errors[0] != "no error"
        report(f"Ray tokens {tokens!r}", "-", errors[0], [] if same else [f"the API says {errors[1]}"])


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="spandep-user-contract-") as folder:
        work = Path(folder)
        output_cases(work)
        config_cases(work)
        input_cases(work)
    ray_cases()
    print(f"\n{'all cases passed' if not failures else f'{len(failures)} problem(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
