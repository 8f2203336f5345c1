"""Entry ids, the ``ts`` spelling, its pre-0.5 migration and subsession ids."""

from __future__ import annotations

import calendar
import hashlib
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import SHARED
from hypothesis import given
from hypothesis import strategies as st

from asf_core.canonical import sha256_of
from asf_core.ids import (
    ENVELOPE,
    RESERVED,
    IdError,
    body_of,
    content_hash,
    entry_id,
    epoch_nanos,
    format_ts,
    migrate_ts,
    name_uuid,
    subsession_id,
    ts_ok,
)
from asf_core.strict_json import parse

SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"

# Lines that are broken on purpose (1-based line numbers).
_UNPARSABLE = {("corrupt-middle.jsonl", 3), ("truncated.jsonl", 10)}
_NO_ID = {("missing-id.jsonl", 3)}
_PRE_05 = {"fork.jsonl"}


def _version(header: dict[str, Any]) -> tuple[int, int]:
    major, minor = header["format"].removeprefix("agentsession/").split(".")
    return int(major), int(minor)


def _entry_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    raw = path.read_bytes().splitlines()
    out = []
    for number, line in enumerate(raw[1:], start=2):
        if (path.name, number) in _UNPARSABLE:
            continue
        out.append((number, parse(line)))
    return out


_FILES = sorted(p for p in SESSIONS.glob("*.jsonl") if p.name not in _PRE_05)


def test_vector_files_are_found() -> None:
    assert len(_FILES) >= 37
    assert (SESSIONS / "v0.4" / "basic.jsonl").is_file()


@pytest.mark.parametrize("path", _FILES, ids=lambda p: p.name)
def test_vector_ids_recompute(path: Path) -> None:
    header = parse(path.read_bytes().splitlines()[0])
    assert header["type"] == "session"
    assert _version(header) >= (0, 5)
    for number, line in _entry_lines(path):
        if (path.name, number) in _NO_ID:
            assert "id" not in line
            continue
        assert entry_id(line) == line["id"], f"{path.name}:{number}"
        assert ts_ok(line["ts"]), f"{path.name}:{number}: {line['ts']}"
        assert migrate_ts(line["ts"]) == line["ts"]


def test_negative_lines_are_really_broken() -> None:
    for name, number in _UNPARSABLE:
        line = (SESSIONS / name).read_bytes().splitlines()[number - 1]
        with pytest.raises(ValueError, match="invalid JSON"):
            parse(line)


def test_id_changes_with_every_envelope_member() -> None:
    line = _entry_lines(SESSIONS / "converge.jsonl")[-1][1]
    assert line.get("parents")
    ids = {entry_id(line)}
    for change in (
        {"type": "custom"},
        {"parent": None},
        {"ts": "2026-01-01T00:00:00Z"},
        {"parents": [{"entry": "sha256:" + "0" * 64}]},
        {"extra": 1},
    ):
        ids.add(entry_id({**line, **change}))
    assert len(ids) == 6
    # An absent, null or empty `parents` hashes alike; the stored `id` never matters.
    plain = {k: v for k, v in line.items() if k != "parents"}
    assert entry_id(plain) == entry_id({**plain, "parents": []})
    assert entry_id(plain) == entry_id({**plain, "parents": None})
    assert entry_id(plain) == entry_id({**plain, "id": "whatever"})
    assert entry_id({**plain, "parent": None}) == entry_id(
        {k: v for k, v in plain.items() if k != "parent"}
    )


def test_two_layer_construction() -> None:
    line = _entry_lines(SESSIONS / "basic.jsonl")[1][1]
    body = body_of(line)
    assert not set(body) & ENVELOPE
    assert "legacy_id" in body
    envelope = {
        "type": line["type"],
        "parent": line["parent"],
        "ts": line["ts"],
        "content": content_hash(body),
    }
    assert entry_id(line) == sha256_of(envelope) == line["id"]
    assert ENVELOPE | {"content"} == RESERVED


@pytest.mark.parametrize("missing", ["type", "ts"])
def test_entry_id_needs_type_and_ts(missing: str) -> None:
    line = {"type": "info", "parent": None, "ts": "2026-01-01T00:00:00Z", "name": "x"}
    del line[missing]
    with pytest.raises(IdError, match=missing):
        entry_id(line)


def test_entry_id_refuses_unhashable_bodies() -> None:
    with pytest.raises(IdError, match="/x"):
        entry_id({"type": "info", "ts": "2026-01-01T00:00:00Z", "x": float("nan")})


# ----------------------------------------------------------------------------- migration


