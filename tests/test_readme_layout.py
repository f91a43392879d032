"""README's "Layout" against the tree: every top-level folder of src/spandep is described, nothing described is
missing, and every top-level module is named."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "spandep"


def layout() -> list[str]:
    """The lines of the fenced block of README's "Layout" section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Layout"):]
    return section[section.index("```text") + len("```text"):].split("```")[0].strip("\n").splitlines()


def described(lines: list[str]) -> set[str]:
    """The entries of ``src/spandep/`` the block describes: the first word of each line indented by two spaces."""
    return {m.group(1) for line in lines if (m := re.match(r"  (\S+)", line))}


def test_every_top_level_folder_is_described_and_nothing_described_is_missing():
    entries = described(layout())
    folders = {p.name + "/" for p in SOURCE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert {e for e in entries if e.endswith("/")} == folders
    assert [e for e in entries if not (SOURCE / e.rstrip("/")).exists()] == []


def test_every_top_level_module_is_named():
    block = "\n".join(layout())
    modules = {p.name for p in SOURCE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert [m for m in sorted(modules) if not re.search(rf"\b{re.escape(m)}\b", block)] == []


def test_the_repository_folders_it_names_exist():
    top = {m.group(1) for line in layout() if (m := re.match(r"(\S+/)\s", line))} - {"src/spandep/"}
    assert top and [t for t in sorted(top) if not (REPO / t).is_dir()] == []
