"""What tests of the ``asf`` command need to run it with plugins of their own.

:func:`only_these` makes :func:`asf_core.cli.main.main` load exactly the plugin objects given
(no entry points); :class:`PathStore` is the smallest store handle, a path and nothing to close.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asf_core import plugins
from asf_core.formats import Claim

__all__ = ["PathStore", "claim_by_suffix", "only_these"]


def only_these(monkeypatch: pytest.MonkeyPatch, *given: object) -> None:
    """Every plugin manager the command builds holds ``given`` and nothing else."""
    make = plugins.make_plugin_manager
    monkeypatch.setattr(
        plugins, "make_plugin_manager", lambda: make(plugins=list(given), autoload=False)
    )


class PathStore:
    """A store handle that is just its path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def info(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def claim_by_suffix(path: Path | None, fmt: str, *suffixes: str) -> list[Claim] | None:
    """A ``discover`` answer: a sure claim on a path with one of ``suffixes``, else None."""
    if path is None or path.suffix not in suffixes:
        return None
    return [Claim(format=fmt, path=path, confidence=1.0)]
