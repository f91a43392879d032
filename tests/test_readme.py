"""README.md as tested documentation: every fenced code block runs.

``bash`` blocks run with ``bash -euo pipefail`` and ``python`` blocks with this interpreter, in a scratch copy of the
repository's root (its files linked, not copied; ``../shared`` beside it), with ``spandep`` on the PATH and the
shipped model. Blocks run in order in one scratch folder, so a later block may use what an earlier one wrote. The
first block (``make demo``, ``make test``) is what CI runs itself: the test checks that ``.ci/run`` runs each of its
commands instead. A fenced block without a language is an error: say ``text`` for one that is not code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.M | re.S)
RUNNERS = {"bash": ["bash", "-euo", "pipefail", "-c"], "python": [sys.executable, "-c"]}
SKIPPED_ENTRIES = {".git", ".venv", "runs", ".pytest_cache", ".hypothesis", "demo_out"}


def code_blocks() -> list[tuple[int, str, str]]:
    """``(line, language, code)`` of every fenced block of the README."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]


def test_every_block_has_a_language():
    untagged = [line for line, language, _ in code_blocks() if not language]
    assert not untagged, f"README.md: fenced blocks without a language at lines {untagged} (use text for non-code)"


def test_ci_runs_the_first_block():
    _, language, code = code_blocks()[0]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.split("#")[0].strip() for line in code.splitlines() if line.split("#")[0].strip()]
    assert language == "bash" and commands
    assert all(command in ci for command in commands), f".ci/run must run {commands}"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose entries link to the repository root's (outputs land in the folder), ``../shared`` beside it."""
    root = tmp_path_factory.mktemp("readme")
    work = root / "repo"
    work.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in SKIPPED_ENTRIES:
            (work / entry.name).symlink_to(entry)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (root / "shared").symlink_to(shared)
    return work


@pytest.mark.slow
def test_readme_blocks_run(scratch):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "OMP_NUM_THREADS": "1"}
    env.pop("SPANDEP_MODEL", None)
    blocks = [(line, language, code) for line, language, code in code_blocks()[1:] if language != "text"]
    assert blocks
    for line, language, code in blocks:
        assert language in RUNNERS, f"README.md:{line}: no runner for a {language!r} block (bash, python or text)"
        done = subprocess.run([*RUNNERS[language], code], cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"README.md:{line} ({language} block) failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, f"README.md:{line}: a traceback on stderr:\n{done.stderr[-3000:]}"
