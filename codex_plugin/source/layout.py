"""Where Codex keeps rollouts, and which paths a user names are ours.

Codex writes ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl``
(``$CODEX_HOME`` when set and not empty, else ``~/.codex``); very old rollouts sit directly in
``sessions/``, and a thread the user archives is moved, whole, to ``archived_sessions/``. A
directory of rollouts (``sessions``, ``archived_sessions``, a year, month or day directory,
any folder holding rollout files) is one store; so is one rollout file. A home is its two
stores: a backup of ``~/.codex`` keeps the archived threads too.

Everything here is cheap and never raises: discovery runs for every path the user names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Final

from attrs import frozen

from asf_core.home import home
from asf_core.walk import Walk, files_under, is_dir, is_file
from codex_plugin.source.compressed import COMPRESSED, open_rollout, plain_name

__all__ = [
    "Found",
    "default_home",
    "default_stores",
    "is_rollout_name",
    "rollouts_under",
    "sniff",
    "stores_at",
]

HOME_ENV: Final = "CODEX_HOME"
CODEX_DIR: Final = ".codex"
SESSIONS: Final = "sessions"
#: Where Codex moves the rollout of a thread the user archives.
ARCHIVED: Final = "archived_sessions"
SUFFIX: Final = ".jsonl"
_ROLLOUT: Final = re.compile(r"rollout-.*\.jsonl")
#: The most of a first line read to judge a file (a session header holds Codex's whole
#: base instructions: tens of kilobytes); a longer first line is judged on its start.
_SNIFF_BYTES: Final = 1 << 22
#: The lines read for a judgeable one (a JSON object): blank and damaged ones are skipped.
_SNIFF_LINES: Final = 8
#: The envelope kinds a rollout line has.
KINDS: Final = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)


@frozen
class Found:
    """A store found at a path: a directory of rollouts, or one rollout file."""

    path: Path
    confidence: float
    detail: str


def default_home() -> Path | None:
    """``$CODEX_HOME`` when set and not empty, else ``~/.codex`` (None: no home at all)."""
    configured = os.environ.get(HOME_ENV)
    if configured:
        return Path(configured)
    user = home()
    return None if user is None else user / CODEX_DIR


def default_stores() -> list[Path]:
    """The default home's ``sessions`` and ``archived_sessions`` directories."""
    root = default_home()
    return [] if root is None else [root / SESSIONS, root / ARCHIVED]


def is_rollout_name(name: str) -> bool:
    return bool(_ROLLOUT.fullmatch(name))


def _rollout_or_compressed(name: str) -> bool:
    return is_rollout_name(plain_name(name))


def rollouts_under(root: Path) -> Walk:
    """Every rollout below ``root`` (``rollout-*.jsonl``, or ``rollout-*.jsonl.zst`` as
    Codex compresses them), in path order, and the folders passed over. A compressed one
    beside its plain form is hidden, as Codex hides it (it reads the plain file): it goes
    with what is no file to ``others``, for the caller to report."""
    walk = files_under(root, _rollout_or_compressed)
    plain = {path for path in walk.files if not path.name.endswith(COMPRESSED)}
    hidden = tuple(
        path
        for path in walk.files
        if path not in plain and path.with_name(plain_name(path.name)) in plain
    )
    if not hidden:
        return walk
    files = tuple(path for path in walk.files if path not in hidden)
    return Walk(files=files, skipped=walk.skipped, others=tuple(sorted(walk.others + hidden)))


def _codex_line(value: Any) -> bool:
    """A first line Codex writes: a session header in its envelope, or the bare header of
    the pre-envelope format (``id``, ``timestamp``, no ``type``)."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    payload = value.get("payload")
    if isinstance(kind, str) and kind in KINDS and isinstance(payload, dict):
        return kind != "session_meta" or "id" in payload
    return kind is None and "id" in value and "timestamp" in value and "uuid" not in value


def sniff(path: Path) -> bool | None:
    """True when the first readable line of ``path`` is Codex's, False when it is something
    else, None when nothing could be judged (empty, unreadable, only damaged lines)."""
    from asf_core.canonical import JsonError
    from asf_core.strict_json import parse

    try:
        with open_rollout(path) as stream:
            head = stream.read(4096)
            if b"\0" in head:
                return False
            stream.seek(0)
            for _ in range(_SNIFF_LINES):
                data = stream.readline(_SNIFF_BYTES)
                if not data:
                    return None
                if not data.strip():
                    continue
                try:
                    value = parse(data)
                except (JsonError, RecursionError, ValueError):
                    continue
                if isinstance(value, dict):  # JSON but no object: a damaged line too
                    return _codex_line(value)
    except (OSError, ValueError):
        return None
    return None


def _file_claim(path: Path) -> Found | None:
    name = plain_name(path.name)
    if Path(name).suffix != SUFFIX:
        return None
    verdict = sniff(path)
    named = is_rollout_name(name)
    if verdict is True:
        return Found(path, 1.0 if named else 0.9, "Codex rollout file")
    if verdict is None and named:  # named as Codex names them, nothing to read: say why
        return Found(path, 0.2, "named like a Codex rollout file")
    return None


def _directory_claim(directory: Path, *, trusted: bool) -> Found | None:
    """A directory holding rollouts: sure when it is a Codex home's ``sessions`` (or below
    it), else when its first judgeable rollout is Codex's."""
    walk = rollouts_under(directory)
    if not walk.files:
        return None
    if trusted:
        return Found(directory, 1.0, "Codex sessions")
    for file in walk.files:
        verdict = sniff(file)
        if verdict is not None:
            return Found(directory, 0.9, "Codex rollouts") if verdict else None
    return None


def _inside_home(path: Path) -> bool:
    """``path`` is a ``.codex`` home's ``sessions`` or ``archived_sessions`` directory or
    one below it."""
    parts = path.resolve().parts
    return any(
        parts[i] == CODEX_DIR and parts[i + 1] in (SESSIONS, ARCHIVED)
        for i in range(len(parts) - 1)
    )


def _home_claims(home: Path) -> list[Found] | None:
    """The stores of a Codex home (its ``sessions`` and ``archived_sessions`` holding
    rollouts); None when ``home`` has neither directory."""
    folders = [folder for folder in (home / SESSIONS, home / ARCHIVED) if is_dir(folder)]
    if not folders:
        return None
    trusted = home.name == CODEX_DIR or (home / "config.toml").is_file()
    claims = [_directory_claim(folder, trusted=trusted) for folder in folders]
    return [claim for claim in claims if claim is not None]


def stores_at(path: Path | None) -> list[Found]:
    """The Codex stores at ``path``: a Codex home (or a home holding ``.codex``: its
    ``sessions`` and ``archived_sessions``), either directory or one below it, any directory
    of rollouts, one rollout file; None means the user's own (``$CODEX_HOME`` or
    ``~/.codex``)."""
    try:
        if path is None:
            root = default_home()
            return (_home_claims(root) or []) if root is not None else []
        if is_file(path):
            claim = _file_claim(path)
            return [claim] if claim is not None else []
        if not is_dir(path):
            return []
        for home_dir in (path, path / CODEX_DIR):
            claims = _home_claims(home_dir)
            if claims:
                return claims
        found = _directory_claim(path, trusted=_inside_home(path))
        return [found] if found is not None else []
    except (OSError, ValueError):  # a race with the file system: nothing found is honest
        return []