def _migrate(path: Path) -> list[str]:
    """The pre-0.5 in-memory migration (SPEC-NOTES section 10), enough for the fixtures."""
    new_ids: dict[str, str] = {}
    out = []
    for _number, line in _entry_lines(path):
        entry = dict(line)
        old = entry.pop("id")
        entry["legacy_id"] = old
        entry["ts"] = migrate_ts(entry["ts"])
        for member in ("parent", "target", "first_kept", "from", "queued_from"):
            if entry.get(member) in new_ids:
                entry[member] = new_ids[entry[member]]
        if entry.get("parents"):
            entry["parents"] = [
                {**ref, "entry": new_ids.get(ref["entry"], ref["entry"])}
                if "session" not in ref
                else ref
                for ref in entry["parents"]
            ]
        new_ids[old] = entry_id(entry)
        out.append(new_ids[old])
    return out


@pytest.mark.parametrize(
    "name",
    ["basic", "branch", "compaction", "extensions", "instructions", "bad-first-kept"],
)
def test_migrating_v04_reproduces_05_ids(name: str) -> None:
    migrated = _migrate(SESSIONS / "v0.4" / f"{name}.jsonl")
    expected = [line["id"] for _n, line in _entry_lines(SESSIONS / f"{name}.jsonl")]
    assert migrated == expected


# ----------------------------------------------------------------------------- ts


@pytest.mark.parametrize(
    ("when", "text"),
    [
        (1796014684.123456, "2026-11-30T04:58:04.123456Z"),
        (1796014684.1, "2026-11-30T04:58:04.1Z"),
        (1796014684.0, "2026-11-30T04:58:04Z"),
        (1796014684, "2026-11-30T04:58:04Z"),
        (0.0, "1970-01-01T00:00:00Z"),
        (1e-9, "1970-01-01T00:00:00.000000001Z"),
        (1.9999999999e-9, "1970-01-01T00:00:00.000000001Z"),
        (5e-10, "1970-01-01T00:00:00Z"),
        (-0.5, "1969-12-31T23:59:59.5Z"),
        (951782400.25, "2000-02-29T00:00:00.25Z"),
        (253402300799.5, "9999-12-31T23:59:59.5Z"),
        (datetime(2026, 9, 17, 12, 0, 2, 500000), "2026-09-17T12:00:02.5Z"),
        (datetime(2026, 9, 17, 12, 0, 2, 1), "2026-09-17T12:00:02.000001Z"),
        (datetime(2026, 9, 17, 12, 0, 4, tzinfo=UTC), "2026-09-17T12:00:04Z"),
        (
            datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=2))),
            "2025-12-31T23:30:00Z",
        ),
        (datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=2))), "0000-12-31T22:00:00Z"),
    ],
)
def test_format_ts(when: datetime | float, text: str) -> None:
    assert format_ts(when) == text
    assert ts_ok(text)


@pytest.mark.parametrize(
    "when",
    [
        float("nan"),
        float("inf"),
        1e20,
        -1e15,
        True,
        "2026",
        datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-2))),
    ],
)
def test_format_ts_refuses(when: Any) -> None:
    with pytest.raises(IdError):
        format_ts(when)


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-17T12:00:02.5Z",
        "2026-09-17T12:00:04Z",
        "2024-02-29T23:59:59.123456789Z",
        "0000-01-01T00:00:00Z",
        "2000-02-29T00:00:00Z",
    ],
)
def test_ts_ok_accepts(text: str) -> None:
    assert ts_ok(text)


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-17T12:00:02.50Z",
        "2026-09-17T12:00:02.0Z",
        "2026-09-17T12:00:02.Z",
        "2026-09-17T12:00:02.1234567891Z",
        "2026-09-17t12:00:02Z",
        "2026-09-17T12:00:02z",
        "2026-09-17 12:00:02Z",
        "2026-09-17T12:00:02+00:00",
        "2026-09-17T12:00:60Z",
        "2026-09-17T24:00:00Z",
        "2026-09-17T12:60:00Z",
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-9-17T12:00:02Z",
        "\uff12\uff10\uff12\uff16-09-17T12:00:02Z",
        "2026-09-17T12:00:02Z\n",
        "",
    ],
)
def test_ts_ok_refuses(text: str) -> None:
    assert not ts_ok(text)


