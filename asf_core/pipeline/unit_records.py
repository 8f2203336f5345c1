"""The records ``fingerprints.json`` holds for a store's units, and the usual ones' way to
and from plain JSON without cattrs.

The classes are what :mod:`asf_core.pipeline.fingerprints` loads, saves and trusts; cattrs
structures and unstructures them there. A healthy store's records carry no finding, and those
go both ways by hand here (:func:`from_plain`, :func:`to_plain`), to the same records and
bytes as cattrs gives: about 35 µs a unit each way saved (a run after Hermes appended to one
session of 500 spent 30 ms of its 260 in cattrs). Anything else (a finding, a member missing,
one of another type, a list where a mapping goes) is cattrs' to structure or refuse, with its
account of what is wrong. Hypothesis holds both routes to the same records and bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from attrs import field, frozen

from asf_core.findings import Finding

__all__ = [
    "FileStamp",
    "Fingerprints",
    "SessionRecord",
    "UnitItem",
    "UnitRecord",
    "WholeRecord",
    "from_plain",
    "to_plain",
]

_T = TypeVar("_T")


@frozen(kw_only=True)
class FileStamp:
    """What identifies a file as the one written: its size, modification time and inode."""

    size: int
    mtime_ns: int
    inode: int


@frozen(kw_only=True)
class SessionRecord:
    """One session a unit gave, as the report counts it, and the file it was written to."""

    name: str
    #: The file, relative to the store's output directory.
    file: str
    id: str
    entries: int
    stamp: FileStamp
    counts: Mapping[str, int] = field(factory=dict)
    findings: tuple[Finding, ...] = ()
    native_ids: tuple[str, ...] = ()


@frozen(kw_only=True)
class UnitItem:
    """One thing a unit gave, in order: a session or a finding."""

    session: SessionRecord | None = None
    finding: Finding | None = None


@frozen(kw_only=True)
class UnitRecord:
    fingerprint: str
    items: tuple[UnitItem, ...] = ()


@frozen(kw_only=True)
class WholeRecord:
    """The whole store as the last run found it: the plugin's stamp of it (see the ``stamp``
    hook), taken before it was read, and the stamp of the ``report.json`` that run wrote."""

    stamp: str
    report: FileStamp
    #: The files besides the units' the report names, by path: sessions written outside any
    #: unit (by ``finish``) and files left from earlier runs (:mod:`asf_core.pipeline.left`).
    files: Mapping[str, FileStamp] = field(factory=dict)


@frozen(kw_only=True)
class Fingerprints:
    """The records of one store's output directory."""

    version: int
    #: The writing code's digest (:func:`host_version`): another asf may write other bytes.
    host: str
    format: str
    #: The store (:func:`~asf_core.pipeline.unchanged.store_name`; a record of another store
    #: is not trusted).
    store: str
    units: Mapping[str, UnitRecord] = field(factory=dict)
    #: Present when the plugin stamped the store and the run completed without a problem.
    whole: WholeRecord | None = None


def _plain_stamp(value: object) -> FileStamp | None:
    if type(value) is not dict or value.keys() != _STAMP_KEYS:
        return None
    size, mtime_ns, inode = value["size"], value["mtime_ns"], value["inode"]
    if type(size) is not int or type(mtime_ns) is not int or type(inode) is not int:
        return None
    return FileStamp(size=size, mtime_ns=mtime_ns, inode=inode)


def _plain_session(value: dict[str, object]) -> SessionRecord | None:
    if not _SESSION_NEEDS <= value.keys() <= _SESSION_KEYS or value.get("findings", []) != []:
        return None
    name, file, ident, entries = value["name"], value["file"], value["id"], value["entries"]
    counts, native = value.get("counts", {}), value.get("native_ids", [])
    if type(name) is not str or type(file) is not str or type(ident) is not str:
        return None
    if type(entries) is not int or type(counts) is not dict or type(native) is not list:
        return None
    if not all(type(k) is str and type(n) is int for k, n in counts.items()):
        return None
    if not all(type(n) is str for n in native):
        return None
    stamp = _plain_stamp(value["stamp"])
    if stamp is None:
        return None
    return SessionRecord(
        name=name,
        file=file,
        id=ident,
        entries=entries,
        stamp=stamp,
        counts=counts,
        native_ids=tuple(native),
    )


