"""From the paths a user names to the stores to work on: discovery and the choice of format.

Shared by ``asf convert``, ``asf list`` and :mod:`asf_core.api`. A path nobody claims, a tie
between formats or a plugin failing in ``discover`` is a :class:`~asf_core.findings.Finding`
(its ``code`` says which, for the command's exit code); the other paths go ahead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs
from attrs import frozen

from asf_core.errors import AmbiguousFormat
from asf_core.findings import Finding
from asf_core.home import home
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.plugins import AsfPluginManager
from asf_core.walk import UNSEARCHABLE

__all__ = [
    "AMBIGUOUS",
    "NOT_RECOGNISED",
    "PLUGIN_FAILED",
    "PLUGIN_NOT_LOADED",
    "UNKNOWN_FORMAT",
    "UNREADABLE_PATH",
    "UNSEARCHABLE",
    "Found",
    "find_stores",
]

#: Finding codes: the input's fault ...
UNKNOWN_FORMAT = "unknown-format"
UNREADABLE_PATH = "unreadable-path"
AMBIGUOUS = "ambiguous-format"
#: ... nothing there ...
NOT_RECOGNISED = "not-recognised"
#: ... or a plugin's (one that failed, or one that could not be loaded: a warning).
PLUGIN_FAILED = "plugin-failed"
PLUGIN_NOT_LOADED = "plugin-not-loaded"


@frozen(kw_only=True)
class Found:
    """The winning claim for every store found, and what went wrong on the way."""

    stores: tuple[Candidate, ...] = ()
    problems: tuple[Finding, ...] = ()


def _unreadable(path: Path) -> str | None:
    """Why nothing can be looked for at a path (missing, or closed to us); None when it can."""
    try:
        is_dir = path.is_dir()
    except OSError as exc:  # a directory on the way that cannot be searched
        return (exc.strerror or str(exc)).lower()
    if not is_dir and not path.exists():
        return "no such file or directory"
    if is_dir and not os.access(path, os.X_OK):
        return "permission denied"
    return None


def _nothing_at_defaults(pm: AsfPluginManager) -> str:
    """ "Nothing found", saying where each plugin looked (those that say), and that there is
    no home directory to look in when there is none."""
    looked = host.default_locations(pm)
    homeless = "" if home() is not None else "; no home directory ($HOME is unset)"
    if not looked:
        tail = f"{homeless}; name a PATH" if homeless else ""
        return f"no stores found in the default locations of any format{tail}"
    where = "; ".join(f"{name}: {', '.join(map(str, paths))}" for name, paths in looked.items())
    return f"no stores found in the default locations ({where}){homeless}; name a PATH"


def find_stores(pm: AsfPluginManager, paths: Sequence[Path], fmt: str | None = None) -> Found:
    """The winning claim for every store under ``paths`` (none named: default locations)."""
    problems: list[Finding] = []

    def problem(code: str, message: str) -> None:
        problems.append(Finding(kind="error", code=code, message=message))

    if fmt is not None and fmt not in pm.plugin_names():
        known = ", ".join(pm.plugin_names()) or "none"
        problem(UNKNOWN_FORMAT, f"unknown format {fmt!r} (installed: {known}; see `asf plugins`)")
        return Found(problems=tuple(problems))
    found: list[Candidate] = []
    wanted: list[Path | None] = list(paths) if paths else [None]
    for path in wanted:
        where = "the default locations" if path is None else str(path)
        if path is not None:
            why = _unreadable(path)
            if why is not None:
                problem(UNREADABLE_PATH, f"{path}: {why}")
                continue
        discovery = host.discover(pm, path)
        problems.extend(  # the folder named in the line printed
            attrs.evolve(s, message=f"{s.path}: {s.message}" if s.path else s.message)
            for s in discovery.skipped
        )
        for failure in discovery.failures:
            problem(PLUGIN_FAILED, f"{where}: {failure}")
        claims = [
            c for c in discovery.candidates if fmt is None or fmt in (c.claim.format, c.plugin)
        ]
        if claims:
            found.extend(claims)
        elif fmt is not None and (discovery.candidates or path is not None):
            others = sorted({c.claim.format for c in discovery.candidates})
            also = f" (claimed as: {', '.join(others)})" if others else ""
            problem(NOT_RECOGNISED, f"{where}: not recognised as {fmt}{also}")
        elif path is None:
            problem(NOT_RECOGNISED, _nothing_at_defaults(pm))
        else:
            problem(NOT_RECOGNISED, f"{where}: no format plugin recognises it")
    chosen: list[Candidate] = []
    for group in host.group_by_path(found).values():
        try:
            winner = host.choose(group, format=fmt)
        except AmbiguousFormat as exc:
            problem(AMBIGUOUS, str(exc))
            continue
        if winner is not None:
            chosen.append(winner)
    return Found(stores=tuple(chosen), problems=tuple(problems))
