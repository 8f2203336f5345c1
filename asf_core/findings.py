"""The one thing every part of asf reports instead of raising: a :class:`Finding`.

A plugin finds a stray row or data it leaves out, the reader a line that breaks a rule, the
verifier an entry that breaks one: all are findings, so the report, ``asf verify`` and the
Python API count, print and serialise them one way.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any, Final

from attrs import field, frozen

__all__ = [
    "BOUND",
    "DATA_DEPTH",
    "DROPPED",
    "ERROR",
    "INFO",
    "KINDS",
    "STRAY",
    "WARNING",
    "Finding",
    "nesting",
    "shown",
]

#: A rule the data breaks (a reader or verifier finding).
ERROR = "error"
#: Kept as written but worth a look.
WARNING = "warning"
#: Not a problem: something a reader of the data should know.
INFO = "info"
#: A source unit that could not be read or placed; kept in the output or the report.
STRAY = "stray"
#: Source data deliberately not carried, with the reason.
DROPPED = "dropped"

KINDS = (ERROR, WARNING, INFO, STRAY, DROPPED)

#: How severe each kind is, for a reader that only cares whether something is wrong.
_SEVERITY = {ERROR: ERROR, WARNING: WARNING, STRAY: WARNING, INFO: INFO, DROPPED: INFO}


def _short_repr() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxlevel = 3
    short.maxstring = short.maxother = 80
    short.maxlong = 40
    short.maxdict = short.maxlist = short.maxtuple = 6
    return short


_SHORT: Final = _short_repr()


def shown(value: Any) -> str:
    """A value from the data as a message quotes it: its ``repr``, cut short.

    The value may be anything a hostile file holds (a megabyte string, an array nested
    hundreds deep, an integer of thousands of digits): the result is one short line, and
    building it neither recurses deeply nor renders a huge number.
    """
    return _SHORT.repr(value)


#: How deep a finding's ``data`` may nest in a file asf reads back: far beyond what asf
#: writes there, and well inside what writing it again can walk.
DATA_DEPTH: Final = 64

#: A finding's ``line`` and a session's counts are smaller than this (in magnitude): 64 bits,
#: where a number of thousands of digits is one the report's JSON cannot be written with.
BOUND: Final = 1 << 63

#: The JSON type of each member of a finding.
_MEMBER_TYPES: Final[dict[str, type | tuple[type, ...]]] = {
    **dict.fromkeys(("kind", "message", "code", "unit", "session", "path"), str),
    "entry": (str, type(None)),
    "line": int,
    "data": dict,
}


def nesting(value: Any) -> int:
    """How deep lists and objects nest in a parsed JSON value (without recursing)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if level <= DATA_DEPTH:  # deeper says enough
                members = item.values() if isinstance(item, dict) else item
                stack.extend((member, level + 1) for member in members)
    return deepest


@frozen(kw_only=True)
class Finding:
    """One finding: what kind, what is wrong in a human line, and where.

    ``code`` is a stable slug for rule findings (``truncated``, ``bad-id``: see
    ``docs/verify.md``); ``unit`` names a source unit (``state.db:messages/42``), ``session``
    the native session it belongs to; ``path``, ``line`` (1-based; 0 = the file as a whole)
    and ``entry`` place it in an ASF file.
    """

    kind: str = ERROR
    message: str
    code: str = ""
    unit: str = ""
    session: str = ""
    entry: str | None = None
    line: int = 0
    path: str = ""
    #: Structured detail for machines (never hashed: findings go in sets).
    data: Mapping[str, Any] = field(factory=dict, hash=False)

    @classmethod
    def from_json(cls, obj: Any) -> Finding:
        """A finding as our own files hold it (``report.json``, ``fingerprints.json``), checked
        member by member: ``TypeError`` for anything else (a member missing, unknown or of
        another type; ``data`` nested deeper than :data:`DATA_DEPTH`)."""
        if not isinstance(obj, dict) or not isinstance(obj.get("message"), str):
            raise TypeError("a finding is an object with a message")
        for name, value in obj.items():
            if not isinstance(value, _MEMBER_TYPES.get(name, ())) or type(value) is bool:
                raise TypeError(f"finding member {name!r}: {type(value).__name__}")
        if "data" in obj and nesting(obj["data"]) > DATA_DEPTH:
            raise TypeError("finding data nested too deep")
        return cls(**obj)

    def problem(self) -> str | None:
        """What keeps this finding out of a report the next run reads back, or None: a member
        of another type (a plugin's finding: attrs checks none), or ``data`` that JSON cannot
        hold or that nests deeper than :data:`DATA_DEPTH` once written."""
        import json

        for name, kinds in _MEMBER_TYPES.items():
            value = getattr(self, name)
            if name == "data":
                kinds = Mapping
            if not isinstance(value, kinds) or type(value) is bool:
                return f"{name} is {type(value).__name__}"
        if not -BOUND < self.line < BOUND:  # thousands of digits: JSON would refuse to write it
            return "line is out of range"
        try:  # as the report writes it, and the next run reads it back
            written = json.loads(json.dumps(dict(self.data), allow_nan=False))
        except (TypeError, ValueError, RecursionError) as exc:
            return f"data is not JSON: {str(exc)[:200]}"
        if nesting(written) > DATA_DEPTH:
            return f"data nests deeper than {DATA_DEPTH}"
        return None

    @property
    def severity(self) -> str:
        """``error``, ``warning`` or ``info``: a stray is a warning, dropped data info."""
        return _SEVERITY.get(self.kind, WARNING)
