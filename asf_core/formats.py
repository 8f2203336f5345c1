"""The values format plugins and the host exchange through the hooks.

Kept apart from :mod:`asf_core.hookspecs` so a plugin can import them without pulling the
hook machinery, and so the host can type every hook call.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from attrs import Attribute, field, frozen

from asf_core.findings import Finding

if TYPE_CHECKING:  # the model loads with the first session, not with the hooks' values
    from asf_core.model import Entry, Header

__all__ = [
    "Claim",
    "ConvertedSession",
    "Finding",
    "Job",
    "NativeSession",
    "NeedsHost",
    "Selection",
    "StoreChanged",
    "StoreError",
    "StoreHandle",
    "Unit",
    "absolute_anywhere",
    "newest_first",
    "readable_store",
]


@frozen(kw_only=True)
class Claim:
    """A plugin's answer to ``discover``: "a store of my format is at ``path``".

    ``confidence`` runs from 0 (a guess) to 1 (certain: a signature matched). The host picks
    the highest; equal highest claims from different formats on one path are an ambiguity the
    user resolves with ``--format``.
    """

    format: str
    path: Path
    confidence: float
    #: A short human note: why the plugin claims it ("state.db with a sessions table").
    detail: str = ""
    #: What people call the store, shown in listings and progress ("my-home", "my-home/work"
    #: for a profile); empty: the host names it by its path.
    label: str = ""


@frozen(kw_only=True)
class NativeSession:
    """One session as the source format holds it, yielded lazily by ``read``.

    The host lists these (``asf list``) and hands them back to ``convert``; ``native`` is the
    plugin's own object and is opaque to the host.
    """

    id: str
    title: str | None = None
    source: str | None = None
    #: RFC 3339 UTC times, when the source records them.
    started: str | None = None
    ended: str | None = None
    #: How the session relates to ``parent`` in the source's own terms (e.g. ``continuation``).
    relation: str | None = None
    parent: str | None = None
    #: Row counts by kind, e.g. ``{"active": 12, "inactive": 3}``.
    counts: Mapping[str, int] = field(factory=dict)
    findings: Sequence[Finding] = ()
    native: Any = None
    #: The working directory the session ran in, when the source records one.
    cwd: str | None = None
    #: Other facts a listing shows, by name, as the plugin spells them (e.g.
    #: ``{"git_branch": "main", "version": "2.1.39"}``): what identifies the session to its
    #: user beyond the members above.
    details: Mapping[str, str] = field(factory=dict)
    #: The model the session ran with, when the source records one.
    model: str | None = None
    #: How many source units (rows, lines) the session holds: its size, for ``--min-rows``.
    rows: int | None = None
    #: The start of the first user message, for a listing of a session without a title.
    preview: str | None = None

    def started_at(self) -> datetime | None:
        """``started`` as a datetime; None when absent or not RFC 3339."""
        return _instant(self.started)


def _instant(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _aware(_: object, member: Attribute[Any], value: datetime | None) -> None:
    # Compared with sessions' aware start times: naive, it would fail inside the plugin.
    if value is not None and value.utcoffset() is None:
        raise ValueError(
            f"{member.name} {value.isoformat()} has no timezone: give it one "
            "(local time: .astimezone()) or use parse_time"
        )


def absolute_anywhere(path: str) -> bool:
    """Whether ``path`` is absolute on POSIX or on Windows: the directories sessions record
    (they may come from either system, whatever this one is)."""
    return PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()


def _absolute(_: object, member: Attribute[Any], value: str | None) -> None:
    # Sessions record absolute directories: a relative one (``--cwd`` resolves it) would
    # select nothing, silently.
    if value is not None and not absolute_anywhere(value):
        raise ValueError(f"{member.name} {value!r} is not an absolute path")


def _count(_: object, member: Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{member.name} {value} is negative")


@frozen(kw_only=True)
class Selection:
    """The native sessions a user asked for; each member narrows, ``Selection()`` is all.

    A plugin that takes the ``selection`` parameter of ``read`` and ``convert`` uses it to
    skip what is not selected without reading it; it may yield more than selected (the host
    applies :meth:`matches` and ``limit`` again), never less.
    """

    #: Session ids, or prefixes of them (a session is selected when its id starts with one).
    ids: tuple[str, ...] = ()
    #: The ``ids`` are whole ids, not prefixes (set by the host once it resolved prefixes).
    exact: bool = False
    #: Started at or after ``since`` and before ``until`` (timezone-aware, else ValueError; a
    #: session without a start time is then not selected).
    since: datetime | None = field(default=None, validator=_aware)
    until: datetime | None = field(default=None, validator=_aware)
    #: One of these sources (exactly as the plugin spells them).
    sources: tuple[str, ...] = ()
    #: A substring of the title, compared case-insensitively and however its accents are
    #: encoded (composed or not: NFC and NFD spell one title).
    title: str | None = None
    #: The working directory, or a directory above it (an absolute path, else ValueError).
    cwd: str | None = field(default=None, validator=_absolute)
    #: A substring of the model, compared as ``title`` is.
    model: str | None = None
    #: At least this many ``rows`` (not negative, else ValueError).
    min_rows: int | None = field(default=None, validator=_count)
    #: At most this many sessions, the newest (by ``started``) first (not negative).
    limit: int | None = field(default=None, validator=_count)

    def everything(self) -> bool:
        """Whether nothing is narrowed: every session of the store is selected."""
        return self == Selection()

    def matches_id(self, session_id: str) -> bool:
        """Whether an id is selected by ``ids`` (every id is when there are none)."""
        if not self.ids:
            return True
        if self.exact:
            return session_id in self.ids
        return any(session_id.startswith(wanted) for wanted in self.ids)

    def matches(self, session: NativeSession, *, rows: bool = True) -> bool:
        """Whether a session passes every member but ``limit`` (``rows``: and ``min_rows``,
        which a plugin may check after it counted the rows of the others)."""
        if not self.matches_id(session.id):
            return False
        if self.sources and session.source not in self.sources:
            return False
        if self.title is not None and not _contains(session.title, self.title):
            return False
        if self.model is not None and not _contains(session.model, self.model):
            return False
        if self.cwd is not None and not _under(session.cwd, self.cwd):
            return False
        if self.since is not None or self.until is not None:
            started = session.started_at()
            if started is None:
                return False
            if self.since is not None and started < self.since:
                return False
            if self.until is not None and started >= self.until:
                return False
        return not (rows and self.min_rows is not None and (session.rows or 0) < self.min_rows)


def _folded(text: str) -> str:
    """``text`` for a comparison blind to case and to how accents are encoded: a title typed
    composed (NFC, most keyboards) finds one stored decomposed (NFD, macOS file names)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def _contains(text: str | None, wanted: str) -> bool:
    return _folded(wanted) in _folded(text or "")


