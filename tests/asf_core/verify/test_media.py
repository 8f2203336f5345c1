"""Sidecar media and header rules of the verifier, on sessions written to disk with real blobs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from fixture_paths import SHARED
from hypothesis import given
from hypothesis import strategies as st

from asf_core import canonical, strict_json
from asf_core.codec import header_to_json
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Entry,
    Header,
    Item,
    Queued,
    Response,
)
from asf_core.reader import parse_session, read_session
from asf_core.verify.header import rfc3339_ok
from asf_core.verify.media import BlobCheck
from asf_core.verify.session import Finding, verify_path, verify_session
from asf_core.writer import SessionBuilder, entry_line, seal, write_session

SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"
SESSION_ID = "01995b2a-0000-7000-8000-00000000me01"
NEW_CODES = frozenset(
    {
        "header-id",
        "header-created-at",
        "payload-profile",
        "header-member",
        "header-spawned-by",
        "redacted",
        "media-missing",
        "media-hash",
        "media-mode",
        "media-ref",
        "media-unchecked",
    }
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.7 a small file\n"


def ref(data: bytes) -> str:
    return "sidecar:sha256:" + hashlib.sha256(data).hexdigest()


def image_item(url: str, text: str = "what is this?") -> dict[str, Any]:
    content = [
        {"type": "input_text", "text": text},
        {"type": "input_image", "image_url": url, "detail": "auto"},
    ]
    return {"type": "message", "role": "user", "content": content}


def summary_of(url: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": "earlier"}, {"type": "input_file", "file_url": url}]
    return {"type": "message", "role": "system", "content": content}


def build(header: Header, payloads: Iterable[Entry]) -> list[Entry]:
    """A config, then each entry under the previous one, with ticking timestamps."""
    builder = SessionBuilder(header)
    entries = [Config(ts="", model="gpt-5"), *payloads]
    for n, entry in enumerate(entries):
        builder.append(attrs.evolve(entry, ts=f"2026-10-01T09:00:{n:02d}Z"))
    return builder.entries


def write(
    tmp_path: Path,
    payloads: Iterable[Entry],
    *,
    blobs: Iterable[bytes] = (),
    name: str = "s.jsonl",
    **header: Any,
) -> Path:
    """Write a session file and its blobs (named by their own hash) beside it."""
    head = Header(id=SESSION_ID, created_at="2026-10-01T09:00:00Z", **header)
    path = tmp_path / name
    write_session(path, head, build(head, payloads))
    for data in blobs:
        folder = tmp_path / head.id
        folder.mkdir(exist_ok=True)
        (folder / hashlib.sha256(data).hexdigest()).write_bytes(data)
    return path


def of(findings: Iterable[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def new_codes(findings: Iterable[Finding]) -> set[str]:
    return {f.code for f in findings} & NEW_CODES


def every_payload(url_a: str, url_b: str) -> list[Entry]:
    """One reference in each kind of payload the rule walks."""
    return [
        Item(ts="", item=image_item(url_a)),
        Queued(ts="", item=image_item(url_b, "later"), mode="followup"),
        Compaction(ts="", summary=summary_of(url_a), pinned=(image_item(url_b),)),
        BranchSummary(ts="", summary=summary_of(url_b)),
    ]


# ----------------------------------------------------------------------------- sidecar media


def test_good_sidecar_session_verifies_clean(tmp_path: Path) -> None:
    path = write(tmp_path, every_payload(ref(PNG), ref(PDF)), blobs=[PNG, PDF], media="sidecar")
    findings = verify_path(path)
    assert findings == []


def test_missing_blob_is_reported_at_each_reference(tmp_path: Path) -> None:
    path = write(tmp_path, every_payload(ref(PNG), ref(PDF)), blobs=[PNG], media="sidecar")
    session = read_session(path)
    missing = of(verify_path(path), "media-missing")
    # PDF is named by the queued item, the pinned item and the branch summary.
    assert len(missing) == 3
    assert all(f.severity == "error" for f in missing)
    assert [f.line for f in missing] == [4, 5, 6]
    assert [f.line for f in missing] == [session.line_of[f.entry or ""] for f in missing]
    assert str(tmp_path / SESSION_ID / hashlib.sha256(PDF).hexdigest()) in missing[0].message
    assert missing[0].message.startswith("item.content[1].image_url:")
    assert missing[1].message.startswith("pinned[0].content[1].image_url:")
    assert missing[2].message.startswith("summary.content[1].file_url:")
    assert new_codes(verify_path(path)) == {"media-missing"}


def test_every_payload_kind_is_walked(tmp_path: Path) -> None:
    """With no blob at all, each payload's reference is missing: the item's, the queued item's,
    the compaction's summary and pinned items, and the branch summary."""
    path = write(tmp_path, every_payload(ref(PNG), ref(PDF)), media="sidecar")
    missing = of(verify_path(path), "media-missing")
    assert sorted((f.line, f.message.split(":", 1)[0]) for f in missing) == [
        (3, "item.content[1].image_url"),
        (4, "item.content[1].image_url"),
        (5, "pinned[0].content[1].image_url"),
        (5, "summary.content[1].file_url"),
        (6, "summary.content[1].file_url"),
    ]


