"""The hooks a format plugin implements, under the pluggy project name ``asf``.

Flow of ``asf convert PATH``: every plugin's ``discover`` is asked about PATH; the host picks
the winning claim; then only the winning plugin answers ``open_store``, ``read`` and
``convert`` (the host calls them through a subset hook caller, so no other plugin runs).

Parameters have no defaults (pluggy versions differ on them); a hook evolves by gaining
parameters, and an implementation takes only the ones it uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreHandle,
    Unit,
)

if TYPE_CHECKING:  # the model loads with a session to convert, not with the hooks
    from asf_core.model import Entry, Header

hookspec = pluggy.HookspecMarker("asf")


@hookspec
def discover(path: Path | None) -> list[Claim | Finding] | None:
    """Say whether a store of your format is at ``path``.

    Runs for every plugin, once per path the user names, and once with ``path`` None when the
    user names none.

    :param path: a file or directory the user named; None asks for your format's default
        locations (for example every profile database of the user's home), which exist now.
    :return: a claim per store found (a directory may hold several), or None (or an empty
        list) when nothing there is yours; and, among the claims, a warning
        :class:`Finding` (code ``unsearchable``, ``path`` the folder) for each folder you
        could not search, so the user hears what was passed over. Never raise for input that
        is not yours.
    """


@hookspec
def default_locations() -> list[Path] | None:
    """Say where ``discover(None)`` looks for your format's stores, whether or not any is
    there, so a user told that nothing was found hears where.

    Runs for every plugin, only when the default locations held no store.

    :return: the files or directories looked at, in the order looked at (None: not saying).
    """


@hookspec(firstresult=True)
def open_store(claim: Claim) -> StoreHandle | None:
    """Open the store your ``discover`` claimed, read-only.

    Runs once per claim that won discovery, for the winning plugin only. The host closes the
    handle when it is done with it.

    :param claim: the claim you returned from ``discover``.
    :return: an open handle; None means you cannot open it after all (the host reports that).
        Raise ``asf_core.formats.StoreError`` with a one-line message saying what is wrong for
        a store that is damaged beyond reading (the host reports it as the input's fault).
    """


@hookspec(firstresult=True)
def read(
    store: StoreHandle, selection: Selection, previews: bool, counting: bool
) -> Iterator[NativeSession | Finding] | None:
    """Yield the store's native sessions lazily, one at a time, and what you could not read.

    Runs for the winning plugin only. Never hold the whole store in memory: yield each session
    as it is read. A row you cannot read is yielded as a ``Finding`` of kind ``stray``, never
    raised.

    :param store: the handle from your ``open_store``.
    :param selection: the sessions the user asked for (``Selection()``: all). Optional: skip
        what it leaves out without reading it; you may yield more (the host filters again),
        never less.
    :param previews: whether the host shows each session's ``preview`` (``asf list``). False
        when it converts the sessions: you may leave ``preview`` None and skip what reading
        it costs (the Hermes plugin's is a query per session).
    :param counting: whether the host only counts the sessions (a progress line's total, before
        it converts them): you may then yield sessions with their ``id`` alone, and no
        findings, and skip reading the rest (the Claude Code plugin reads no transcript).
    :return: an iterator of sessions and findings. Only the plugin whose claim won is
        asked, so the handle is always yours: None is a broken contract (a plugin error).
    """


@hookspec(firstresult=True)
def convert(
    store: StoreHandle, sessions: Iterable[NativeSession], selection: Selection
) -> Iterator[ConvertedSession | Finding] | None:
    """Turn native sessions into ASF sessions, one at a time.

    Runs for the winning plugin only, after ``read``; ``sessions`` is (a selection of) what
    your ``read`` yielded, in its order. You decide how native sessions group into ASF
    sessions (a chain of continuations may become one), and you may read more of the store
    through ``store``.

    :param store: the handle from your ``open_store``.
    :param sessions: the native sessions to convert.
    :param selection: what the user asked for; when it is not ``Selection()``, ``sessions``
        are the selected ones: convert each with what it needs (its conversation), and leave
        out what belongs to no selected session (rows of no session, store-wide accounting).
    :return: an iterator of converted sessions (ids computed, entries in file order) and
        findings (what was mapped, dropped or stray). Only the plugin whose claim won is
        asked: None is a broken contract (a plugin error).
    """


@hookspec(firstresult=True)
def plan(store: StoreHandle, sessions: Iterable[NativeSession]) -> Iterator[Unit | Finding] | None:
    """Split the conversion of ``sessions`` into independent units (optional).

    Runs for the winning plugin only, instead of ``convert``, when the plugin implements it:
    each unit may then convert on another core, and a unit whose fingerprint did not change
    since the last run is not converted again. A plugin without it is converted through
    ``convert``, in the host's process, every time.

    :param store: the handle from your ``open_store``.
    :param sessions: the native sessions to convert, as for ``convert``.
    :return: an iterator of units (``asf_core.formats.Unit``), in the order their results
        are reported, and findings of the store as a whole. None: convert with ``convert``.
    """


@hookspec(firstresult=True)
def finish(
    store: StoreHandle, counts: Mapping[str, int]
) -> Iterator[ConvertedSession | Finding] | None:
    """What a planned conversion yields after its units: sessions and findings of the store
    as a whole (optional; only called after ``plan``).

    :param store: the handle from your ``open_store``.
    :param counts: the ``counts`` of every session the units gave, summed, whether converted
        in this run or carried over from the last (what the report shows).
    :return: an iterator of converted sessions and findings, as ``convert``'s; None for
        nothing more.
    """


@hookspec(firstresult=True)
def stamp(claim: Claim) -> str | None:
    """What the whole conversion of a planned store depends on, read without opening it
    (optional): equal stamps promise the same conversion, byte for byte.

    Asked before ``open_store`` when a whole store is converted unredacted. When the stamp is
    the one recorded by the last run (``fingerprints.json``) and every file that run wrote is
    still as written, the store is not opened at all: its report is the last run's, every
    session unchanged. Make it cheap and strict: the store's files' sizes, times and inodes
    (a modification time can be set back; a change time cannot), and your plugin's version.

    :param claim: the claim your ``discover`` made for the store.
    :return: the stamp; None when you cannot tell (e.g. the store is being written): the
        store is converted as usual.
    """


@hookspec
def personal(header: Header, entries: Sequence[Entry]) -> Mapping[str, Sequence[str]] | None:
    """The values naming people, chats or accounts in an ASF session your conversion wrote,
    read back from its file (optional): what your ``ConvertedSession.personal`` gave when it
    was converted.

    Runs for every plugin when an ASF file is redacted (``asf show FILE --redact``, ``asf
    export --redact``): the host replaces them wherever they occur, as ``convert --redact``
    would have, besides the secrets it finds itself. Read only members your plugin writes.

    :param header: the session's header.
    :param entries: its entries, in file order.
    :return: values by kind (``{"user_id": ["u-42"]}``); None or an empty mapping for a
        session your plugin did not write.
    """


__all__ = [
    "convert",
    "default_locations",
    "discover",
    "finish",
    "hookspec",
    "open_store",
    "personal",
    "plan",
    "read",
    "stamp",
]