def _under(cwd: str | None, directory: str) -> bool:
    if not cwd:
        return False
    top = directory.rstrip("/\\") or directory
    return cwd == top or cwd.startswith((top + "/", top + "\\"))


def newest_first(session: NativeSession) -> tuple[bool, float]:
    """A sort key putting the most recently started session first (undated ones last)."""
    started = session.started_at()
    return (started is None, 0.0 if started is None else -started.timestamp())


@frozen(kw_only=True)
class ConvertedSession:
    """One ASF session, ready to write: its header and its entries, ids computed, in file order.

    ``name`` names the session in the store's report, whose ``files`` maps it to the file the
    host writes (``<project key>/<created at>_<session id>.jsonl``, from the header); it must
    be unique within the store and usable as a file name (no ``/``, not hidden). ``sources``
    names every source unit it was built from; ``counts`` are the plugin's figures for the
    report (rows read, entries written, ...).

    ``entries`` may be a list or any iterable, a generator included: the host consumes it
    once, in order, writing each entry as it comes, so a plugin can hand over a session larger
    than memory.
    """

    header: Header
    entries: Iterable[Entry]
    name: str
    sources: Sequence[str] = ()
    counts: Mapping[str, int] = field(factory=dict)
    findings: Sequence[Finding] = ()
    #: The ids of the native sessions (as ``read`` yields them) this ASF session holds, so a
    #: host can tell which ASF session shows a session the user picked.
    native_ids: Sequence[str] = ()
    #: Values that name people, chats or accounts, by kind (``{"user_id": ["u-42"]}``): a
    #: host redacting the output replaces them wherever they occur, beside the secrets it
    #: finds itself. Only the values the source keeps in fields of its own (identity columns).
    personal: Mapping[str, Sequence[str]] = field(factory=dict)


