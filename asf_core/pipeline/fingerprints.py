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
(the usual records, with no finding, by hand to the same result, each way:
:mod:`asf_core.pipeline.unit_records`, where the record classes are), and one that is
damaged, of another version or another store is ignored (everything is converted) with a
warning quoting cattrs' account of what is wrong. A run that may find the
whole store unchanged first asks :func:`~asf_core.pipeline.unchanged.holds` of the parsed
JSON as it is, without cattrs or this module (a nightly run with nothing to do is mostly
start-up).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from asf_core.files import read_regular, write_atomic
from asf_core.findings import DATA_DEPTH, Finding, nesting
from asf_core.layout import FINGERPRINTS_NAME
from asf_core.pipeline.unchanged import (
    IGNORED,
    VERSION,
    Read,
    holds,
    host_version,
    inside,
    records_bytes,
    store_name,
)
from asf_core.pipeline.unit_records import (
    FileStamp,
    Fingerprints,
    UnitRecord,
    WholeRecord,
    from_plain,
    to_plain,
)

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "IGNORED",
    "holds",
    "load",
    "save",
    "stamp",
    "stamp_of",
    "store_name",
    "trusted",
]


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


def load(
    dest: Path, format: str, store: str, read: Read | None = None
) -> tuple[Fingerprints | None, Finding | None]:
    """The records kept in ``dest`` for this store: None when there is no file or it was
    written by another asf (an upgrade: converting again is expected); None and a warning
    when it is damaged, of another version, or another store's. ``read``: the file as
    :func:`~asf_core.pipeline.unchanged.read_records` gave it (None: read here)."""
    path = dest / FINGERPRINTS_NAME
    if read is None:
        try:
            data = read_regular(path)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            return None, _warning(path, [exc.strerror or str(exc)])
    import cattrs

    try:
        parsed = json.loads(data) if read is None else read[1]
        if not isinstance(parsed, dict):
            return None, _warning(path, [f"not a JSON object but {type(parsed).__name__}"])
        records = from_plain(parsed) or _converter().structure(parsed, Fingerprints)
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
    plain = to_plain(records)
    data = records_bytes(_converter().unstructure(records) if plain is None else plain)
    write_atomic(dest / FINGERPRINTS_NAME, [data], durable=False)
