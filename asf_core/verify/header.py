"""Header rules the reader leaves to the verifier (draft 0.11, Header).

The reader refuses a file without a usable ``type``/``format`` and reports a required member
that is missing or not a string (``bad-header``), a payload outside ``openresponses/`` and a
mistyped ``base``. What is left is what a string can still get wrong -- an empty ``id``, a
``created_at`` that is no RFC 3339 timestamp, an ``openresponses/`` profile without a spec
date -- the optional members' types, and ``redacted``, which changes what verifying the file
means: its ids verify against itself only.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from asf_core.findings import shown
from asf_core.model import Header
from asf_core.verify.common import ERROR, INFO, WARNING, Finding

__all__ = ["MEDIA_MODES", "header_findings", "rfc3339_ok"]

#: The values of the header's ``media``.
MEDIA_MODES: Final = frozenset({"inline", "sidecar"})

_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))",
    re.ASCII,
)
_PROFILE: Final = re.compile(r"openresponses/\d{4}-\d{2}-\d{2}", re.ASCII)

#: Optional members: how to tell a value the draft allows, and what to say otherwise.
_OPTIONAL: Final[tuple[tuple[str, Callable[[Any], bool], str], ...]] = (
    ("media", lambda v: isinstance(v, str) and v in MEDIA_MODES, "inline or sidecar"),
    ("redacted", lambda v: isinstance(v, bool), "a boolean"),
    (
        "records",
        lambda v: isinstance(v, list | tuple) and all(isinstance(x, str) for x in v),
        "a list of entry type names",
    ),
    ("harness", lambda v: isinstance(v, dict), "an object"),
    ("cwd", lambda v: isinstance(v, str), "a string"),
    ("parent_session", lambda v: isinstance(v, str), "a string"),
    ("spawned_by", lambda v: isinstance(v, str), "a string"),
)


def rfc3339_ok(value: str) -> bool:
    """Whether ``value`` is an RFC 3339 ``date-time`` (section 5.6), calendar included.

    A leap second (``:60``) is accepted wherever it is spelt: which minutes may carry one is
    decided after the fact, so a reader cannot know.
    """
    match = _RFC3339.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    off_hour, off_minute = match[7], match[8]
    return off_hour is None or (int(off_hour) <= 23 and int(off_minute) <= 59)


def _flagged(problems: Sequence[Finding], name: str) -> bool:
    """Whether the reader already reported header member ``name`` (missing or not a string)."""
    quoted = repr(name)
    return any(p.code == "bad-header" and p.line == 1 and quoted in p.message for p in problems)


def _date_ok(value: str) -> bool:
    year, month, day = (int(part) for part in value.split("-"))
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


def _finding(code: str, message: str, kind: str) -> Finding:
    return Finding(code=code, message=message, kind=kind, line=1)


def _mistyped(header: Header) -> Iterable[str]:
    """A line for every optional member whose value the draft does not allow."""
    for name, ok, want in _OPTIONAL:
        # A mistyped value (null included) is kept verbatim in ``unknown``.
        value = header.unknown[name] if name in header.unknown else getattr(header, name)
        if (value is not None or name in header.unknown) and not ok(value):
            yield f"header {name} {shown(value)} should be {want}"


def header_findings(header: Header, problems: Sequence[Finding] = ()) -> Iterable[Finding]:
    """Findings about the header line; ``problems`` are the reader's, not to be repeated."""
    if header.redacted is True:
        yield _finding(
            "redacted",
            "the file verifies against itself only, not a claim about the original "
            "(redaction recomputed its ids and hashes, which are checked as usual)",
            INFO,
        )
    if not header.id.strip() and not _flagged(problems, "id"):
        yield _finding("header-id", f"the header id {shown(header.id)} is empty", ERROR)
    if not _flagged(problems, "created_at") and not rfc3339_ok(header.created_at):
        yield _finding(
            "header-created-at",
            f"created_at {shown(header.created_at)} is not an RFC 3339 date-time",
            WARNING,
        )
    payload = header.payload
    if payload.startswith("openresponses/") and not (
        _PROFILE.fullmatch(payload) and _date_ok(payload.removeprefix("openresponses/"))
    ):
        yield _finding(
            "payload-profile",
            f"payload {shown(payload)} should be openresponses/<spec date YYYY-MM-DD>",
            WARNING,
        )
    for why in _mistyped(header):
        yield _finding("header-member", why, WARNING)
    if isinstance(header.spawned_by, str) and header.parent_session is None:
        yield _finding(
            "header-spawned-by",
            "spawned_by without parent_session: a subsession's header carries both",
            WARNING,
        )