def _plain_unit(value: object) -> UnitRecord | None:
    if type(value) is not dict or not {"fingerprint"} <= value.keys() <= _UNIT_KEYS:
        return None
    fingerprint, listed = value["fingerprint"], value.get("items", [])
    if type(fingerprint) is not str or type(listed) is not list:
        return None
    items = []
    for item in listed:
        if type(item) is not dict or not item.keys() <= _ITEM_KEYS:
            return None
        if item.get("finding") is not None:
            return None
        session = item.get("session")
        if session is None:
            items.append(UnitItem())
            continue
        record = _plain_session(session) if type(session) is dict else None
        if record is None:
            return None
        items.append(UnitItem(session=record))
    return UnitRecord(fingerprint=fingerprint, items=tuple(items))


def _plain_whole(value: dict[str, object]) -> WholeRecord | None:
    if not {"stamp", "report"} <= value.keys() <= _WHOLE_KEYS:
        return None
    stamp, report = value["stamp"], _plain_stamp(value["report"])
    files = _plain_each(value.get("files", {}), _plain_stamp)
    if type(stamp) is not str or report is None or files is None:
        return None
    return WholeRecord(stamp=stamp, report=report, files=files)


def _plain_each(value: object, read: Callable[[object], _T | None]) -> dict[str, _T] | None:
    """A JSON object's members each read by ``read``; None if any is not."""
    if type(value) is not dict:
        return None
    out = {}
    for key, member in value.items():
        found = read(member)
        if type(key) is not str or found is None:
            return None
        out[key] = found
    return out


def from_plain(value: dict[str, object]) -> Fingerprints | None:
    """The records as cattrs structures them, for the usual file; None for any other."""
    if not _TOP_NEEDS <= value.keys() <= _TOP_KEYS:
        return None
    version, host, format, store = value["version"], value["host"], value["format"], value["store"]
    if type(version) is not int or type(host) is not str:
        return None
    if type(format) is not str or type(store) is not str:
        return None
    units, whole = _plain_each(value.get("units", {}), _plain_unit), value.get("whole")
    if units is None:
        return None
    whole_record = None
    if whole is not None:
        whole_record = _plain_whole(whole) if type(whole) is dict else None
        if whole_record is None:
            return None
    return Fingerprints(
        version=version, host=host, format=format, store=store, units=units, whole=whole_record
    )


def to_plain(records: Fingerprints) -> dict[str, object] | None:
    """The records as cattrs unstructures them, when no finding is among them; else None."""

    def stamp(s: FileStamp) -> dict[str, int]:
        return {"size": s.size, "mtime_ns": s.mtime_ns, "inode": s.inode}

    units: dict[str, object] = {}
    for key, unit in records.units.items():
        items: list[object] = []
        for item in unit.items:
            session = item.session
            if item.finding is not None or (session is not None and session.findings):
                return None
            if session is not None:
                session_json: object = {
                    "name": session.name,
                    "file": session.file,
                    "id": session.id,
                    "entries": session.entries,
                    "stamp": stamp(session.stamp),
                    "counts": dict(session.counts),
                    "findings": [],
                    "native_ids": list(session.native_ids),
                }
            else:
                session_json = None
            items.append({"session": session_json, "finding": None})
        units[key] = {"fingerprint": unit.fingerprint, "items": items}
    whole = records.whole
    return {
        "version": records.version,
        "host": records.host,
        "format": records.format,
        "store": records.store,
        "units": units,
        "whole": None
        if whole is None
        else {
            "stamp": whole.stamp,
            "report": stamp(whole.report),
            "files": {name: stamp(s) for name, s in whole.files.items()},
        },
    }


_STAMP_KEYS: Final = {"size", "mtime_ns", "inode"}
_SESSION_NEEDS: Final = {"name", "file", "id", "entries", "stamp"}
_SESSION_KEYS: Final = {*_SESSION_NEEDS, "counts", "findings", "native_ids"}
_UNIT_KEYS: Final = {"fingerprint", "items"}
_ITEM_KEYS: Final = {"session", "finding"}
_WHOLE_KEYS: Final = {"stamp", "report", "files"}
_TOP_NEEDS: Final = {"version", "host", "format", "store"}
_TOP_KEYS: Final = {*_TOP_NEEDS, "units", "whole"}