def test_a_malformed_reference_does_not_hide_the_next_one(tmp_path: Path) -> None:
    """Each reference of an entry is checked: a malformed one before a missing blob's
    reference gives both findings."""
    item = image_item("sidecar:sha256:nothex")
    item["content"].append({"type": "input_image", "image_url": ref(PNG), "detail": "auto"})
    path = write(tmp_path, [Item(ts="", item=item)], media="sidecar")
    found = verify_path(path)
    assert sorted(f.code for f in found) == ["media-missing", "media-ref"]
    assert of(found, "media-missing")[0].message.startswith("item.content[2].image_url:")


def test_blob_with_other_bytes_fails_its_hash(tmp_path: Path) -> None:
    path = write(tmp_path, [Item(ts="", item=image_item(ref(PNG)))], media="sidecar")
    blob = tmp_path / SESSION_ID / hashlib.sha256(PNG).hexdigest()
    blob.parent.mkdir()
    blob.write_bytes(PNG[:-1] + b"!")
    found = verify_path(path)
    assert new_codes(found) == {"media-hash"}
    (bad,) = of(found, "media-hash")
    assert bad.severity == "error"
    assert bad.line == 3
    assert hashlib.sha256(PNG[:-1] + b"!").hexdigest() in bad.message


def test_blob_that_is_a_directory_is_missing(tmp_path: Path) -> None:
    path = write(tmp_path, [Item(ts="", item=image_item(ref(PNG)))], media="sidecar")
    (tmp_path / SESSION_ID / hashlib.sha256(PNG).hexdigest()).mkdir(parents=True)
    assert new_codes(verify_path(path)) == {"media-missing"}


@pytest.mark.parametrize("media", [None, "inline"])
def test_sidecar_reference_in_an_inline_file(tmp_path: Path, media: str | None) -> None:
    path = write(tmp_path, [Item(ts="", item=image_item(ref(PNG)))], blobs=[PNG], media=media)
    found = verify_path(path)
    assert new_codes(found) == {"media-mode"}
    (mode,) = of(found, "media-mode")
    assert mode.severity == "error"
    assert mode.line == 3
    assert mode.message.endswith("media is " + (media or "inline (absent)"))


def test_data_urls_in_an_inline_file_are_fine(tmp_path: Path) -> None:
    url = "data:image/png;base64,iVBORw0KGgo="
    path = write(tmp_path, [Item(ts="", item=image_item(url))], media="inline")
    assert verify_path(path) == []


@pytest.mark.parametrize(
    "bad",
    [
        "sidecar:sha256:" + hashlib.sha256(PNG).hexdigest().upper(),
        "sidecar:sha256:" + hashlib.sha256(PNG).hexdigest()[:63],
        "sidecar:sha256:" + hashlib.sha256(PNG).hexdigest() + "0",
        "sidecar:md5:" + hashlib.md5(PNG, usedforsecurity=False).hexdigest(),
        "sidecar:" + hashlib.sha256(PNG).hexdigest(),
        "sidecar:",
    ],
)
@pytest.mark.parametrize("media", ["sidecar", "inline"])
def test_malformed_reference(tmp_path: Path, bad: str, media: str) -> None:
    path = write(tmp_path, [Item(ts="", item=image_item(bad))], blobs=[PNG], media=media)
    found = verify_path(path)
    assert new_codes(found) == {"media-ref"}
    assert of(found, "media-ref")[0].line == 3


