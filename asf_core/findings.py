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

__all__ = ["DROPPED", "ERROR", "INFO", "KINDS", "STRAY", "WARNING", "Finding", "shown"]

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

    @property
    def severity(self) -> str:
        """``error``, ``warning`` or ``info``: a stray is a warning, dropped data info."""
        return _SEVERITY.get(self.kind, WARNING)
