"""ASF entry ids (two-layer content hash), the hashed ``ts`` spelling, subsession ids.

From draft 0.5 on an entry's id is a hash over its envelope and a hash of its content, so
the id must be recomputed from the line's own members and ``ts`` has exactly one spelling
(it is hashed).  Pre-0.5 files are migrated in memory, which needs :func:`migrate_ts`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any, Final

from asf_core.canonical import JsonError, sha256_of

__all__ = [
    "ENVELOPE",
    "RESERVED",
    "IdError",
    "NumberedNames",
    "body_of",
    "content_hash",
    "entry_id",
    "epoch_nanos",
    "format_ts",
    "id_with_content",
    "migrate_ts",
    "name_uuid",
    "subsession_id",
    "ts_ok",
]

#: Members of an entry line that are not part of its content.
ENVELOPE: Final[frozenset[str]] = frozenset({"id", "type", "parent", "parents", "ts"})
#: Names a body may not carry at top level (``content`` is the computed envelope member).
RESERVED: Final[frozenset[str]] = ENVELOPE | {"content"}


class IdError(ValueError):
    """An entry, timestamp or session id that cannot be hashed or spelled as ASF requires."""


# --------------------------------------------------------------------------- entry ids


def body_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The entry's content: every member except the envelope ones (unknown members too)."""
    return {key: value for key, value in obj.items() if key not in ENVELOPE}


