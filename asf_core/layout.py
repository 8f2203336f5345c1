"""Where ``asf convert`` puts things: one directory per store, one file per session.

``<out>/<format>/<store label>/<project key>/<created at>_<session id>.jsonl`` is the
reference library's jsonl store layout below the store directory, so a converted store opens
in the reference tooling; ``report.json`` sits beside the project directories.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from asf_core.model import Header

__all__ = [
    "REPORT_NAME",
    "project_key",
    "session_file_name",
    "session_path",
    "slug",
    "store_dir",
    "store_label",
]

#: The store's report, beside its project directories.
REPORT_NAME = "report.json"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


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
    return None if file_name == REPORT_NAME else file_name


def store_dir(out_dir: Path, format: str, store: Path) -> Path:
    """The directory one store's output goes to: ``<out>/<format>/<store label>``."""
    return out_dir / slug(format) / store_label(store)
