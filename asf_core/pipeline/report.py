"""The conversion report: what ``asf convert`` did to one store, kept beside its output.

Strays and dropped data are expected outcomes of converting real logs, not failures, so the
report is where they live: every one with its reason, so nothing is lost silently.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import define, field

from asf_core.files import read_regular, write_atomic_stat
from asf_core.findings import DATA_DEPTH, Finding, nesting
from asf_core.safe_text import json_safe

__all__ = [
    "RunReport",
    "StoreReport",
    "json_blocks",
    "json_bytes",
    "json_text",
    "read_report",
    "store_json",
    "write_report",
]


#: The figures of a store's report that the run's totals sum.
_COUNTS = (
    "sessions_read",
    "sessions_written",
    "files_written",
    "files_unchanged",
    "entries_written",
    "bytes_written",
)


@define(kw_only=True)
class StoreReport:
    """Figures for one store, filled in while it converts (hence mutable)."""

    format: str
    plugin: str
    path: str
    #: Where its ASF files went: ``<out>/<format>/<store label>``.
    output: str
    #: The store's own ``info()``: name, schema version, ...
    store: dict[str, Any] = field(factory=dict)
    sessions_read: int = 0
    sessions_written: int = 0
    #: Of ``sessions_written``: files whose bytes changed (or are new) and were rewritten.
    files_written: int = 0
    files_unchanged: int = 0
    entries_written: int = 0
    bytes_written: int = 0
    strays: list[Finding] = field(factory=list)
    dropped: list[Finding] = field(factory=list)
    #: Findings of every other kind (warning, info, ...).
    findings: list[Finding] = field(factory=list)
    #: Each converted session's file, relative to ``output``, by the plugin's session name.
    files: dict[str, str] = field(factory=dict)
    #: The plugins' own figures, summed over every converted session.
    counts: dict[str, int] = field(factory=dict)
    #: Whether secrets and personal values were replaced (``--redact``).
    redacted: bool = False
    #: What was replaced, by session name and kind (never the values); the findings read
    #: with the store's sessions, outside any session, are under ``(store)``.
    redactions: dict[str, dict[str, int]] = field(factory=dict)
    #: The one-line error that stopped this store, if one did.
    error: str | None = None
    #: False when the run stopped (error or Ctrl-C) before the store was done.
    complete: bool = False

    def note(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            bucket = {"stray": self.strays, "dropped": self.dropped}.get(finding.kind)
            (self.findings if bucket is None else bucket).append(finding)

    def add_redactions(self, name: str, counts: Mapping[str, int]) -> None:
        if counts:
            mine = self.redactions.setdefault(name, {})
            for kind, n in counts.items():
                mine[kind] = mine.get(kind, 0) + n

    def add_counts(self, counts: Mapping[str, int]) -> None:
        for key, value in counts.items():
            self.counts[key] = self.counts.get(key, 0) + int(value)


@define(kw_only=True)
class RunReport:
    """Everything one ``asf convert`` did; ``--json`` prints it."""

    output: str
    stores: list[StoreReport] = field(factory=list)
    #: One line per problem outside a store (unrecognised paths, plugin failures in discover).
    errors: list[str] = field(factory=list)
    #: One line per folder passed over while looking for stores (it could not be searched).
    warnings: list[str] = field(factory=list)
    interrupted: bool = False

    def totals(self) -> dict[str, int]:
        sums = {key: sum(int(getattr(s, key)) for s in self.stores) for key in _COUNTS}
        sums["strays"] = sum(len(s.strays) for s in self.stores)
        sums["dropped"] = sum(len(s.dropped) for s in self.stores)
        sums["findings"] = sum(len(s.findings) for s in self.stores)
        sums["warnings"] = sum(1 for s in self.stores for f in s.findings if f.kind == "warning")
        sums["redacted"] = sum(
            n for s in self.stores for c in s.redactions.values() for n in c.values()
        )
        return sums

    def to_json(self) -> dict[str, Any]:
        """The run's report as JSON (what ``asf convert --json`` prints), totals included:
        each store as ``report.json`` holds it (:func:`store_json`)."""
        return {
            "output": self.output,
            "stores": [store_json(store) for store in self.stores],
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "interrupted": self.interrupted,
            "totals": self.totals(),
        }


def store_json(report: StoreReport) -> dict[str, Any]:
    """One store's report as the JSON written to ``report.json``: its members in order, each
    finding's without those left at their default (``kind`` always), as the report converter
    unstructures it. Built here, without cattrs, when the report holds nothing but JSON values
    (always, in practice): the run after a conversion rewrites the report and nothing else
    needs cattrs. Anything else is left to the converter."""
    try:
        obj = {name: _plain(getattr(report, name)) for name in _STORE_MEMBERS}
    except _NotPlain:
        from asf_core.codec import report_converter

        obj = report_converter().unstructure(report)
    return _sort_counts(obj)


def _default(member: attrs.Attribute[Any]) -> Any:
    """A member's default value (a factory's product)."""
    factory = getattr(member.default, "factory", None)
    return factory() if callable(factory) else member.default


class _NotPlain(Exception):
    """A value that is not plain JSON nor a finding."""


#: The members of a store's report, in order; and of a finding, with their defaults.
_STORE_MEMBERS = tuple(a.name for a in attrs.fields(StoreReport))
_FINDING_MEMBERS = tuple((a.name, _default(a)) for a in attrs.fields(Finding))


def _plain(value: Any) -> Any:
    """A value of a report as JSON: a finding as its members, a tuple as a list, containers
    copied."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    if kind is Finding:
        return {
            name: _plain(getattr(value, name))
            for name, default in _FINDING_MEMBERS
            if name == "kind" or getattr(value, name) != default
        }
    raise _NotPlain