@pytest.mark.parametrize(
    ("text", "migrated"),
    [
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59Z"),
        ("2016-12-31T23:59:60.5Z", "2016-12-31T23:59:59.5Z"),
        ("2017-01-01T00:59:60.999+01:00", "2016-12-31T23:59:59.999Z"),
        ("2026-09-17T12:00:02.500Z", "2026-09-17T12:00:02.5Z"),
        ("2026-09-17T12:00:02.000Z", "2026-09-17T12:00:02Z"),
        ("2026-09-17T12:00:02.1234567899Z", "2026-09-17T12:00:02.123456789Z"),
        ("2026-09-17T12:00:02.0000000009Z", "2026-09-17T12:00:02Z"),
        ("2026-09-17t12:00:02z", "2026-09-17T12:00:02Z"),
        ("2026-09-17T12:00:02+05:30", "2026-09-17T06:30:02Z"),
        ("2026-09-17T23:59:02+23:59", "2026-09-17T00:00:02Z"),
        ("2026-09-17T12:00:02-00:00", "2026-09-17T12:00:02Z"),
        ("2026-12-31T23:00:00-02:00", "2027-01-01T01:00:00Z"),
        ("2024-03-01T00:30:00+01:00", "2024-02-29T23:30:00Z"),
    ],
)
def test_migrate_ts(text: str, migrated: str) -> None:
    assert migrate_ts(text) == migrated
    assert ts_ok(migrated)


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-17",
        "2026-09-17T12:00Z",
        "2026-09-17T12:00:02",
        "2026-09-17T12:00:02+0530",
        "2026-09-17T12:00:02+24:00",
        "2026-09-17T12:00:02+05:60",
        "2026-09-17T24:00:00Z",
        "2026-09-17T12:60:00Z",
        "2026-09-17T12:00:61Z",
        "2026-02-30T12:00:00Z",
        "2026-09-17T12:00:02.Z",
        "2026-09-17 12:00:02Z",
        "1796014684",
    ],
)
def test_migrate_ts_refuses(text: str) -> None:
    with pytest.raises(IdError):
        migrate_ts(text)


_datetimes = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(None)
)
_offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59)


@given(_datetimes)
def test_format_ts_round_trips(when: datetime) -> None:
    text = format_ts(when)
    assert ts_ok(text)
    assert datetime.fromisoformat(text) == when.replace(tzinfo=UTC)
    assert migrate_ts(text) == text


@given(_datetimes, _offsets)
def test_migrate_ts_converts_offsets(when: datetime, minutes: int) -> None:
    local = when.replace(tzinfo=UTC).astimezone(timezone(timedelta(minutes=minutes)))
    assert migrate_ts(local.isoformat()) == format_ts(when)
    assert format_ts(local) == format_ts(when)


@pytest.mark.parametrize("year", [2023, 2024, 1900, 2000])
def test_ts_ok_knows_every_months_length(year: int) -> None:
    """Every day of every month, as the calendar has it (``datetime`` is the oracle)."""
    for month in range(1, 13):
        for day in (0, 1, *range(27, 33)):
            try:
                datetime(year, month, day)
            except ValueError:
                valid = False
            else:
                valid = True
            text = f"{year:04d}-{month:02d}-{day:02d}T00:00:00Z"
            assert ts_ok(text) == valid, text
            if valid:
                assert migrate_ts(text) == text
            else:
                with pytest.raises(IdError):
                    migrate_ts(text)


def test_format_ts_spells_the_turn_of_every_year_and_leap_day() -> None:
    """The calendar arithmetic has its own 400-year cycles (a year starting in March): the
    days where a month, a year or a cycle turns, in every year ``datetime`` knows."""
    for year in range(1, 10000):
        days = [(1, 1), (2, 28), (3, 1), (12, 31)]
        if calendar.isleap(year):
            days.append((2, 29))
        for month, day in days:
            when = datetime(year, month, day, 23, 59, 59)
            assert format_ts(when) == when.isoformat() + "Z"