def test_prose_starting_with_the_word_is_no_reference(tmp_path: Path) -> None:
    text = "sidecar: a container that runs beside the app"
    path = write(tmp_path, [Item(ts="", item=image_item(ref(PNG), text))], blobs=[PNG])
    # The prose is left alone; the real reference in the inline file is still reported.
    found = verify_path(path)
    assert [f.code for f in found] == ["media-mode"]


def test_references_outside_payloads_are_not_walked(tmp_path: Path) -> None:
    # A response is no payload: a sidecar-like string in it is not a media reference.
    entries = [
        Item(ts="", item=image_item(ref(PNG))),
        Response(ts="", response_id="resp_1", model="gpt-5", error={"note": ref(PDF)}),
    ]
    path = write(tmp_path, entries, blobs=[PNG], media="sidecar")
    assert new_codes(verify_path(path)) == set()


def test_session_without_a_path_skips_blob_checks_once(tmp_path: Path) -> None:
    path = write(tmp_path, every_payload(ref(PNG), ref(PDF)), media="sidecar")
    found = verify_session(parse_session(path.read_bytes()))
    assert [(f.code, f.severity) for f in found] == [("media-unchecked", "info")]
    # With the path the same bytes give the missing blobs.
    assert new_codes(verify_session(parse_session(path.read_bytes(), path=path))) == {
        "media-missing"
    }


def test_session_id_that_cannot_name_a_directory(tmp_path: Path) -> None:
    head = Header(id="../escape", created_at="2026-10-01T09:00:00Z", media="sidecar")
    (tmp_path / "escape").mkdir()
    (tmp_path / "escape" / hashlib.sha256(PNG).hexdigest()).write_bytes(PNG)
    path = tmp_path / "sub" / "s.jsonl"
    write_session(path, head, build(head, [Item(ts="", item=image_item(ref(PNG)))]))
    found = verify_path(path)
    assert [(f.code, f.severity) for f in found] == [("media-unchecked", "warning")]


def fork_of(
    tmp_path: Path,
    origin_items: list[Entry],
    later: list[dict[str, Any]],
    blobs: Iterable[bytes] = (),
) -> Path:
    """An origin session (with ``blobs`` written beside it) and a sidecar fork of it, the
    ``later`` items under its base."""
    origin = write(tmp_path, origin_items, blobs=blobs, media="sidecar")
    prefix = read_session(origin).entries
    base = prefix[-1].id
    head = Header(
        id="01995b2a-0000-7000-8000-00000000fork",
        created_at="2026-10-01T10:00:00Z",
        media="sidecar",
        base=base,
        parent_session=SESSION_ID,
    )
    entries: list[Entry] = list(prefix)
    for n, item in enumerate(later):
        stamp = f"2026-10-01T10:00:{n + 1:02d}Z"
        entries.append(seal(Item(ts=stamp, item=item), parent=entries[-1].id))
    fork = tmp_path / "fork.jsonl"
    write_session(fork, head, entries)
    return fork


def test_prefix_blobs_may_stay_with_the_parent_session(tmp_path: Path) -> None:
    prefix = [Item(ts="", item=image_item(ref(PNG)))]
    fork = fork_of(tmp_path, prefix, [image_item(ref(PDF))], blobs=[PNG])
    found = verify_path(fork)
    # The prefix's PNG is found in the origin's directory; the fork's own PDF is not anywhere.
    later = read_session(fork).entries[-1]
    assert [(f.code, f.entry) for f in found] == [("media-missing", later.id)]
    assert new_codes(verify_path(tmp_path / "s.jsonl")) == set()


