"""Where ``asf convert`` puts things: one directory per store, one file per session.

``<out>/<format>/<store label>/<project key>/<created at>_<session id>.jsonl`` is the
reference library's jsonl store layout below the store directory, so a converted store opens
in the reference tooling; ``report.json`` sits beside the project directories.

Names come from the data (a session's ``cwd`` and ``id``), so none may take a name asf keeps
for itself: a project key that is a reserved name (:data:`RESERVED`, compared without case,
as some file systems do) gets a ``_`` in front, and a session id that is not a safe file name
is spelled safely with a hash of the real id, so two ids never share a file. Everything else is
spelled as the reference library spells it, so existing outputs keep their names.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from asf_core.model import Header

__all__ = [
    "FINGERPRINTS_NAME",
    "REPORT_NAME",
    "RESERVED",
    "project_key",
    "redacted_folder",
    "session_file_name",
    "session_path",
    "slug",
    "store_dir",
    "store_label",
]

#: The store's report, beside its project directories.
REPORT_NAME = "report.json"
#: What the last run wrote (``asf_core.pipeline.fingerprints``), beside the report.
FINGERPRINTS_NAME = "fingerprints.json"
#: Names in a store's directory that are asf's own, never a project directory's.
RESERVED = frozenset({REPORT_NAME, FINGERPRINTS_NAME})
#: A session id longer than this is cut (and told apart by its hash) in its file name.
_ID_CHARS = 100

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """``text`` as a safe path component: letters, digits, ``._-``; never hidden, never empty."""
    return _UNSAFE.sub("_", text).lstrip(".") or "_"


def store_label(path: Path, *, redact: bool = False) -> str:
    """The directory name for one store's output, stable across runs and collision-free.

    Readable part: the store's parent directory and file name; unique part: the first 10 hex
    digits of the SHA-256 of its resolved absolute path. ``/home/u/.hermes/state.db`` becomes
    ``hermes-state.db-<hash>``. ``redact`` spells a home directory's account name in the
    readable part ``USER`` (``/home/ada/.codex`` is ``USER-.codex-<hash>``): a placeholder
    numbered in the order a run meets values would move the folder from run to run.
    """
    resolved = path.resolve()
    shown = resolved
    if redact:
        from asf_core.redaction.detectors import home_users

        text = str(resolved)
        for start, end in reversed(home_users(text)):
            text = text[:start] + "USER" + text[end:]
        shown = Path(text)
    readable = slug("-".join(p for p in (shown.parent.name, shown.name) if p))[:60]
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:10]
    return f"{readable}-{digest}"


@cache
def _folder_home_user() -> re.Pattern[str]:
    """A home directory's account name as asf's folder names spell its path, every separator
    a dash: a project key (``home-ada-proj``, ``Users-ada-x``, ``C--Users-ada``,
    ``var-home-ada``, ``mnt-c-Users-ada``) or a store label made of Claude Code's project
    folder name (``projects--home-ada-proj``); the name runs to the next dash, the only end
    kept (a project key keeps a name's dots and spaces: ``home-ada.l-x``, ``C--Users-Ada
    L-x``). Compiled when a redacted export first asks, not by every run."""
    from asf_core.redaction.home_paths import SHARED_FOLDERS

    return re.compile(
        r"(?:^|(?<=--)|(?<=^var-)|(?<=-var-)|(?<=^mnt-[a-z]-)|(?<=-mnt-[a-z]-))(?:Users|home)-"
        rf"(?!(?:{SHARED_FOLDERS})(?:-|$))"
        r"(?P<s>[^-\[][^-]*)"  # not a placeholder a redacted conversion spelled there
    )


def redacted_folder(folder: Path) -> Path:
    """``folder`` (relative) with every home directory's account name its components spell
    as asf's folders do replaced by ``USER``, as :func:`store_label` spells it with
    ``redact``: the folders ``asf export --redact`` mirrors from a converted directory."""
    parts = [
        _folder_home_user().sub(lambda m: m.group(0)[: m.start("s") - m.start()] + "USER", part)
        for part in folder.parts
    ]
    return Path(*parts) if parts else Path()


def project_key(cwd: str | None) -> str:
    """The directory a session lives in, from its working directory, as the reference store has it.

    The leading separator is stripped and separators and colons become ``-``: ``/home/u/proj``
    is ``home-u-proj``; no directory is ``default``. A key that would step out of the store
    (``.``, ``..``), holds a NUL or is too long is made safe with :func:`slug`; lone surrogates
    become U+FFFD, as in the header written; a reserved name (``report.json``,
    ``fingerprints.json``) gets a ``_`` in front.
    """
    key = (cwd or "").replace("\\", "/").lstrip("/")
    for sep in ("/", "\\", ":"):
        key = key.replace(sep, "-")
    if not key:
        return "default"
    from asf_core.canonical import has_lone_surrogate  # loaded with the first session written

    if has_lone_surrogate(key):
        key = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in key)
    if key in (".", "..") or "\0" in key or len(key.encode()) > 200:
        key = slug(key)[:200]
    if key.casefold() in RESERVED:
        key = "_" + key
    return key


def _stamp(created_at: str) -> str:
    """``created_at`` spelled as the reference store does in names: ``2026-09-17T12-00-00.000Z``."""
    try:
        when = datetime.fromisoformat(created_at.replace("z", "Z").replace("t", "T"))
        if when.tzinfo is not None:
            when = when.astimezone(UTC)
    except (ValueError, OverflowError):  # not a date, or beyond the years datetime holds
        return "0000-00-00T00-00-00.000Z"
    millis = when.microsecond // 1000
    return when.strftime("%Y-%m-%dT%H-%M-%S") + f".{millis:03d}Z"


def session_path(header: Header) -> Path:
    """Where a session's file goes inside its store's directory.

    ``<project key>/<created at>_<session id>.jsonl``: the reference library's jsonl store
    layout, so a store's output directory is a store that library (and its command) opens. An
    id that is not a safe file name (or is longer than 100 characters) is made one with
    :func:`slug`, cut, and followed by the first 10 hex digits of its SHA-256: ``a/b`` and
    ``a_b`` stay two files.
    """
    return (
        Path(project_key(header.cwd)) / f"{_stamp(header.created_at)}_{_file_id(header.id)}.jsonl"
    )


def _file_id(ident: str) -> str:
    """A session id as it appears in its file name: as it is when that is safe, else a slug
    and the hash of the id."""
    if ident and len(ident) <= _ID_CHARS and slug(ident) == ident:
        return ident
    digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug(ident)[:_ID_CHARS]}-{digest}"


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


def store_dir(out_dir: Path, format: str, store: Path, *, redact: bool = False) -> Path:
    """The directory one store's output goes to: ``<out>/<format>/<store label>``."""
    return out_dir / slug(format) / store_label(store, redact=redact)
