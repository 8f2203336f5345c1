"""What the last run wrote for each unit of a store, kept beside its output to skip unchanged
units next time.

``fingerprints.json`` in a store's output directory maps each unit's key (see
:class:`asf_core.formats.Unit`) to the fingerprint the plugin gave it and what converting it
gave: each session's file with the size, modification time and inode it had once written, its
counts and findings, and the unit's other findings, in order. A unit is carried over (not
converted) only when the plugin gives the same fingerprint and every one of its files still
has the size, time and inode recorded: a file deleted, edited or replaced since is rewritten.
``whole`` records the plugin's stamp of the whole store (the ``stamp`` hook) and what the run
wrote besides its units (``report.json``, the sessions ``finish`` gave): when all of it still
holds, the store is not opened at all.

The file is the host's own closed data: it is read back with cattrs and ``forbid_extra_keys``
(the usual records, with no finding, by hand to the same result, each way), and one that is
damaged, of another version or another store is ignored (everything is converted) with a
warning quoting cattrs' account of what is wrong. A run that may find the
whole store unchanged first asks :func:`~asf_core.pipeline.unchanged.holds` of the parsed
JSON as it is, without cattrs or this module (a nightly run with nothing to do is mostly
start-up).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from attrs import field, frozen

from asf_core.files import read_regular, write_atomic
from asf_core.findings import DATA_DEPTH, Finding, nesting
from asf_core.layout import FINGERPRINTS_NAME
from asf_core.pipeline.unchanged import (
    IGNORED,
    VERSION,
    holds,
    host_version,
    inside,
    records_bytes,
    store_name,
)

if TYPE_CHECKING:
    import cattrs

_T = TypeVar("_T")

__all__ = [
    "IGNORED",
    "FileStamp",
    "Fingerprints",
    "SessionRecord",
    "UnitRecord",
    "WholeRecord",
    "holds",
    "load",
    "save",
    "stamp",
    "stamp_of",
    "store_name",
    "trusted",
]


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


@cache
def _converter() -> cattrs.Converter:
    """A converter for this closed data: unknown members refuse the file, nothing coerces."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    conv = cattrs.Converter(forbid_extra_keys=True)
    for kind in (int, str):

        def strict(value: object, tp: type, kind: type = kind) -> object:
            if type(value) is not kind:
                raise TypeError(f"expected {kind.__name__}, not {type(value).__name__}")
            return value

        conv.register_structure_hook(kind, strict)
    finding = make_dict_structure_fn(Finding, conv, data=override(struct_hook=_mapping))
    conv.register_structure_hook(Finding, finding)
    conv.register_unstructure_hook(
        Finding,
        make_dict_unstructure_fn(
            Finding, conv, _cattrs_omit_if_default=True, kind=override(omit_if_default=False)
        ),
    )
    return conv


def _mapping(value: object, _: object) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, not {type(value).__name__}")
    if nesting(value) > DATA_DEPTH:  # writing it again would recurse that deep
        raise TypeError("nested too deep")
    return value


def stamp(path: Path) -> FileStamp:
    """The stamp of a file as it is now (``OSError`` if it is gone)."""
    return stamp_of(path.stat())


def stamp_of(st: os.stat_result) -> FileStamp:
    """The stamp of a file by its status (e.g. taken from the file written, before its
    rename: see :func:`asf_core.files.write_atomic_stat`)."""
    return FileStamp(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino)


def trusted(dest: Path, record: UnitRecord) -> bool:
    """Whether every file of a unit's record is still the one written."""
    for item in record.items:
        if item.session is None:
            continue
        if not inside(item.session.file):
            return False
        try:
            if stamp(dest / item.session.file) != item.session.stamp:
                return False
        except OSError:
            return False
    return True


def load(dest: Path, format: str, store: str) -> tuple[Fingerprints | None, Finding | None]:
    """The records kept in ``dest`` for this store: None when there is no file or it was
    written by another asf (an upgrade: converting again is expected); None and a warning
    when it is damaged, of another version, or another store's."""
    path = dest / FINGERPRINTS_NAME
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, _warning(path, [exc.strerror or str(exc)])
    import cattrs

    try:
        parsed = json.loads(data)
        if not isinstance(parsed, dict):
            return None, _warning(path, [f"not a JSON object but {type(parsed).__name__}"])
        records = _plain_records(parsed) or _converter().structure(parsed, Fingerprints)
    except ValueError as exc:  # not JSON, or not UTF-8
        return None, _warning(path, [f"not JSON: {exc}"])
    except RecursionError:  # arrays or objects nested deeper than the parser goes
        return None, _warning(path, ["not JSON this asf writes: nested too deep"])
    except cattrs.BaseValidationError as exc:
        return None, _warning(path, cattrs.transform_error(exc, path="fingerprints"))
    if (records.version, records.format, records.store) != (VERSION, format, store):
        return None, _warning(path, ["written by another version of asf or for another store"])
    if records.host != host_version():
        return None, None
    return records, None


def _warning(path: Path, lines: list[str]) -> Finding:
    return Finding(
        kind="warning",
        code=IGNORED,
        message=f"{path}: ignored, every unit is converted again: " + "; ".join(lines),
        path=str(path),
    )


def save(
    dest: Path,
    format: str,
    store: str,
    units: Mapping[str, UnitRecord],
    whole: WholeRecord | None = None,
) -> None:
    """Write the records atomically (``OSError`` if that fails)."""
    records = Fingerprints(
        version=VERSION,
        host=host_version(),
        format=format,
        store=store,
        units=dict(units),
        whole=whole,
    )
    plain = _plain_json(records)
    data = records_bytes(_converter().unstructure(records) if plain is None else plain)
    write_atomic(dest / FINGERPRINTS_NAME, [data], durable=False)


# The usual records (no finding anywhere: a healthy store) go to and from JSON without cattrs,
# which takes about 35 µs a unit each way: a run after Hermes appended to one session of 500
# spent 30 ms of its 260 there. Anything else (a finding, a member missing, one of another
# type, a list where a mapping goes) is cattrs' to structure or refuse, with its account of
# what is wrong. Hypothesis holds both routes to the same records and bytes.


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


def _plain_records(value: dict[str, object]) -> Fingerprints | None:
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


def _plain_json(records: Fingerprints) -> dict[str, object] | None:
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