def test_fork_entries_of_its_own_do_not_borrow_the_parents_blobs(tmp_path: Path) -> None:
    """Only the prefix may keep its blobs with the parent: the fork's own media is its own."""
    fork = fork_of(tmp_path, [Item(ts="", item=image_item(ref(PDF)))], [image_item(ref(PNG))])
    (tmp_path / SESSION_ID).mkdir()
    (tmp_path / SESSION_ID / hashlib.sha256(PNG).hexdigest()).write_bytes(PNG)
    (tmp_path / SESSION_ID / hashlib.sha256(PDF).hexdigest()).write_bytes(PDF)
    found = verify_path(fork)
    later = read_session(fork).entries[-1]
    assert [(f.code, f.entry) for f in found] == [("media-missing", later.id)]


def test_prefix_blob_with_other_bytes_beats_a_missing_one(tmp_path: Path) -> None:
    """Of the fork's and the parent's directory, a blob with wrong bytes is the finding; two
    missing blobs are one finding naming both places looked in."""
    fork = fork_of(
        tmp_path,
        [Item(ts="", item=image_item(ref(PNG))), Item(ts="", item=image_item(ref(PDF)))],
        [],
    )
    own = tmp_path / "01995b2a-0000-7000-8000-00000000fork"
    own.mkdir()
    (own / hashlib.sha256(PNG).hexdigest()).write_bytes(b"not the png")
    found = verify_path(fork)
    assert [f.code for f in found] == ["media-hash", "media-missing"]
    assert hashlib.sha256(b"not the png").hexdigest() in found[0].message
    pdf = hashlib.sha256(PDF).hexdigest()
    assert str(own / pdf) in found[1].message
    assert str(tmp_path / SESSION_ID / pdf) in found[1].message


@pytest.mark.parametrize("space", ["\t", "\n", "\u00a0"])
def test_a_sidecar_string_with_any_whitespace_is_prose(tmp_path: Path, space: str) -> None:
    """Any whitespace, not only a space, marks a string as no reference (a URL holds none)."""
    text = f"sidecar:{space}notes"
    path = write(tmp_path, [Item(ts="", item=image_item("data:,x", text))], media="sidecar")
    assert verify_path(path) == []


@pytest.mark.parametrize("session_id", ["..", ".", "a\\b", "a\x00b"])
def test_more_session_ids_that_cannot_name_a_directory(tmp_path: Path, session_id: str) -> None:
    """``..`` would leave the file's directory, a backslash is a separator elsewhere, and no
    path holds a NUL (opening one raises)."""
    head = Header(id=session_id, created_at="2026-10-01T09:00:00Z", media="sidecar")
    (tmp_path / hashlib.sha256(PNG).hexdigest()).write_bytes(PNG)  # what ``..`` would reach
    path = tmp_path / "sub" / "s.jsonl"
    write_session(path, head, build(head, [Item(ts="", item=image_item(ref(PNG)))]))
    found = verify_path(path)
    assert [(f.code, f.severity) for f in found] == [("media-unchecked", "warning")]


def test_each_blob_is_hashed_once(tmp_path: Path) -> None:
    big = bytes(range(256)) * (3 * 4096 + 7)  # over three read chunks
    hexdigest = hashlib.sha256(big).hexdigest()
    (tmp_path / hexdigest).write_bytes(big)
    check = BlobCheck()
    assert check.problem(hexdigest, [tmp_path]) is None
    (tmp_path / hexdigest).write_bytes(b"changed")
    assert check.problem(hexdigest, [tmp_path]) is None  # the first answer is kept
    fresh = BlobCheck().problem(hexdigest, [tmp_path])
    assert fresh is not None
    assert fresh.code == "media-hash"


def test_many_references_to_one_blob(tmp_path: Path) -> None:
    items = [Item(ts="", item=image_item(ref(PNG), f"look {n}")) for n in range(50)]
    path = write(tmp_path, items, media="sidecar")
    missing = of(verify_path(path), "media-missing")
    assert len(missing) == 50
    assert len({f.entry for f in missing}) == 50


# ----------------------------------------------------------------------------- header


