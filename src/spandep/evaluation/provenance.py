"""The stamp of a result file: its schema, the command that made it, this machine and the spandep that ran it.

Every JSON report a spandep command writes for keeping (``spandep evaluate --json``, ``spandep tune --out``) and every
result file of the benchmarks (``benchmarks/suite/record.py`` imports these) carries the same fields, so that a figure
names what produced it and where.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from spandep.version import __version__

__all__ = ["EVALUATE_SCHEMA", "TUNE_SCHEMA", "checkout", "git", "machine", "stamp"]

EVALUATE_SCHEMA = "spandep-evaluate/1"  # the report of `spandep evaluate --json`
TUNE_SCHEMA = "spandep-tune/1"  # a dev sweep of `spandep tune --out`
SOURCE = Path(__file__).resolve().parents[3]  # the repository holding src/spandep, when spandep runs from a checkout


def git(*args: str, root: Path = SOURCE) -> str:
    """Output of a git command in the checkout ``root`` (default: the one spandep runs from); '' when ``root`` is no
    checkout (spandep runs as an installed package) or git is unavailable."""
    if not (root / ".git").exists():
        return ""
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def checkout(root: Path = SOURCE) -> dict[str, Any]:
    """``git_commit`` and ``git_dirty`` (tracked files changed) of the checkout ``root`` (default: the one spandep runs
    from). Without one (an installed package, or a copy of the working tree without ``.git`` such as a lent GPU
    machine) the commit is the one named by the environment variable SPANDEP_COMMIT, else None, and whether the code
    differs from it is unknown (None)."""
    head = git("rev-parse", "HEAD", root=root)
    if not head:
        return {"git_commit": os.environ.get("SPANDEP_COMMIT") or None, "git_dirty": None}
    return {"git_commit": head, "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no", root=root))}


def machine(device: str = "cpu") -> dict[str, Any]:
    """This machine: CPU model (from /proc/cpuinfo), cores, architecture and Python version, and the GPU's name
    when ``device`` is a CUDA one."""
    cpu = None
    if Path("/proc/cpuinfo").is_file():
        names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")]
        cpu = names[0] if names else None
    info = {"cpu": cpu, "cores": os.cpu_count(), "arch": platform.machine(), "python": platform.python_version()}
    if device.startswith("cuda"):
        import torch

        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info


def stamp(report: dict[str, Any], schema: str, command: str, device: str = "cpu") -> dict[str, Any]:
    """``report`` as a result file: its ``schema``, the ``command`` that made it, this machine, spandep's version and
    checkout first. The report's own fields win, so that stamping a stamped report again (a script that keeps a spandep
    command's report) changes none of them."""
    about = {"schema": schema, "command": command, "machine": machine(device), "spandep_version": __version__, **checkout()}
    return {**about, **report}