def _sort_counts(store: dict[str, Any]) -> dict[str, Any]:
    """A store's counts by name: the same report whether its units were converted (their
    counts in the plugin's order) or carried over (in the record's)."""
    store["counts"] = dict(sorted(store["counts"].items()))
    return store


#: About how much JSON text :func:`json_blocks` gathers before it hands a block on.
_BLOCK = 64 * 1024


def json_blocks(value: Any, *, terminal: bool = False) -> Iterator[str]:
    """:func:`json_text` in blocks of about 64 KiB, each encoded only when the one before has
    been taken: a large document (``asf show --json`` of a long session) is never held whole
    as text. Escaping block by block gives the same text: :func:`json_safe` replaces single
    characters."""
    from asf_core.json_chunks import chunks  # orjson: not loaded by a run with nothing to do

    pending: list[str] = []
    size = 0
    for chunk in chunks(value):
        pending.append(chunk)
        size += len(chunk)
        if size >= _BLOCK:
            yield json_safe("".join(pending), terminal=terminal)
            pending.clear()
            size = 0
    pending.append("\n")
    yield json_safe("".join(pending), terminal=terminal)


def json_text(value: Any, *, terminal: bool = False) -> str:
    """JSON for people and tools: indented, a final newline, lone surrogates escaped (and with
    ``terminal``, every control character: see :func:`~asf_core.safe_text.json_safe`)."""
    return "".join(json_blocks(value, terminal=terminal))


def json_bytes(value: Any) -> bytes:
    """:func:`json_text` as UTF-8."""
    return json_text(value).encode()


def write_report(
    path: Path, report: StoreReport | RunReport, *, only_if_changed: bool = False
) -> os.stat_result | None:
    """Write a report as JSON through a temporary file and a rename: whole or not at all.
    With ``only_if_changed``, a file already holding these bytes is left alone. Returns the
    status of the file written, taken before its rename (another run's report renamed over
    it since is not ours), or None when it was left alone."""
    value = report.to_json() if isinstance(report, RunReport) else store_json(report)
    data = json_bytes(value)
    if only_if_changed:
        with contextlib.suppress(OSError):
            if path.read_bytes() == data:
                return None
    return write_atomic_stat(path, [data])


#: The members of ``report.json`` that hold findings.
_FINDINGS = ("strays", "dropped", "findings")


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _mapping_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, dict) and all(check(x) for x in v.values())


#: Each member of :class:`StoreReport` and the JSON it must hold (each finding is checked by
#: :meth:`~asf_core.findings.Finding.from_json`).
_MEMBERS: dict[str, Callable[[Any], bool]] = {
    **dict.fromkeys(("format", "plugin", "path", "output"), _is_str),
    "store": lambda v: isinstance(v, dict),
    **dict.fromkeys(_COUNTS, _is_int),
    "files": _mapping_of(_is_str),
    "counts": _mapping_of(_is_int),
    "redacted": lambda v: type(v) is bool,
    "redactions": _mapping_of(_mapping_of(_is_int)),
    "error": lambda v: v is None or isinstance(v, str),
    "complete": lambda v: type(v) is bool,
    **dict.fromkeys(_FINDINGS, lambda v: isinstance(v, list)),
}


def read_report(path: Path) -> StoreReport:
    """A store's ``report.json`` as written (``ValueError`` when it is not one).

    Read back without cattrs: a run that finds a whole store unchanged reads this and little
    else, and should not load cattrs for it. Each member is checked to hold what this asf
    writes there (a file edited in place keeping its size and times is not ours any more).
    """
    try:
        obj = json.loads(read_regular(path))
        if not isinstance(obj, dict):
            raise TypeError("not an object")
        for name, value in obj.items():
            if not _MEMBERS.get(name, lambda _: False)(value):
                raise TypeError(f"member {name!r}")
        if nesting(obj.get("store")) > DATA_DEPTH:
            raise TypeError("member 'store' nested too deep")
        found = {k: [Finding.from_json(f) for f in obj.get(k, ())] for k in _FINDINGS}
        return StoreReport(**{**obj, **found})
    except (TypeError, RecursionError) as exc:  # not an object, a member missing or odd
        raise ValueError(f"{path}: not a store report: {exc}") from exc
