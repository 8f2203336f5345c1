"""asf from Python: everything the ``asf`` command does, as functions and small objects.

* :func:`convert` converts paths to a directory, exactly as ``asf convert`` does.
* :func:`find_stores` finds the stores under paths; a :class:`Store` lists its native
  sessions and converts them to ASF sessions in memory, one at a time, writing nothing.
* :func:`read` reads an ASF file; :func:`context` and :func:`request` rebuild what the model
  received at a leaf or for a response; :func:`verify` checks files.
* :func:`atif`, :func:`otel` and :func:`transcript` export the path to a leaf, as
  ``asf export`` does: an ATIF trajectory, an OpenTelemetry trace, a readable transcript.

``docs/library.md`` walks through each with examples the test suite runs.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from attrs import frozen

from asf_core.context import Context, ContextError, context_at
from asf_core.errors import AmbiguousFormat, OutputError, PluginError
from asf_core.export import SessionTree, atif_document, otel_request
from asf_core.export.paths import PathView
from asf_core.export.resolve import DirectoryIndex
from asf_core.export.transcript import transcript as _transcript
from asf_core.export.transcript_html import render_html
from asf_core.export.transcript_text import render_markdown, render_text
from asf_core.findings import Finding
from asf_core.formats import ConvertedSession, NativeSession, Selection, StoreError
from asf_core.pipeline import host
from asf_core.pipeline.conversion import convert_paths
from asf_core.pipeline.host import Candidate
from asf_core.pipeline.report import RunReport
from asf_core.pipeline.stores import PLUGIN_NOT_LOADED
from asf_core.pipeline.stores import find_stores as _find_stores
from asf_core.plugins import AsfPluginManager, make_plugin_manager
from asf_core.reader import FormatError, SessionFile, parse_session, read_session
from asf_core.redaction import MissingDetector, Redactor, SessionRedaction
from asf_core.request import request_body, request_context
from asf_core.selecting import filtered, parse_time
from asf_core.verify.session import verify_path
from asf_core.writer import session_lines

__all__ = [
    "AmbiguousFormat",
    "ContextError",
    "ConvertedSession",
    "FormatError",
    "MissingDetector",
    "NativeSession",
    "OutputError",
    "PluginError",
    "RunReport",
    "Selection",
    "SessionFile",
    "Store",
    "StoreError",
    "TranscriptFormat",
    "atif",
    "context",
    "convert",
    "find_stores",
    "lines",
    "otel",
    "parse_time",
    "read",
    "request",
    "transcript",
    "verify",
]

PathLike = str | os.PathLike[str]
#: What :func:`transcript` renders to: a literal, so a misspelt format fails type-checking.
TranscriptFormat = Literal["markdown", "html", "text"]


def _paths(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def convert(
    paths: PathLike | Sequence[PathLike] = (),
    output: PathLike = "asf-out",
    *,
    format: str | None = None,
    plugins: AsfPluginManager | None = None,
    selection: Selection | None = None,
    redact: bool = False,
    prune: bool = False,
    on_wait: Callable[[Path], None] | None = None,
) -> RunReport:
    """Convert every store under ``paths`` (none: the default locations) into ``output``.

    The same files and ``report.json`` as ``asf convert``: ``selection`` picks sessions as
    ``--session``, ``--since`` ... do (each converted with its conversation), ``redact``
    replaces secrets and personal values as ``--redact`` does (it needs the ``redact`` extra:
    ``asf-sessions[redact]``, else :class:`MissingDetector` is raised). Problems outside a
    store (a path no plugin claims, a tie) are in ``errors``; a store that stopped early has
    its ``error``. ``prune`` deletes the ASF session files of earlier runs this one did not
    write, as ``--prune`` does (only without ``selection``: ``ValueError`` otherwise). Another
    run writing a store's output is waited for, as the command waits; ``on_wait`` hears of it
    first (the store's output directory), so a program can say why it waits. Raises
    :class:`OutputError` when the output cannot be written, and ``KeyboardInterrupt`` again
    after the store in progress has its report.
    """
    if prune and selection is not None and not selection.everything():
        raise ValueError("prune needs a whole run: a picked run does not write every session")
    pm = plugins or make_plugin_manager(quiet=True)
    redaction = SessionRedaction(Redactor()) if redact else None
    run, _ = convert_paths(
        pm,
        _paths(paths),
        Path(output),
        format=format,
        selection=selection,
        redaction=redaction,
        prune=prune,
        on_wait=on_wait,
    )
    if run.interrupted:
        raise KeyboardInterrupt
    run.warnings[:0] = pm.warnings
    return run


@frozen
class Store:
    """One store a plugin claimed: its sessions, native or as ASF, read on demand.

    Each call opens the store read-only, streams what it asks for and closes it again, so a
    store can be walked while its agent is writing to it.
    """

    candidate: Candidate
    plugins: AsfPluginManager

    @property
    def format(self) -> str:
        return self.candidate.claim.format

    @property
    def path(self) -> Path:
        return self.candidate.claim.path

    def info(self) -> dict[str, Any]:
        """What the plugin says about the store (name, schema version, ...)."""
        with host.opened(self.plugins, self.candidate) as store:
            return host.store_info(self.candidate.plugin, store)

    def native_sessions(self, selection: Selection | None = None) -> Iterator[NativeSession]:
        """The store's sessions as its plugin reads them, or those ``selection`` picks (its
        ``limit`` keeps the newest, in the store's order); findings are left out."""
        wanted = selection or Selection()
        with host.opened(self.plugins, self.candidate) as store:
            items = host.read(self.plugins, self.candidate.plugin, store, wanted)
            for item in filtered(items, wanted):
                if isinstance(item, NativeSession):
                    yield item

    def sessions(
        self, selection: Selection | None = None, *, redact: bool = False
    ) -> Iterator[ConvertedSession]:
        """Every session (or those picked, each with its conversation) converted to ASF, one
        at a time, in memory: nothing is written. ``redact``: as ``asf convert --redact``."""
        for item in self.converted(selection, redact=redact):
            if isinstance(item, ConvertedSession):
                yield item

    def converted(
        self, selection: Selection | None = None, *, redact: bool = False
    ) -> Iterator[ConvertedSession | Finding]:
        """The ASF sessions and every finding (strays, dropped data) on the way."""
        plugin = self.candidate.plugin
        wanted = selection or Selection()
        redaction = SessionRedaction(Redactor()) if redact else None
        with host.opened(self.plugins, self.candidate) as store:
            findings: list[Finding] = []

            def native() -> Iterator[NativeSession]:
                items = host.read(self.plugins, plugin, store, wanted, previews=False)
                for item in filtered(items, wanted):
                    if isinstance(item, NativeSession):
                        findings.extend(item.findings)
                        yield item
                    else:
                        findings.append(item)

            for item in host.convert(self.plugins, plugin, store, native(), wanted):
                yield from self._redacted(findings, redaction)
                findings.clear()
                if isinstance(item, Finding):
                    yield from self._redacted([item], redaction)
                else:
                    yield item if redaction is None else redaction.session(item)
            yield from self._redacted(findings, redaction)

    @staticmethod
    def _redacted(findings: list[Finding], redaction: SessionRedaction | None) -> list[Finding]:
        return findings if redaction is None else redaction.findings(findings)


def find_stores(
    paths: PathLike | Sequence[PathLike] = (),
    *,
    format: str | None = None,
    plugins: AsfPluginManager | None = None,
) -> tuple[list[Store], list[Finding]]:
    """The stores under ``paths`` (none: the default locations) and what went wrong looking,
    a plugin that could not be loaded included (a warning)."""
    pm = plugins or make_plugin_manager(quiet=True)
    found = _find_stores(pm, _paths(paths), format)
    unloaded = [Finding(kind="warning", code=PLUGIN_NOT_LOADED, message=w) for w in pm.warnings]
    return [Store(c, pm) for c in found.stores], [*unloaded, *found.problems]


def lines(session: ConvertedSession) -> Iterator[bytes]:
    """The lines of a converted session's file, header first, as ``asf convert`` writes them."""
    return session_lines(session.header, session.entries)


def read(source: PathLike | bytes) -> SessionFile:
    """Read an ASF session file (a path, or the file's bytes), any draft from 0.1 on.

    Deviations are kept in ``problems``; raises :class:`FormatError` only for data that
    cannot be ASF at all.
    """
    if isinstance(source, bytes):
        return parse_session(source)
    return read_session(Path(source))


def _leaf(session: SessionFile, leaf: str | None) -> str:
    """``leaf`` (a pre-0.5 file's own ids too, as ``asf export --leaf`` takes them), or the
    resume leaf; :class:`ContextError` when the session has no such entry (a bare
    ``KeyError`` of an id would not say what was asked)."""
    at = session.legacy.get(leaf, leaf) if leaf is not None else session.resume_leaf()
    if at is None:
        raise ContextError("the session has no entries, so no leaf to start from")
    if at not in session.by_id:
        raise ContextError(f"no entry {at} in the session")
    return at


def context(session: SessionFile, leaf: str | None = None) -> Context:
    """What a model call after ``leaf`` (default: the resume leaf) would receive; raises
    :class:`ContextError` when the session has no such entry."""
    return context_at(session, _leaf(session, leaf))


def request(session: SessionFile, response: str) -> dict[str, Any]:
    """The canonical Open Responses request that produced the ``response`` entry; raises
    :class:`ContextError` when it is not a response of the session or its instructions cannot
    be rebuilt."""
    return request_body(request_context(session, session.legacy.get(response, response)))


def verify(path: PathLike) -> list[Finding]:
    """Every finding for a session file or each ``*.jsonl`` under a directory."""
    return verify_path(Path(path))


def _view(session: SessionFile, leaf: str | None) -> PathView:
    return SessionTree(session).view(_leaf(session, leaf))


def _subagents(session: SessionFile, beside: PathLike | None) -> DirectoryIndex | None:
    if beside is not None:
        where = Path(beside)
        if not where.is_dir():  # a mistyped directory would silently leave sub-agents out
            missing = not where.exists()
            code = errno.ENOENT if missing else errno.ENOTDIR
            raise (FileNotFoundError if missing else NotADirectoryError)(
                code, os.strerror(code), str(where)
            )
        return DirectoryIndex(where)
    if session.path is not None:
        return DirectoryIndex(session.path.parent, recursive=False)
    return None


def atif(
    session: SessionFile, leaf: str | None = None, *, subagents: PathLike | None = None
) -> dict[str, Any]:
    """The ATIF-v1.8 trajectory of the path to ``leaf`` (default: the resume leaf).

    Sub-agent sessions are looked for under ``subagents`` (default: the file's directory;
    ``OSError`` when it is not a directory) and embedded. The mapping: docs/export.md.
    """
    index = _subagents(session, subagents)
    return atif_document(_view(session, leaf), index.resolver(session.path) if index else None)


def otel(
    session: SessionFile,
    leaf: str | None = None,
    *,
    content: bool = False,
    subagents: PathLike | None = None,
) -> dict[str, Any]:
    """The OpenTelemetry trace of the path to ``leaf``, an OTLP/JSON
    ``ExportTraceServiceRequest`` (``content``: with prompts, outputs and tool I/O)."""
    index = _subagents(session, subagents)
    resolver = index.resolver(session.path) if index else None
    return otel_request(_view(session, leaf), content=content, subsessions=resolver)


def transcript(
    session: SessionFile, leaf: str | None = None, *, to: TranscriptFormat = "markdown"
) -> str:
    """The path to ``leaf`` for people: ``to`` is ``markdown``, ``html`` (one self-contained
    page) or ``text``."""
    renderers = {"markdown": render_markdown, "html": render_html, "text": render_text}
    if to not in renderers:
        raise ValueError(f"unknown transcript format {to!r} (markdown, html or text)")
    return "".join(renderers[to](_transcript(_view(session, leaf))))
