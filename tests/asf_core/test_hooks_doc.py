"""docs/hooks.md and the hook specs agree: same hooks, same signatures, same options."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from fixture_paths import ROOT

from asf_core import hookspecs

DOC = ROOT / "docs" / "hooks.md"


def _specs() -> dict[str, Callable[..., Any]]:
    return {
        name: fn
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if getattr(fn, "asf_spec", None) is not None
    }


def _norm(annotation: str) -> str:
    return ast.unparse(ast.parse(annotation, mode="eval").body)


def _spec_signature(fn: Callable[..., Any]) -> tuple[list[tuple[str, str]], str, bool]:
    sig = inspect.signature(fn)
    params = [(p.name, _norm(str(p.annotation))) for p in sig.parameters.values()]
    assert all(p.default is inspect.Parameter.empty for p in sig.parameters.values())
    firstresult = bool(fn.asf_spec.get("firstresult"))  # type: ignore[attr-defined]
    return params, _norm(str(sig.return_annotation)), firstresult


def _doc_sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## `(\w+)`\s*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _doc_signature(section: str) -> tuple[list[tuple[str, str]], str, bool]:
    match = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert match, "no python block"
    tree = ast.parse(match.group(1).rstrip() + ":\n    ...\n")
    (fn,) = tree.body
    assert isinstance(fn, ast.FunctionDef)
    assert fn.returns is not None
    params = [(a.arg, ast.unparse(a.annotation)) for a in fn.args.args if a.annotation]
    assert len(params) == len(fn.args.args), "every parameter is annotated"
    firstresult = any("firstresult=True" in ast.unparse(d) for d in fn.decorator_list)
    return params, ast.unparse(fn.returns), firstresult


def test_every_hook_is_documented_and_every_documented_hook_exists() -> None:
    assert set(_specs()) == {
        "discover",
        "default_locations",
        "open_store",
        "read",
        "convert",
        "plan",
        "finish",
        "stamp",
        "personal",
    }
    assert set(_doc_sections()) == set(_specs())


@pytest.mark.parametrize("name", sorted(_specs()))
def test_documented_signature_matches_the_spec(name: str) -> None:
    spec = _specs()[name]
    section = _doc_sections()[name]
    assert _doc_signature(section) == _spec_signature(spec)
    summary = inspect.getdoc(spec)
    assert summary, f"{name} has no docstring"
    first = summary.splitlines()[0].replace("``", "`")
    assert first in section, "the docstring's first line opens the documented contract"


def test_every_hook_has_a_test() -> None:
    tree = ast.parse((ROOT / "tests" / "asf_core" / "test_plugins.py").read_text(encoding="utf-8"))
    tests = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    missing = sorted(f"test_hook_{name}" for name in _specs() if f"test_hook_{name}" not in tests)
    assert missing == []