#: A unit's conversion, ready to run anywhere: a picklable callable (a module-level function
#: under ``functools.partial``, or an instance of a module-level class) that needs nothing but
#: itself, no open store, and yields what ``convert`` yields for the unit.
Job: TypeAlias = Callable[[], Iterable["ConvertedSession | Finding"]]


@frozen(kw_only=True)
class Unit:
    """An independent part of a store's conversion, what ``plan`` yields.

    The host converts units one by one or on several cores at once (their results are reported
    in the order ``plan`` yielded them, so the output is the same either way), and skips a
    unit whose ``fingerprint`` is the one recorded beside the output when its files are still
    the ones written then.

    ``key`` names the unit, stable across runs and unique within the store (e.g. the id of the
    conversation's first session). ``fingerprint`` changes whenever anything the unit's output
    depends on changes, the plugin's own version included; it must be cheap (counts, highest
    ids, states: never the rows themselves); ``""`` means "cannot tell": always converted.
    ``prepare`` is called in the host's process, with the store open, only for a unit that
    must be converted, in plan order (possibly while earlier units convert elsewhere): it
    returns the :data:`Job`, with what the unit needs from the store or how to read it where
    the job runs (then, when that would not give what the host's store holds, the job raises
    :class:`NeedsHost`).
    """

    key: str
    fingerprint: str = ""
    prepare: Callable[[], Job]


@runtime_checkable
class StoreHandle(Protocol):
    """What ``open_store`` returns: an open, read-only store, closed by the host."""

    def info(self) -> Mapping[str, Any]:
        """Facts about the store for the report (name, schema version, ...)."""
        ...

    def close(self) -> None:
        """Release the store; the host calls it exactly once."""
        ...


class StoreError(Exception):
    """A store its plugin recognises but cannot read: damaged, truncated, unreadable, or not of
    the format after all.

    ``open_store`` raises it (so may ``read`` and ``convert``, for damage found part way) so the
    user hears what is wrong with their file rather than that the plugin crashed: the host puts
    the store's path before the message and exits 2, not 3. The message is one line saying what
    is wrong ("truncated: 20480 of 389120 bytes"), without the path.
    """


def readable_store(path: Path) -> bool:
    """Whether a store's ``path`` is a file (else a directory), once it is known to be one
    or the other and readable (a directory: searchable too); :class:`StoreError` saying
    what is wrong otherwise. For an ``open_store`` taking a file or a directory."""
    import os

    try:
        is_file = path.is_file()
        if not is_file and not path.is_dir():
            raise StoreError("no such file or directory")
        if not os.access(path, os.R_OK | (0 if is_file else os.X_OK)):
            raise StoreError("permission denied")
    except OSError as exc:
        raise StoreError(f"cannot read: {exc.strerror or exc}") from exc
    return is_file


class StoreChanged(StoreError):
    """The store changed while it was read, so what was read may not be one state of it (a
    plugin reading a store in place, without a snapshot of its own, finds out afterwards).
    A conversion is started again from the store's opening, a few times at most; anywhere
    else it is the store's error like any other."""


class NeedsHost(Exception):
    """Raised by a unit's :data:`Job` run in a worker process when it cannot give there the
    result it would give in the host's (e.g. the store changed since the host read the plan,
    and the job read its data itself): the host runs the job again in its own process, where
    it reads what the host's open store holds. Raised in the host's process, it is a bug."""
