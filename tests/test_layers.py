"""The layering of ``src/spandep`` as docs/design.md draws it, kept true: every import (nested and typing-only ones
included) runs down the chain of top-level packages or sideways within a layer without a cycle; no source file is
over 450 lines; no code branches over a type's registered name (``== "span"``, ``model_type ==``): a type decides
for itself (``Parser``, ``WordEncoder``, ``LinkScorer`` methods) and the registries build it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "spandep"
DESIGN = REPO / "docs" / "design.md"
MAX_LINES = 450
FRONT_DOOR = ("__init__", "__main__")  # the package's own modules: beside the last layer
DISPATCHED = ("PARSERS", "ENCODERS", "ADAPTERS", "LINKERS")  # registries of types the code must not branch on by name

# Imports that run up the chain today, each being moved by issue 44 item 3; remove an entry once its import is gone
# (the test fails on an entry that no longer matches anything, so the list only shrinks).
ALLOWED: set[tuple[str, str]] = set()  # (file, the unit it may import against the order): none left


def layer_chain(design: Path = DESIGN) -> list[list[str]]:
    """The layers of docs/design.md's chain (its first fenced block, one line of ``→``), lowest first, each a list of
    the top-level package or module names in it (``/`` between names of one layer)."""
    lines = design.read_text(encoding="utf-8").splitlines()
    line = lines[next(i for i, line in enumerate(lines) if line.startswith("```")) + 1]
    return [[name.strip() for name in layer.split("/")] for layer in line.split("→")]


@dataclass(frozen=True)
class Problem:
    """One breach of the layering, as ``path: message``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def _unit(rel: Path) -> str:
    """The top-level package or module a file of the package belongs to."""
    return rel.parts[0].removesuffix(".py")


def type_names(root: Path) -> set[str]:
    """The names registered in the ``DISPATCHED`` registries that name a type of their own (a class registered under
    one name only: the query formats ``paired`` and ``inline`` of one linker class are that class's settings)."""
    by_target: dict[str, list[str]] = {}
    for path in root.rglob("__init__.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in DISPATCHED
                    and len(node.args) == 2 and all(isinstance(a, ast.Constant) for a in node.args)):
                by_target.setdefault(node.args[1].value, []).append(node.args[0].value)
    return {names[0] for names in by_target.values() if len(names) == 1}


def _strings(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_strings(e) for e in node.elts))
    return set()


def _is_model_type(node: ast.expr) -> bool:
    """Whether an expression reads a model type: ``model_type``, ``x.model_type`` or ``x["model_type"]``."""
    if isinstance(node, ast.Name):
        return node.id == "model_type"
    if isinstance(node, ast.Attribute):
        return node.attr == "model_type"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "model_type"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "model_type"
    return False


def type_branches(tree: ast.Module, names: set[str]) -> list[tuple[int, str]]:
    """The comparisons (``==``, ``!=``, ``in``, ``not in``) of a module against a registered type name or of a model
    type against anything, as (line, what)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or not all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            continue
        operands = [node.left, *node.comparators]
        hit = set().union(*(_strings(o) for o in operands)) & names
        if hit:
            found.append((node.lineno, f"compares with the type name {sorted(hit)[0]!r}"))
        elif any(_is_model_type(o) for o in operands):
            found.append((node.lineno, "compares a model_type"))
    return found


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a small directed graph (as its nodes in order), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    return next((c for node in sorted(edges) if node not in state and (c := visit(node))), None)


def check_tree(root: Path, chain: list[list[str]], allowed: set[tuple[str, str]] = frozenset()) -> list[Problem]:
    """Every breach of the layering in the package at ``root`` (a folder with ``__init__.py``) against ``chain``;
    ``allowed``: (file relative to ``root``, imported unit) pairs let through, each of which must still occur."""
    package = root.name
    level = {name: i for i, layer in enumerate(chain) for name in layer} | {name: len(chain) - 1 for name in FRONT_DOOR}
    names = type_names(root)
    problems: list[Problem] = []
    beside: dict[str, set[str]] = {}
    used: set[tuple[str, str]] = set()
    units = {p.name.removesuffix(".py") for p in root.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        unit = _unit(rel) if len(rel.parts) > 1 else rel.stem
        if unit not in level:
            problems.append(Problem(str(rel), f"{unit!r} is in no layer: name it in docs/design.md's chain"))
            continue
        if (lines := len(text.splitlines())) > MAX_LINES:
            problems.append(Problem(str(rel), f"{lines} lines, over {MAX_LINES}: split it by what its parts do"))
        problems += [Problem(f"{rel}:{line}", f"{what}: let the type decide (a method of its class)")
                     for line, what in type_branches(tree, names)]
        for target in _targets(tree, rel, package, units):
            if target == unit or target not in level:
                continue
            if (str(rel), target) in allowed:
                used.add((str(rel), target))
            elif level[target] > level[unit]:
                problems.append(Problem(str(rel), f"{unit} imports {target}, a later layer (docs/design.md's chain)"))
            elif level[target] == level[unit]:
                beside.setdefault(unit, set()).add(target)
    if cycle := _cycle(beside):
        problems.append(Problem(cycle[0], f"an import cycle within one layer: {' → '.join(cycle)}"))
    problems += [Problem(path, f"allowed to import {target}, but no longer does: remove it from ALLOWED")
                 for path, target in sorted(set(allowed) - used)]
    return problems


def _targets(tree: ast.Module, rel: Path, package: str, units: set[str]) -> set[str]:
    """The top-level units of ``package`` a module imports, anywhere in it (functions and ``TYPE_CHECKING`` blocks
    included); ``__init__`` for the package itself or a name imported from it that is no unit
    (``from spandep import __version__``)."""
    here = [package, *rel.parent.parts]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            modules = [f"{module}.{alias.name}" for alias in node.names] if module == package else [module]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == package:
                targets.add(parts[1] if len(parts) > 1 and parts[1] in units else "__init__")
    return targets


def test_the_source_tree_keeps_its_layers() -> None:
    problems = check_tree(SOURCE, layer_chain(), ALLOWED)
    assert not problems, "\n".join(map(str, problems))


def test_every_unit_of_the_source_tree_is_in_the_chain() -> None:
    placed = {name for layer in layer_chain() for name in layer}
    units = {p.name.removesuffix(".py") for p in SOURCE.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    assert units - set(FRONT_DOOR) == placed, "docs/design.md's chain and the top-level packages of src/spandep differ"


CHAIN = [["errors"], ["data"], ["models"], ["cli"]]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``pkg`` under ``tmp_path`` with ``files`` (relative path → source) and empty ``__init__.py`` files."""
    root = tmp_path / "pkg"
    for rel, source in {"__init__.py": "", "errors.py": "", "data/__init__.py": "", "models/__init__.py": "",
                        "cli/__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(source, encoding="utf-8")
    return root


def test_a_tree_that_keeps_the_layers_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"models/a.py": "from pkg.data import x\nfrom pkg import errors\nfrom ..errors import E\n",
                            "cli/b.py": "import pkg.models.a\n", "data/c.py": "from . import d\n"})
    assert check_tree(root, CHAIN) == []