@given(_datetimes, _offsets, st.integers(min_value=0, max_value=999))
def test_epoch_nanos_counts_from_the_epoch_in_utc(when: datetime, minutes: int, nanos: int) -> None:
    """Integer time for the exporters: the instant a timestamp names, offset applied and the
    fraction to the nanosecond, whichever RFC 3339 spelling it has."""
    since = when.replace(tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    exact = since // timedelta(microseconds=1) * 1000 + nanos
    text = format_ts(when)
    nine = f"{when.microsecond * 1000 + nanos:09d}"
    spelled = f"{text[:19]}.{nine}9Z"  # a tenth digit, truncated
    assert epoch_nanos(spelled) == exact
    local = when.replace(tzinfo=UTC).astimezone(timezone(timedelta(minutes=minutes)))
    assert epoch_nanos(local.isoformat()) == exact - nanos
    assert epoch_nanos(text) == exact - nanos


def test_epoch_nanos_reads_a_leap_second_as_59() -> None:
    assert epoch_nanos("2016-12-31T23:59:60.5Z") == epoch_nanos("2016-12-31T23:59:59.5Z")
    assert epoch_nanos("1970-01-01T00:00:01.000000001Z") == 10**9 + 1
    with pytest.raises(IdError):
        epoch_nanos("1970-01-01")


@given(st.floats(min_value=-62135596800.0, max_value=253402300799.0))
def test_format_ts_float_has_no_binary_noise(seconds: float) -> None:
    text = format_ts(seconds)
    assert ts_ok(text)
    stamp = datetime.fromisoformat(text[:19] + "+00:00")
    whole = Decimal(int((stamp - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()))
    fraction = Decimal("0." + text[20:-1]) if "." in text else Decimal(0)
    exact = Decimal(repr(seconds))
    # The spelled value is the shortest repr truncated (not rounded) to 9 digits.
    assert whole + fraction <= exact < whole + fraction + Decimal("1e-9")
    digits = re.sub(r"[^0-9]", "", text[20:])
    assert len(digits) <= 9
    assert not digits.endswith("0")


# ----------------------------------------------------------------------------- subsessions


def _uuid5_by_hand(name: str) -> str:
    digest = bytearray(hashlib.sha1(bytes(16) + name.encode(), usedforsecurity=False).digest())
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(digest[:16])))


@given(st.text(min_size=1), st.text(min_size=1), st.integers(min_value=0, max_value=50))
def test_subsession_id(parent: str, call_id: str, attempt: int) -> None:
    parent = parent.encode("utf-8", "replace").decode("utf-8", "replace")
    call_id = call_id.encode("utf-8", "replace").decode("utf-8", "replace")
    name = f"{parent}/{call_id}" + (f"/{attempt}" if attempt else "")
    child = subsession_id(parent, call_id, attempt)
    assert child == _uuid5_by_hand(name)
    assert uuid.UUID(child).version == 5
    # Without an attempt, the call's first run (attempt 0): no suffix.
    assert subsession_id(parent, call_id) == _uuid5_by_hand(f"{parent}/{call_id}")
    if attempt:
        assert child != subsession_id(parent, call_id)


def test_subsession_id_refuses_negative_attempts() -> None:
    with pytest.raises(IdError):
        subsession_id("s", "call_1", -1)


@given(st.floats(min_value=0, max_value=253402300799.0) | st.floats(min_value=0, max_value=5e9))
def test_format_ts_of_a_plain_float_floors_its_decimal_digits(when: float) -> None:
    """The quick route for a non-negative float spells what the exact Decimal route does."""
    from decimal import ROUND_FLOOR

    from asf_core.ids import _spell

    total = int(Decimal(repr(when)).scaleb(9).to_integral_value(rounding=ROUND_FLOOR))
    seconds, nanos = divmod(total, 10**9)
    assert format_ts(when) == _spell(seconds, f"{nanos:09d}")


@given(st.lists(st.floats(min_value=0, max_value=5e9), max_size=8), st.floats(0, 1))
def test_format_ts_of_a_run_in_one_second_spells_each_time(
    times: list[float], fraction: float
) -> None:
    """The spelling of the last whole second, kept for the next time, is that time's."""
    from decimal import ROUND_FLOOR

    from asf_core.ids import _spell

    for when in [t for w in times for t in (w, float(int(w)) + fraction, w)]:
        total = int(Decimal(repr(when)).scaleb(9).to_integral_value(rounding=ROUND_FLOOR))
        seconds, nanos = divmod(total, 10**9)
        assert format_ts(when) == _spell(seconds, f"{nanos:09d}")


@given(st.text())
def test_a_name_uuid_is_uuid5_and_a_name_with_lone_surrogates_has_its_own(name: str) -> None:
    """Found by the source fuzzer (case 3417): a Codex thread id (a Claude Code call id) read
    from a JSON escape can hold a lone surrogate, and ``uuid.uuid5`` raised on it; the
    plugin failed and its store stopped."""
    assert name_uuid(name) == str(uuid.uuid5(uuid.UUID(int=0), name))
    odd = {name_uuid(name + s) for s in ("\ud800", "\udfff", "\udc80", "\ufffd")}
    assert len(odd) == 4
    assert uuid.UUID(next(iter(odd))).version == 5


def test_numbered_names_give_each_name_once() -> None:
    """A name is given as it is while free, then ``-2``, ``-3`` ... past any taken, reserved
    names included; other names keep their own count."""
    from asf_core.ids import NumberedNames

    names = NumberedNames(["a-2", "b"])
    given = [names.give(n) for n in ("a", "a", "b", "a", "b", "a-3")]
    assert given == ["a", "a-3", "b-2", "a-4", "b-3", "a-3-2"]
    assert len(set(given)) == len(given)
