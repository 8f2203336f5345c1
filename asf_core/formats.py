"""The values format plugins and the host exchange through the hooks.

Kept apart from :mod:`asf_core.hookspecs` so a plugin can import them without pulling the
hook machinery, and so the host can type every hook call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from attrs import field, frozen

from asf_core.findings import Finding
from asf_core.model import Entry, Header

__all__ = ["Claim", "ConvertedSession", "Finding", "NativeSession", "StoreError", "StoreHandle"]


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
