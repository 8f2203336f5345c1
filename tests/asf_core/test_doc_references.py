"""The user-facing documents name only what exists: every ``asf_core...`` name (module,
class, function) imports, and every path into the repository (``tests/...``, ``asf_core/...``,
``examples/...``, ...) is there, a ``*`` in it matching something."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from fixture_paths import ROOT

DOCS = sorted(
    [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *(ROOT / "docs").rglob("*.md")]
)
_NAME = re.compile(r"\basf_core(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PATH = re.compile(
    r"(?<![\w./-])((?:tests|benchmarks|examples|asf_core|hermes_plugin|claude_code_plugin)"
    r"/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*])"
)
#: Paths a document names that a script makes when it runs.
_MADE = {"benchmarks/.venv-hermes"}


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            if not hasattr(found, part):
                return False
            found = getattr(found, part)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_name_and_path_a_document_gives_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    names = sorted(set(_NAME.findall(text)))
    assert [n for n in names if not _resolves(n)] == []
    paths = sorted(set(_PATH.findall(text)) - _MADE)
    assert [p for p in paths if not any(ROOT.glob(p.rstrip("/")))] == []


def test_a_missing_name_or_path_is_seen() -> None:
    assert _resolves("asf_core.home.home")
    assert not _resolves("asf_core.home.nowhere")
    assert _PATH.findall("see `tests/golden/claude-code-*` and examples/x.py.") == [
        "tests/golden/claude-code-*",
        "examples/x.py",
    ]
