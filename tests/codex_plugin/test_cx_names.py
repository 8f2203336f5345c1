"""Whatever a rollout's header or path names, its session gets a file of its own and the store
converts whole; what is named like a rollout but is no file is reported, never opened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cx_helpers import convert, reports_in, sessions_in, write_rollout
from hypothesis import given
from hypothesis import strategies as st

from asf_core.layout import session_file_name
from codex_plugin.convert.store import file_name

_META = {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta"}
_PROMPT = {
    "timestamp": "2026-03-01T10:00:01Z",
    "type": "response_item",
    "payload": {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "hi"}],
    },
}


@given(st.text(max_size=300))
def test_every_name_is_a_file_name_of_its_own(name: str) -> None:
    """Any name gives a name the host takes for a file; a name already safe is kept."""
    safe = file_name(name)
    assert session_file_name(safe) is not None
    if (
        name
        and len(name) <= 200
        and all(c.isascii() and (c.isalnum() or c in "._-~") for c in name)
    ):
        assert safe == name or name.startswith(".")


@given(st.text(max_size=40), st.text(max_size=40))
def test_two_names_never_share_a_file(a: str, b: str) -> None:
    if a != b:
        assert file_name(a) != file_name(b)


@pytest.mark.parametrize(
    "thread",
    [None, "../../outside", ".hidden", "a/b\\c", " padded ", "x" * 300, "nul\0byte", "report"],
)
def test_a_rollout_of_any_thread_name_converts(tmp_path: Path, thread: str | None) -> None:
    """A header naming no thread (the file, in a date folder, names the session), or a
    damaged one naming a path, a hidden or overlong name: each converts to a file in the
    store's directory, and the report names it."""
    home = tmp_path / "sessions"
    # No thread at all: no header (the first line a turn's settings), no id in the name.
    first = {**_META, "type": "turn_context", "payload": {"model": "m"}}
    if thread is not None:
        first = {**_META, "payload": {"id": thread}}
    write_rollout(
        home / "2026" / "03" / "rollout-2026-03-01T10-00-00-x.jsonl",
        [
            first,
            _PROMPT,
        ],
    )
    out = tmp_path / "out"
    assert convert([home], out) == 0
    (report,) = reports_in(out)
    (written,) = sessions_in(out).values()
    assert list(report["files"].values()) == [os.path.relpath(written.path, report["output"])]
    assert Path(written.path).resolve().is_relative_to(Path(report["output"]).resolve())


def test_what_is_named_like_a_rollout_but_is_no_file_is_reported(tmp_path: Path) -> None:
    home = tmp_path / "sessions"
    write_rollout(
        home / "rollout-2026-03-01T10-00-00-real.jsonl", [{**_META, "payload": {"id": "t"}}]
    )
    os.mkfifo(home / "rollout-2026-03-01T10-00-01-fifo.jsonl")
    (home / "rollout-2026-03-01T10-00-02-gone.jsonl").symlink_to(tmp_path / "nothing")
    (home / "rollout-2026-03-01T10-00-03-folder.jsonl").symlink_to(tmp_path)
    out = tmp_path / "out"
    assert convert([home], out) == 0
    (report,) = reports_in(out)
    dropped = sorted(f["unit"] for f in report["dropped"])
    assert dropped == [
        "rollout-2026-03-01T10-00-01-fifo.jsonl",
        "rollout-2026-03-01T10-00-02-gone.jsonl",
        "rollout-2026-03-01T10-00-03-folder.jsonl",
    ]
    assert len(report["files"]) == 1


def test_a_headerless_rollout_is_named_by_the_last_id_in_its_name(tmp_path: Path) -> None:
    """With no header, the thread is the file name's last UUID (Codex puts the thread's id
    last: an earlier one is some other id the name was given)."""
    from codex_plugin.source.rollout import facts_of, named_thread

    name = "rollout-0199aaaa-0000-7000-8000-00000000000a-0199aaaa-0000-7000-8000-00000000000b.jsonl"
    assert named_thread(name) == "0199aaaa-0000-7000-8000-00000000000b"
    assert named_thread("rollout-2026-03-01T10-00-00.jsonl") is None
    source = write_rollout(tmp_path / ".codex" / "sessions" / name, [_PROMPT])
    assert facts_of([], source.name).thread == "0199aaaa-0000-7000-8000-00000000000b"
    assert convert([tmp_path / ".codex"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    assert session.header.id == "0199aaaa-0000-7000-8000-00000000000b"


def test_a_long_name_is_shortened() -> None:
    """A safe name of up to 200 characters is its own file name; a longer one is cut, with
    a hash of the whole name, so two long names sharing a start differ."""
    assert file_name("a" * 200) == "a" * 200
    long = [file_name("a" * 201), file_name("a" * 201 + "b")]
    assert [len(n) for n in long] == [131, 131]
    assert long[0] != long[1]
    assert long[0].startswith("a" * 120 + "-")


def test_a_thread_that_is_no_uuid_gets_a_name_based_id(tmp_path: Path) -> None:
    """Ids that are no UUID give the UUIDv5 of a name in the nil namespace (so another tool
    can derive them): a rollout of such a thread (whose file name cannot carry it) that of
    ``codex:<thread>/<file>``, one naming no thread ``codex:file:<file>``, and the source
    thread of a fork ``codex:<thread>``."""
    named = dict(_META, payload={"id": "my-thread", "forked_from_id": "src-thread"})
    write_rollout(tmp_path / "a" / "rollout-x.jsonl", [named])
    write_rollout(tmp_path / "b" / "rollout-x.jsonl", [_PROMPT])
    headers = []
    for folder in ("a", "b"):
        assert convert([tmp_path / folder / "rollout-x.jsonl"], tmp_path / f"out-{folder}") == 0
        (session,) = sessions_in(tmp_path / f"out-{folder}").values()
        headers.append(session.header)
    assert [h.id for h in headers] == [
        "a1fbaf26-cb5d-55b9-8959-f7564a3e0379",
        "561cc6ca-2283-5226-b106-e935e0723dfc",
    ]
    assert headers[0].parent_session == "b43e9ce2-a487-5ee0-9d81-28de417d199e"
