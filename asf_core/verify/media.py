"""Sidecar media: every ``sidecar:`` reference in a payload names a blob with those bytes.

A session whose header says ``media: "sidecar"`` keeps media out of its lines: an item carries
``sidecar:sha256:<hex>`` instead, and the bytes are the file ``<hex>`` in a directory named
after the session id beside the session file (draft 0.11, File). The reference names the
bytes by hash, so the blob is checked like an entry's content. Media mode is fixed when a
session is created, so a sidecar reference in an inline file is an error, not a variant.

The payloads walked are those a context is built from: ``item`` and ``queued`` items,
a compaction's ``summary`` and ``pinned``, a branch summary's ``summary``. Only strings that
start with ``sidecar:`` and contain no whitespace (a URL cannot) are taken as references, so
prose that merely begins with the word is left alone. Each blob is hashed once per session,
read in chunks, however many entries name it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import attrs

from asf_core.model import BranchSummary, Compaction, Entry, Item, Queued
from asf_core.session_file import sidecar_dir_name
from asf_core.verify.common import INFO, WARNING, Finding, SessionView, member, prefix_ids

__all__ = ["SIDECAR", "BlobCheck", "media_findings", "media_refs"]

#: The scheme of a sidecar reference.
SIDECAR: Final = "sidecar:"
_REF: Final = re.compile(r"sidecar:sha256:([0-9a-f]{64})", re.ASCII)
_SPACE: Final = re.compile(r"\s")

#: The payload members walked, per entry type.
_PAYLOADS: Final[tuple[tuple[type[Entry], tuple[str, ...]], ...]] = (
    (Item, ("item",)),
    (Queued, ("item",)),
    (Compaction, ("summary", "pinned")),
    (BranchSummary, ("summary",)),
)

#: A location in a payload: (key or index, the location of its container), None at the top.
_Where = tuple[str | int, "_Where"] | None


def _spell(name: str, where: _Where) -> str:
    steps: list[str | int] = []
    while where is not None:
        step, where = where
        steps.append(step)
    out = name
    for step in reversed(steps):
        out += f"[{step}]" if isinstance(step, int) else f".{step}"
    return out


def _walk(name: str, value: Any) -> Iterator[tuple[str, str]]:
    """(location, string) for every ``sidecar:`` string in a JSON value, without recursion."""
    stack: list[tuple[Any, _Where]] = [(value, None)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if node.startswith(SIDECAR) and not _SPACE.search(node):
                yield _spell(name, where), node
        elif isinstance(node, dict):
            stack.extend((v, (k, where)) for k, v in reversed(node.items()))
        elif isinstance(node, list | tuple):
            stack.extend((v, (i, where)) for i, v in reversed(list(enumerate(node))))


def media_refs(entry: Entry) -> Iterator[tuple[str, str]]:
    """(location, string) for each ``sidecar:`` string in the entry's payloads, in order."""
    for kind, names in _PAYLOADS:
        if isinstance(entry, kind):
            for name in names:
                yield from _walk(name, member(entry, name))
            return


class BlobCheck:
    """Checks blobs in some directories, hashing each file once."""

    _CHUNK: Final = 1 << 20

    def __init__(self) -> None:
        self._seen: dict[Path, Finding | None] = {}

    def problem(self, hexdigest: str, dirs: Iterable[Path]) -> Finding | None:
        """None when one of ``dirs`` holds blob ``hexdigest`` with those bytes, else a
        ``media-hash`` finding (a blob with other bytes) or a ``media-missing`` one (no
        readable blob in any of them)."""
        found: list[Finding] = []
        for folder in dirs:
            path = folder / hexdigest
            if path not in self._seen:
                self._seen[path] = self._hash(path, hexdigest)
            problem = self._seen[path]
            if problem is None:
                return None
            found.append(problem)
        for problem in found:
            if problem.code == "media-hash":
                return problem
        if len(found) == 1:
            return found[0]
        return Finding(code="media-missing", message="; ".join(f.message for f in found))

    def _hash(self, path: Path, hexdigest: str) -> Finding | None:
        try:
            with path.open("rb") as stream:
                digest = hashlib.sha256()
                while chunk := stream.read(self._CHUNK):
                    digest.update(chunk)
        except FileNotFoundError:
            return Finding(code="media-missing", message=f"blob {path} does not exist")
        except OSError as exc:
            why = exc.strerror or str(exc)
            return Finding(code="media-missing", message=f"blob {path} cannot be read: {why}")
        got = digest.hexdigest()
        if got == hexdigest:
            return None
        return Finding(code="media-hash", message=f"blob {path} hashes to sha256:{got}")


def media_findings(session: SessionView) -> Iterable[Finding]:
    """Findings for every ``sidecar:`` reference in the session's payloads."""
    header = session.header
    sidecar = header.media == "sidecar"
    own = sidecar_dir_name(header.id)
    origin = sidecar_dir_name(header.parent_session)
    here = session.path.parent if session.path is not None else None
    prefix = prefix_ids(session)
    blobs = BlobCheck()
    unchecked = False
    for entry in session.entries:
        for where, ref in media_refs(entry):
            match = _REF.fullmatch(ref)
            if match is None:
                yield Finding(
                    code="media-ref",
                    message=f"{where} {_short(ref)} is not a sidecar:sha256:<64 lowercase hex> "
                    "reference",
                    entry=entry.id,
                )
                continue
            if not sidecar:
                mode = header.media if header.media is not None else "inline (absent)"
                yield Finding(
                    code="media-mode",
                    message=f"{where} is a sidecar reference in a file whose media is {mode}",
                    entry=entry.id,
                )
                continue
            if here is None or own is None:
                unchecked = True
                continue
            dirs = [here / own]
            if entry.id in prefix and origin is not None and origin != own:
                dirs.append(here / origin)  # the prefix's blobs may stay with its session
            found = blobs.problem(match[1], dirs)
            if found is not None:
                yield attrs.evolve(found, message=f"{where}: {found.message}", entry=entry.id)
    if unchecked:
        if here is None:
            yield Finding(
                code="media-unchecked",
                message="the session was read without a file path: sidecar blobs not checked",
                kind=INFO,
            )
        else:
            yield Finding(
                code="media-unchecked",
                message=f"session id {header.id!r} cannot name a blob directory: sidecar "
                "blobs not checked",
                kind=WARNING,
            )


def _short(value: str, limit: int = 80) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "...")