def raw_session(tmp_path: Path, header: dict[str, Any], drop: Iterable[str] = ()) -> Path:
    """A session whose header line is written from a JSON object (to carry any value)."""
    head = Header(id=SESSION_ID, created_at="2026-10-01T09:00:00Z")
    obj = {**header_to_json(head), **header}
    for name in drop:
        del obj[name]
    path = tmp_path / "raw.jsonl"
    entries = build(head, [Item(ts="", item=image_item("data:image/png;base64,AA=="))])
    path.write_bytes(canonical.dumps(obj) + b"\n" + b"".join(entry_line(e) for e in entries))
    return path


def test_redacted_header_is_one_info_finding(tmp_path: Path) -> None:
    path = raw_session(tmp_path, {"redacted": True})
    found = verify_path(path)
    assert [(f.code, f.severity, f.line) for f in found] == [("redacted", "info", 1)]
    assert "against itself only" in found[0].message
    assert "not a claim about the original" in found[0].message
    # Its request hashes are checked (the test below): the message said they were not, and
    # ``asf verify`` printed ``info: redacted: redacted: ...``.
    assert "not checked" not in found[0].message
    assert not found[0].message.startswith("redacted:")


def test_redacted_file_is_held_to_its_own_request_hashes(tmp_path: Path) -> None:
    """Redaction recomputes every hash (SPEC §2): a redacted file verifies against itself."""
    entries = [
        Item(ts="", item=image_item("data:image/png;base64,AA==")),
        Response(ts="", response_id="r1", model="gpt-5", request_hash="sha256:" + "0" * 64),
    ]
    redacted = write(tmp_path, entries, name="redacted.jsonl", redacted=True)
    assert sorted(f.code for f in verify_path(redacted)) == ["redacted", "request-hash"]


def test_redacted_false_says_nothing(tmp_path: Path) -> None:
    assert verify_path(raw_session(tmp_path, {"redacted": False})) == []


def test_empty_id_is_an_error_and_a_missing_one_is_the_readers(tmp_path: Path) -> None:
    empty = verify_path(raw_session(tmp_path, {"id": ""}))
    assert [(f.code, f.severity, f.line) for f in empty] == [("header-id", "error", 1)]
    missing = verify_path(raw_session(tmp_path, {}, drop=["id"]))
    assert [f.code for f in missing] == ["bad-header"]
    mistyped = verify_path(raw_session(tmp_path, {"id": 7}))
    assert [f.code for f in mistyped] == ["bad-header"]


def test_blank_id_is_empty(tmp_path: Path) -> None:
    """An id of only whitespace names nothing: it is as empty as ``""``."""
    found = verify_path(raw_session(tmp_path, {"id": " \t"}))
    assert [(f.code, f.severity, f.line) for f in found] == [("header-id", "error", 1)]


@pytest.mark.parametrize(
    "created_at", ["2026-10-01 09:00:00Z", "2026-02-30T09:00:00Z", "yesterday", "", "2026-10-01"]
)
def test_created_at_must_be_rfc3339(tmp_path: Path, created_at: str) -> None:
    found = verify_path(raw_session(tmp_path, {"created_at": created_at}))
    assert [(f.code, f.severity, f.line) for f in found] == [("header-created-at", "warning", 1)]


def test_created_at_missing_is_the_readers(tmp_path: Path) -> None:
    found = verify_path(raw_session(tmp_path, {}, drop=["created_at"]))
    assert [f.code for f in found] == ["bad-header"]


def test_payload_profile(tmp_path: Path) -> None:
    dated = verify_path(raw_session(tmp_path, {"payload": "openresponses/2026-13-01"}))
    assert [(f.code, f.severity) for f in dated] == [("payload-profile", "warning")]
    latest = verify_path(raw_session(tmp_path, {"payload": "openresponses/latest"}))
    assert [f.code for f in latest] == ["payload-profile"]
    # Another profile altogether is the reader's warning, not repeated.
    other = verify_path(raw_session(tmp_path, {"payload": "chatcompletions/1"}))
    assert [(f.code, f.severity) for f in other] == [("bad-header", "warning")]


