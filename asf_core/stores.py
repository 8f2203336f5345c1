"""From the paths a user names to the stores to work on: discovery, choice, and output layout.

Shared by ``asf convert`` and ``asf list``. A path nobody claims, a tie between formats or a
plugin failing in ``discover`` is reported and skipped; the other paths go ahead.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from attrs import define, field

from asf_core import plugins
from asf_core.cli.output import ExitCode, err, worst
from asf_core.model import Header
from asf_core.plugins import AmbiguousFormat, AsfPluginManager, Candidate

__all__ = [
    "Troubles",
    "find_stores",
    "project_key",
    "session_file_name",
    "session_path",
    "slug",
    "store_label",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@define
class Troubles:
    """Problems met along the way: each printed once on stderr and kept for ``--json``."""

    code: ExitCode = ExitCode.OK
    lines: list[str] = field(factory=list)

    def add(self, message: str, code: ExitCode) -> None:
        err(message)
        self.lines.append(message)
        self.code = worst(self.code, code)


def slug(text: str) -> str:
    """``text`` as a safe path component: letters, digits, ``._-``; never hidden, never empty."""
    return _UNSAFE.sub("_", text).lstrip(".") or "_"


def store_label(path: Path) -> str:
    """The directory name for one store's output, stable across runs and collision-free.

    Readable part: the store's parent directory and file name; unique part: the first 10 hex
    digits of the SHA-256 of its resolved absolute path. ``/home/u/.hermes/state.db`` becomes
    ``hermes-state.db-<hash>``.
    """
    resolved = path.resolve()
    readable = slug("-".join(p for p in (resolved.parent.name, resolved.name) if p))[:60]
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:10]
    return f"{readable}-{digest}"


def project_key(cwd: str | None) -> str:
    """The directory a session lives in, from its working directory, as the reference store has it.

    The leading separator is stripped and separators and colons become ``-``: ``/home/u/proj``
    is ``home-u-proj``; no directory is ``default``. A key that would step out of the store
    (``.``, ``..``) or hold a NUL is made safe with :func:`slug`.
    """
    key = (cwd or "").replace("\\", "/").lstrip("/")
    for sep in ("/", "\\", ":"):
        key = key.replace(sep, "-")
    if not key:
        return "default"
    if key in (".", "..") or "\0" in key or len(key.encode()) > 200:
        return slug(key)[:200]
    return key


def _stamp(created_at: str) -> str:
    """``created_at`` spelled as the reference store does in names: ``2026-09-17T12-00-00.000Z``."""
    try:
        when = datetime.fromisoformat(created_at.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return "0000-00-00T00-00-00.000Z"
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    millis = when.microsecond // 1000
    return when.strftime("%Y-%m-%dT%H-%M-%S") + f".{millis:03d}Z"


def session_path(header: Header) -> Path:
    """Where a session's file goes inside its store's directory.

    ``<project key>/<created at>_<session id>.jsonl``: the reference library's jsonl store
    layout, so a store's output directory is a store that library (and its command) opens. An
    id that is not a safe file name is made one with :func:`slug`.
    """
    ident = header.id if header.id and slug(header.id) == header.id else slug(header.id or "_")
    return Path(project_key(header.cwd)) / f"{_stamp(header.created_at)}_{ident}.jsonl"


def session_file_name(name: str) -> str | None:
    """The plugin's session name as a file name (``.jsonl`` added), or None if unsafe."""
    if (
        not name
        or name != name.strip()
        or name.startswith(".")
        or any(c in name for c in "/\\\0")
        or len(name) > 200
    ):
        return None
    file_name = name if name.endswith(".jsonl") else f"{name}.jsonl"
    return None if file_name == "report.json" else file_name


def _unknown_format(pm: AsfPluginManager, fmt: str) -> str:
    known = ", ".join(pm.plugin_names()) or "none"
    return f"unknown format {fmt!r} (installed: {known}; see `asf plugins`)"


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


def find_stores(
    pm: AsfPluginManager, paths: Sequence[Path], fmt: str | None, troubles: Troubles
) -> list[Candidate]:
    """The winning claim for every store under ``paths`` (none named: default locations)."""
    if fmt is not None and fmt not in pm.plugin_names():
        troubles.add(_unknown_format(pm, fmt), ExitCode.USAGE)
        return []
    found: list[Candidate] = []
    wanted: list[Path | None] = list(paths) if paths else [None]
    for path in wanted:
        where = "the default locations" if path is None else str(path)
        if path is not None:
            why = _unreadable(path)
            if why is not None:
                troubles.add(f"{path}: {why}", ExitCode.USAGE)
                continue
        discovery = plugins.discover(pm, path)
        for failure in discovery.failures:
            troubles.add(f"{where}: {failure}", ExitCode.PLUGIN)
        claims = [
            c for c in discovery.candidates if fmt is None or fmt in (c.claim.format, c.plugin)
        ]
        if claims:
            found.extend(claims)
        elif fmt is not None and (discovery.candidates or path is not None):
            others = sorted({c.claim.format for c in discovery.candidates})
            also = f" (claimed as: {', '.join(others)})" if others else ""
            troubles.add(f"{where}: not recognised as {fmt}{also}", ExitCode.NOTHING)
        elif path is None:
            troubles.add("no stores found in the default locations of any format", ExitCode.NOTHING)
        else:
            troubles.add(f"{where}: no format plugin recognises it", ExitCode.NOTHING)
    chosen: list[Candidate] = []
    for group in plugins.group_by_path(found).values():
        try:
            winner = plugins.choose(group, format=fmt)
        except AmbiguousFormat as exc:
            troubles.add(str(exc), ExitCode.USAGE)
            continue
        if winner is not None:
            chosen.append(winner)
    return chosen