@pytest.mark.parametrize("source", [
    "from pkg.models import Parser\n",  # at the top
    "def f():\n    from pkg.models.a import b\n",  # inside a function
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.cli import main\n",  # for typing only
    "from ..models import Parser\n",  # relative
    "import pkg.cli.main\n",
])
def test_an_upward_import_fails(tmp_path: Path, source: str) -> None:
    problems = check_tree(_tree(tmp_path, {"data/reader.py": source}), CHAIN)
    assert [p.path for p in problems] == ["data/reader.py"] and "a later layer" in problems[0].message


def test_the_real_tree_with_an_upward_import_added_fails(tmp_path: Path) -> None:
    """The checker on a copy of src/spandep with one more import running up the chain (data importing the CLI)."""
    import shutil

    root = tmp_path / "spandep"
    shutil.copytree(SOURCE, root, ignore=shutil.ignore_patterns("resources", "static", "__pycache__"))
    (root / "data" / "sentence.py").write_text((SOURCE / "data" / "sentence.py").read_text(encoding="utf-8")
                                               + "\n\ndef _f():\n    from spandep.cli import main\n", encoding="utf-8")
    assert [str(p) for p in check_tree(root, layer_chain(), ALLOWED)] == [
        "data/sentence.py: data imports cli, a later layer (docs/design.md's chain)"]


def test_a_cycle_within_a_layer_fails(tmp_path: Path) -> None:
    chain = [["errors", "data"], ["models"], ["cli"]]
    problems = check_tree(_tree(tmp_path, {"data/a.py": "from pkg.errors import E\n", "errors.py": "from pkg.data import a\n"}), chain)
    assert [p.message for p in problems] == ["an import cycle within one layer: data → errors → data"]


def test_a_long_file_a_type_branch_and_an_unplaced_unit_fail(tmp_path: Path) -> None:
    files = {
        "models/__init__.py": 'PARSERS.add("span", "pkg.models.span:SpanParser")\nPARSERS.add("biaffine", "pkg.models.b:B")\n'
                              'LINKERS.add("paired", "pkg.models.f:L")\nLINKERS.add("inline", "pkg.models.f:L")\n',
        "models/big.py": "x = 1\n" * (MAX_LINES + 1),
        "cli/run.py": 'if parser.name == "span":\n    pass\nok = fmt == "paired"\nif config["model_type"] != kind:\n    pass\n'
                      'if t in ("biaffine", "x"):\n    pass\n',
        "extra.py": "",
    }
    problems = [str(p) for p in check_tree(_tree(tmp_path, files), CHAIN)]
    assert problems == [
        "cli/run.py:1: compares with the type name 'span': let the type decide (a method of its class)",
        "cli/run.py:4: compares a model_type: let the type decide (a method of its class)",
        "cli/run.py:6: compares with the type name 'biaffine': let the type decide (a method of its class)",
        "extra.py: 'extra' is in no layer: name it in docs/design.md's chain",
        f"models/big.py: {MAX_LINES + 1} lines, over {MAX_LINES}: split it by what its parts do",
    ]


def test_an_allowed_import_that_is_gone_fails(tmp_path: Path) -> None:
    problems = check_tree(_tree(tmp_path, {}), CHAIN, {("data/conllu.py", "models")})
    assert [str(p) for p in problems] == ["data/conllu.py: allowed to import models, but no longer does: remove it from ALLOWED"]


def test_the_chain_is_read_from_the_design() -> None:
    chain = layer_chain()
    assert "errors" in chain[0] and "cli" in chain[-1] and re.fullmatch(r"[a-z_]+", "".join(map("".join, chain)))
