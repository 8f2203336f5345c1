"""``convert``: each native session (a rollout file) as one ASF session, its entries streamed
(:mod:`codex_plugin.convert.session`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from asf_core.formats import ConvertedSession, Finding, NativeSession, StoreError
from asf_core.model import Entry, Header
from codex_plugin import NS
from codex_plugin.convert.session import Survey, entries_of
from codex_plugin.convert.stream import RolloutFile
from codex_plugin.handle import CodexStore
from codex_plugin.native import Native, session_id

__all__ = ["convert_one", "convert_sessions", "file_name", "header_of"]

JSON = dict[str, Any]
EPOCH = "1970-01-01T00:00:00Z"


def header_of(native: Native) -> Header:
    """A rollout's header: its thread, when and where it started, the CLI that wrote it,
    and the thread it was forked from or spawned by (provenance)."""
    facts = native.facts
    about: JSON = {"file": native.unit}
    if facts.thread is not None:
        about["thread"] = facts.thread
    for name in ("originator", "source", "model_provider", "git"):
        if name in facts.meta:
            about[name] = facts.meta[name]
    harness: JSON = {"name": "codex"}
    if facts.version is not None:
        harness["version"] = facts.version
    parent = facts.forked_from or facts.parent_thread
    if facts.forked_from is not None:
        about["forked_from_id"] = facts.forked_from
    if facts.parent_thread is not None:
        about["parent_thread_id"] = facts.parent_thread
    return Header(
        id=native.asf_id,
        created_at=facts.started or EPOCH,
        harness=harness,
        cwd=facts.cwd,
        parent_session=session_id(parent, "") if parent is not None else None,
        unknown={NS: about},
    )


def file_name(name: str) -> str:
    """A session's name as its file is named: letters, digits and ``._-~`` as they are, the
    rest (a ``/`` of a rollout named by its path, whatever a damaged header's id holds)
    made ``_``, never hidden, at most 200 characters; a name so altered gets a short hash of
    itself, so two names never share a file."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-~") else "_" for c in name)
    safe = safe.lstrip(".")
    if safe != name or not safe or len(safe) > 200:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        safe = f"{safe[:120]}-{digest}"
    return safe


def convert_one(session: NativeSession, rollout: RolloutFile | None = None) -> ConvertedSession:
    """A rollout ``read`` listed, converted (``rollout``: its file, when its first pass was
    fed as ``read`` read it)."""
    native: Native = session.native
    if rollout is None:
        rollout = RolloutFile(native.path, native.unit)
        try:
            for line in rollout.read():
                rollout.first.feed(line)
        except OSError as exc:
            raise StoreError(f"{native.unit}: cannot be read: {exc.strerror or exc}") from exc
    survey = rollout.first.survey(rollout.lines)
    header = header_of(native)
    counts = dict(survey.counts)
    counts["entries"] = survey.entries
    return ConvertedSession(
        header=header,
        entries=_entries(rollout, header, survey),
        name=file_name(session.id),
        sources=(native.unit,),
        counts=counts,
        native_ids=(session.id,),
    )


def _entries(rollout: RolloutFile, header: Header, survey: Survey) -> Iterator[Entry]:
    try:
        lines = rollout.last()
        yield from entries_of(header, lines, rollout.fetch, survey, rollout.unit)
    finally:
        rollout.close()


def convert_sessions(
    store: CodexStore, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding]:
    """Each session ``read`` listed (and the host selected), converted."""
    del store  # each session names its own file
    for session in sessions:
        if isinstance(session.native, Native):
            yield convert_one(session)