@pytest.mark.parametrize(
    ("spec_date", "real"),
    [
        ("2025-12-31", True),
        ("2024-02-29", True),
        ("2026-01-01", True),
        ("2025-02-29", False),
        ("2026-00-10", False),
        ("2026-04-31", False),
    ],
)
def test_payload_profile_date_must_be_a_real_day(
    tmp_path: Path, spec_date: str, real: bool
) -> None:
    """Every real calendar day (December and a leap day included) names a spec; a day past
    its month's end or month 0 does not."""
    found = verify_path(raw_session(tmp_path, {"payload": f"openresponses/{spec_date}"}))
    assert [f.code for f in found] == ([] if real else ["payload-profile"])


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("media", "blobs"),
        ("media", 1),
        ("media", None),
        ("redacted", "yes"),
        ("records", "run"),
        ("records", ["run", 2]),
        ("harness", "pyharness"),
        ("cwd", ["/"]),
        ("parent_session", 5),
        ("spawned_by", {"call": "c"}),
    ],
)
def test_mistyped_optional_member(tmp_path: Path, member: str, value: Any) -> None:
    extra = {"parent_session": "01995b2a-0000-7000-8000-00000000pare"}
    if member == "parent_session":
        extra = {}
    found = verify_path(raw_session(tmp_path, {**extra, member: value}))
    assert [(f.code, f.severity, f.line) for f in found] == [("header-member", "warning", 1)]
    assert member in found[0].message


def test_spawned_by_without_parent_session(tmp_path: Path) -> None:
    alone = verify_path(raw_session(tmp_path, {"spawned_by": "call_1"}))
    assert [(f.code, f.severity) for f in alone] == [("header-spawned-by", "warning")]
    both = {"spawned_by": "call_1", "parent_session": "01995b2a-0000-7000-8000-00000000pare"}
    assert verify_path(raw_session(tmp_path, both)) == []


@given(
    when=st.datetimes(
        min_value=datetime(1000, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.just(UTC)
    ),
    offset=st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59),
)
def test_rfc3339_accepts_what_isoformat_writes(when: datetime, offset: int) -> None:
    zone = timezone(timedelta(minutes=offset))
    assert rfc3339_ok(when.astimezone(zone).isoformat())
    assert rfc3339_ok(when.strftime("%Y-%m-%dT%H:%M:%SZ"))


@pytest.mark.parametrize(
    "bad",
    [
        "2026-10-01T24:00:00Z",
        "2026-10-01T09:60:00Z",
        "2026-10-01T09:00:61Z",
        "2025-02-29T09:00:00Z",
        "2026-00-10T09:00:00Z",
        "2026-10-01T09:00:00",
        "2026-10-01T09:00:00+0200",
        "2026-10-01T09:00:00+24:00",
        "2026-10-01T09:00:00.Z",
        "2026-10-01T09:00Z",
        "2026-1-01T09:00:00Z",
        "\uff12026-10-01T09:00:00Z",  # a fullwidth digit
    ],
)
def test_rfc3339_refuses(bad: str) -> None:
    assert not rfc3339_ok(bad)


@pytest.mark.parametrize(
    "good", ["2024-02-29T09:00:00Z", "2026-12-31T23:59:60Z", "2026-10-01t09:00:00.123z"]
)
def test_rfc3339_accepts(good: str) -> None:
    assert rfc3339_ok(good)


# ----------------------------------------------------------------------------- vectors


def _vectors() -> list[Path]:
    return sorted(SESSIONS.rglob("*.jsonl"))


@pytest.mark.parametrize("path", _vectors(), ids=lambda p: str(p.relative_to(SESSIONS)))
def test_vectors_give_no_header_or_media_finding(path: Path) -> None:
    """The vectors have well-formed headers and inline media: nothing new to report."""
    assert new_codes(verify_path(path)) == set()


def test_a_vector_rewritten_as_redacted(tmp_path: Path) -> None:
    lines = (SESSIONS / "basic.jsonl").read_bytes().splitlines(keepends=True)
    header = strict_json.parse(lines[0])
    header["redacted"] = True
    path = tmp_path / "basic.jsonl"
    path.write_bytes(canonical.dumps(header) + b"\n" + b"".join(lines[1:]))
    before = verify_path(SESSIONS / "basic.jsonl")
    after = verify_path(path)
    assert [f.code for f in after if f.code not in {g.code for g in before}] == ["redacted"]
