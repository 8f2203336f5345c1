"""The house rules a newcomer relies on: layers that do not import upwards, small modules.

* ``asf_core`` never imports a format plugin (plugins come in by entry point only);
* no import cycles between modules (imports at module level; a function-level import is the
  documented way to break one);
* no module over ~400 lines.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from fixture_paths import ROOT

PACKAGES = ["asf_core", "hermes_plugin", "claude_code_plugin", "codex_plugin"]
MAX_LINES = 420


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _module_imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules ``path`` imports at module level (TYPE_CHECKING blocks excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m in known}


def _plugin_packages() -> set[str]:
    """The top-level packages the project registers as format plugins."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    points = project["project"]["entry-points"]["asf.formats"]
    return {value.split(".")[0] for value in points.values()}


def test_asf_core_never_imports_a_plugin() -> None:
    plugins = _plugin_packages()
    assert {"hermes_plugin", "claude_code_plugin"} <= plugins
    for path in (ROOT / "asf_core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in plugins, f"{path.relative_to(ROOT)}: {name}"


def test_no_import_cycles() -> None:
    modules = _modules()
    known = set(modules)
    graph = {name: _module_imports(path, name, known) - {name} for name, path in modules.items()}
    # A package's __init__ importing its own submodules is not a cycle through them.
    graph = {n: {m for m in deps if not n.startswith(m + ".")} for n, deps in graph.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == [], cycles


@pytest.mark.parametrize("name", sorted(_modules()))
def test_modules_are_small(name: str) -> None:
    lines = _modules()[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name}: {lines} lines"
