"""The user-facing documents name only what exists: every ``asf_core...`` name (module,
class, function) imports, every path into the repository (``tests/...``, ``asf_core/...``,
``examples/...``, ...) is there, a ``*`` in it matching something, and every relative link
reaches a file and, with ``#anchor``, one of its headings."""

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
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
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


def _anchors(doc: Path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    text = _FENCE.sub("", doc.read_text(encoding="utf-8"))
    headings = re.findall(r"^#+ (.*)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_reaches_its_file_and_anchor(doc: Path) -> None:
    broken = []
    for target in _LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists() or (
            anchor and linked.suffix == ".md" and anchor not in _anchors(linked)
        ):
            broken.append(target)
    assert broken == []


def test_anchors_are_githubs() -> None:
    assert {"asf-convert", "signals-and-temporary-files", "environment"} <= _anchors(
        ROOT / "docs" / "cli.md"
    )