def content_hash(body: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical body."""
    return sha256_of(body)


def entry_id(obj: Mapping[str, Any]) -> str:
    """The 0.5+ id of an entry, computed from the line's own members (never from a model).

    Raises :class:`IdError` if ``type`` or ``ts`` is missing or a member is not I-JSON
    enough to canonicalise.
    """
    for required in ("type", "ts"):
        if required not in obj:
            raise IdError(f"entry has no {required!r} member")
    try:
        return id_with_content(obj, content_hash(body_of(obj)))
    except JsonError as exc:
        raise IdError(f"entry cannot be hashed: {exc}") from None


def id_with_content(obj: Mapping[str, Any], content: str) -> str:
    """The id of an entry whose content hash is already known (the envelope layer alone).

    A writer that canonicalised the body anyway passes its hash here instead of paying for
    it twice. Raises :class:`JsonError` if an envelope member cannot be canonicalised.
    """
    envelope: dict[str, Any] = {
        "type": obj["type"],
        "parent": obj.get("parent"),
        "ts": obj["ts"],
        "content": content,
    }
    parents = obj.get("parents")
    if parents:
        envelope["parents"] = parents
    return sha256_of(envelope)


# --------------------------------------------------------------------------- timestamps

_TS: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{0,8}[1-9]))?Z"
)
_RFC3339: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _date_ok(year: int, month: int, day: int) -> bool:
    if not 1 <= month <= 12 or day < 1:
        return False
    return day <= (29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1])


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, no datetime limits)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


@functools.lru_cache(maxsize=256)
def _minute(minutes: int) -> str:
    """``YYYY-MM-DDTHH:MM:`` of a minute since the epoch (entries' times come in runs)."""
    days, rest = divmod(minutes, 1440)
    year, month, day = _civil_from_days(days)
    if not 0 <= year <= 9999:
        raise IdError("timestamp outside the years 0000-9999 cannot be written in RFC 3339")
    hour, minute = divmod(rest, 60)
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:"


def _whole(seconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of whole seconds since the epoch."""
    minutes, second = divmod(seconds, 60)
    return f"{_minute(minutes)}{second:02d}"


def _dotted(whole: str, fraction: str) -> str:
    """A spelled whole second with its fraction digits (truncated to 9, no trailing 0)."""
    fraction = fraction[:9].rstrip("0")
    return f"{whole}.{fraction}Z" if fraction else whole + "Z"


def _spell(seconds: int, fraction: str) -> str:
    """The single spelling of ``seconds`` since the epoch plus fraction digits (truncated)."""
    return _dotted(_whole(seconds), fraction)


#: The last whole second :func:`_second` spelled, as (its digits, its spelling).
_last_second = ("", "")


def _second(digits: str) -> str:
    """:func:`_whole` of whole seconds written as decimal digits, kept as the last one
    spelled (entries' times come in runs; a pair, swapped whole)."""
    global _last_second
    spelled = _whole(int(digits))
    _last_second = (digits, spelled)
    return spelled


def format_ts(when: datetime | float) -> str:
    """The one ``ts`` spelling (UTC, ``T``/``Z``, at most 9 fraction digits, no trailing 0).

    A float is epoch seconds, read through its shortest ``repr`` so that binary noise never
    shows up as digits; a naive datetime is taken as UTC.
    """
    if type(when) is float and when >= 0:
        text = repr(when)
        if "e" not in text and "n" not in text:
            # The common case, a plain non-negative float: its digits are its value (the
            # same floor as the Decimal route below, without building one).
            whole, _, fraction = text.partition(".")
            last = _last_second
            return _dotted(last[1] if last[0] == whole else _second(whole), fraction)
    if isinstance(when, datetime):
        offset = when.utcoffset()
        micros = (
            _days_from_civil(when.year, when.month, when.day) * 86400
            + when.hour * 3600
            + when.minute * 60
            + when.second
        ) * 10**6 + when.microsecond
        if offset is not None:  # own arithmetic: astimezone() cannot leave years 1-9999
            micros -= offset // timedelta(microseconds=1)
        seconds, micro = divmod(micros, 10**6)
        return _spell(seconds, f"{micro:06d}")
    if isinstance(when, bool) or not isinstance(when, (int, float)):
        raise IdError(f"cannot use {type(when).__name__} as a timestamp")
    try:
        # Shifting the exponent is exact, and so is flooring to an integer.
        total = int(Decimal(repr(when)).scaleb(9).to_integral_value(rounding=ROUND_FLOOR))
    except (InvalidOperation, ValueError, OverflowError):
        raise IdError(f"timestamp {when!r} is not a finite number") from None
    seconds, nanos = divmod(total, 10**9)
    return _spell(seconds, f"{nanos:09d}")


def ts_ok(ts: str) -> bool:
    """Whether ``ts`` is exactly the single 0.5+ spelling of a valid instant."""
    match = _TS.fullmatch(ts) if isinstance(ts, str) else None
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    return _date_ok(year, month, day) and hour <= 23 and minute <= 59 and second <= 59


def _instant(ts: str) -> tuple[int, str]:
    """Seconds since the epoch (UTC) and the fraction digits of any RFC 3339 timestamp."""
    match = _RFC3339.fullmatch(ts) if isinstance(ts, str) else None
    if match is None:
        raise IdError(f"timestamp {ts!r} is not RFC 3339")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, _zulu, sign, off_hour, off_minute = match.groups()[6:]
    if not (_date_ok(year, month, day) and hour <= 23 and minute <= 59 and second <= 60):
        raise IdError(f"timestamp {ts!r} is not a valid date and time")
    offset = 0
    if sign is not None:
        if int(off_hour) > 23 or int(off_minute) > 59:
            raise IdError(f"timestamp {ts!r} has an invalid offset")
        offset = (int(off_hour) * 60 + int(off_minute)) * 60 * (-1 if sign == "-" else 1)
    second = min(second, 59)
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
    return seconds - offset, fraction or ""


def migrate_ts(ts: str) -> str:
    """Rewrite any RFC 3339 timestamp into the single spelling (pre-0.5 migration).

    Offsets go to UTC, the fraction is truncated to 9 digits, leap second 60 becomes 59
    with the same fraction.  Raises :class:`IdError` if ``ts`` is not RFC 3339.
    """
    return _spell(*_instant(ts))


def epoch_nanos(ts: str) -> int:
    """Nanoseconds since the Unix epoch of an RFC 3339 timestamp (fraction truncated to 9
    digits, leap second 60 read as 59), for formats that count time in integers.
    Raises :class:`IdError` if ``ts`` is not RFC 3339."""
    seconds, fraction = _instant(ts)
    return seconds * 10**9 + int((fraction[:9] or "0").ljust(9, "0"))


# --------------------------------------------------------------------------- sessions

_NIL: Final = uuid.UUID(int=0)


def subsession_id(parent_session: str, call_id: str, attempt: int = 0) -> str:
    """The recommended child session id: UUIDv5 (nil namespace) over parent/call[/attempt].

    ``attempt`` 0 is the call's first run; ``n`` >= 1 is its n-th retry, which 0.5+ files
    give a session of its own.
    """
    if attempt < 0:
        raise IdError(f"attempt must not be negative, got {attempt}")
    name = f"{parent_session}/{call_id}" + (f"/{attempt}" if attempt else "")
    return name_uuid(name)


def name_uuid(name: str) -> str:
    """UUIDv5 (nil namespace) over ``name``: :func:`uuid.uuid5`'s id, but a name holding
    lone surrogates (a JSON escape in a source, a file name that is not UTF-8) is hashed
    with them encoded as they are (``surrogatepass``) instead of failing, each name its own
    id; a name of valid text has the id ``uuid5`` gives it."""
    data = _NIL.bytes + name.encode("utf-8", "surrogatepass")
    digest = hashlib.sha1(data, usedforsecurity=False).digest()  # as uuid5 hashes
    return str(uuid.UUID(bytes=digest[:16], version=5))


class NumberedNames:
    """Names made unique within a file (a call id ASF needs once per session): a name is
    given as it is while it is free, else as ``<name>-2``, ``<name>-3`` ..., the first not
    taken. Each name remembers where its search stopped, so a name repeated thousands of
    times is not searched from the start each time (quadratic)."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        #: Every name given, and those reserved at the start (never given to another).
        self.taken = set(taken)
        self._next: dict[str, int] = {}

    def give(self, name: str) -> str:
        """``name``, or its first free ``<name>-<n>``; taken from now on."""
        n = self._next.get(name, 1)
        given = name if n == 1 else f"{name}-{n}"
        while given in self.taken:
            n += 1
            given = f"{name}-{n}"
        self._next[name] = n + 1
        self.taken.add(given)
        return given
