"""What tests of the ``asf`` command need to run it with plugins of their own.

:func:`only_these` makes :func:`asf_core.cli.main.main` load exactly the plugin objects given
(no entry points); :func:`installed_only` makes the host's entry-point scan see only the
:class:`FakeDist` distributions a test lists; :class:`PathStore` is the smallest store handle,
a path and nothing to close.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asf_core import entry_points, plugins
from asf_core.formats import Claim

__all__ = ["FakeDist", "PathStore", "claim_by_suffix", "installed_only", "only_these"]


def only_these(monkeypatch: pytest.MonkeyPatch, *given: object) -> None:
    """Every plugin manager the command builds holds ``given`` and nothing else."""
    make = plugins.make_plugin_manager
    monkeypatch.setattr(
        plugins, "make_plugin_manager", lambda: make(plugins=list(given), autoload=False)
    )


class FakeDist:
    """An installed distribution as the entry-point scan reports it: a name, a version and
    the ``asf.formats`` entry points it declares (name to ``module:attribute``)."""

    def __init__(self, name: str, points: dict[str, str], version: str = "1.0") -> None:
        self.name = name
        self.version = version
        self.points = [entry_points.Declared(n, v, name, version) for n, v in points.items()]


def installed_only(monkeypatch: pytest.MonkeyPatch, dists: list[FakeDist]) -> None:
    """The host finds the entry points of ``dists`` (read when it scans) and no others; the
    plugin environment variables are cleared."""

    def declared(group: str) -> entry_points.Found:
        assert group == plugins.ENTRY_POINT_GROUP
        return entry_points.Found([p for dist in dists for p in dist.points], [])

    monkeypatch.setattr(entry_points, "declared", declared)
    for var in (plugins.DISABLE_AUTOLOAD_ENV, plugins.ONLY_ENV, plugins.TRACE_ENV):
        monkeypatch.delenv(var, raising=False)


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
