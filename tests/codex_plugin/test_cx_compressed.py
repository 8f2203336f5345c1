"""Rollouts Codex compressed in place (``rollout-*.jsonl.zst``, zstd, once a week idle) convert
as the plain rollouts they were; a compressed copy beside its plain form is reported, as Codex
reads the plain one; a compressed file that does not inflate is a stray, never a crash."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from backports import zstd
from cx_helpers import (
    NS,
    by_tag,
    convert,
    need_shared,
    rebuilt_lines,
    reports_in,
    sessions_in,
    shared_files,
    source_lines,
    write_rollout,
)

from asf_core.cli.main import main
from codex_plugin.source import compressed
from codex_plugin.source.compressed import open_rollout

_DAY = "2026/02/24"


def _compress(plain: Path) -> Path:
    """``plain`` compressed as Codex does it: the ``.zst`` beside it, the plain file gone."""
    packed = plain.with_name(plain.name + ".zst")
    packed.write_bytes(zstd.compress(plain.read_bytes(), level=3))
    plain.unlink()
    return packed


def _prompt(text: str) -> dict[str, object]:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return {"timestamp": "2026-03-01T10:00:01Z", "type": "response_item", "payload": item}


def _home(root: Path, rollouts: list[Path]) -> Path:
    """A Codex home holding ``rollouts``: the last one archived, the others in sessions."""
    home = root / ".codex"
    for n, rollout in enumerate(rollouts):
        folder = "archived_sessions" if n == len(rollouts) - 1 else f"sessions/{_DAY}"
        (home / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rollout, home / folder / rollout.name)
    return home


def _without_file(session_json: list[str]) -> list[str]:
    header = json.loads(session_json[0])
    header[NS].pop("file")
    return [json.dumps(header), *session_json[1:]]


def test_compressed_rollouts_convert_as_their_plain_form(tmp_path: Path) -> None:
    """Every shared real rollout, compressed (in sessions and in archived_sessions), converts
    to the very entries its plain form gives, and every line comes back from them; only
    the header's ``file`` differs, naming the file that was read."""
    need_shared()
    rollouts = shared_files()
    plain_home = _home(tmp_path / "plain", rollouts)
    packed_home = _home(tmp_path / "packed", rollouts)
    for rollout in packed_home.rglob("rollout-*.jsonl"):
        _compress(rollout)
    assert convert([plain_home], tmp_path / "plain-out") == 0
    assert convert([packed_home], tmp_path / "packed-out") == 0
    plain, packed = sessions_in(tmp_path / "plain-out"), sessions_in(tmp_path / "packed-out")
    assert sorted(packed) == sorted(plain)
    assert len(packed) == len(rollouts)
    for name, session in packed.items():
        assert session.header.unknown[NS]["file"].endswith(".jsonl.zst")
        assert session.entries == plain[name].entries
        packed_name = Path(session.header.unknown[NS]["file"]).name
        (original,) = plain_home.rglob(packed_name.removesuffix(".zst"))
        assert rebuilt_lines(session) == source_lines(original)
    for report in reports_in(tmp_path / "packed-out"):
        assert (report["strays"], report["dropped"]) == ([], [])


def test_a_compressed_rollout_lists_and_converts_named_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``asf list`` and ``asf convert`` take a compressed rollout given by its path, as the
    plain one: the same preview, the same session."""
    need_shared()
    plain = shutil.copyfile(by_tag("X6"), tmp_path / by_tag("X6").name)
    assert main(["list", str(plain)]) == 0
    listed_plain = capsys.readouterr().out
    packed = _compress(Path(plain))
    assert main(["list", str(packed)]) == 0
    assert capsys.readouterr().out == listed_plain
    assert convert([packed], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    assert len(session.entries) > 10


def test_a_compressed_copy_beside_its_plain_rollout_is_reported_not_read(
    tmp_path: Path,
) -> None:
    """Codex reads the plain file where both forms are there (it is the one it appends to);
    so does asf, and the compressed copy is reported as dropped, saying why."""
    sessions = tmp_path / ".codex" / "sessions"
    name = "rollout-2026-03-01T10-00-00-019c8bfe-0000-7000-8000-000000000001.jsonl"
    meta = {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta"}
    thread = "019c8bfe-0000-7000-8000-000000000001"
    plain = write_rollout(sessions / name, [{**meta, "payload": {"id": thread}}, _prompt("new")])
    older = write_rollout(tmp_path / "older.jsonl", [{**meta, "payload": {"id": thread}}])
    (sessions / f"{name}.zst").write_bytes(zstd.compress(older.read_bytes()))
    out = tmp_path / "out"
    assert convert([tmp_path / ".codex"], out) == 0
    (session,) = sessions_in(out).values()
    assert session.header.unknown[NS]["file"] == name
    assert session.header.id == thread
    assert len([e for e in session.entries if e.type == "item"]) == 1  # the plain file's prompt
    (report,) = reports_in(out)
    assert [(f["unit"], f["message"]) for f in report["dropped"]] == [
        (
            f"{name}.zst",
            f"a compressed copy of {name} beside it, which Codex reads instead: not converted",
        )
    ]
    assert plain.exists()


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\x28\xb5\x2f\xfd" + b"\0" * 8, "ended"),
        (zstd.compress(b'{"type": "session_meta", "payload": {"id": "t"}}\n' * 50)[:-6], "ended"),
        (b"not zstd at all\n", "Unknown frame descriptor"),
    ],
)
def test_a_compressed_rollout_that_does_not_inflate_is_a_stray(
    tmp_path: Path, data: bytes, why: str
) -> None:
    """A damaged or cut compressed file is reported (a stray naming the file and why), and
    the store's other rollouts convert."""
    sessions = tmp_path / ".codex" / "sessions"
    meta = {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta"}
    sound = "rollout-2026-03-01T10-00-00-a.jsonl"
    write_rollout(sessions / sound, [{**meta, "payload": {"id": "a"}}])
    (sessions / "rollout-2026-02-01T10-00-00-b.jsonl.zst").write_bytes(data)
    out = tmp_path / "out"
    assert convert([tmp_path / ".codex"], out) == 0  # a stray is reported, not a failure
    assert [s.header.unknown[NS]["file"] for s in sessions_in(out).values()] == [sound]
    (report,) = reports_in(out)
    (stray,) = report["strays"]
    assert stray["unit"] == "rollout-2026-02-01T10-00-00-b.jsonl.zst"
    assert stray["message"].startswith("cannot read the file: not a whole zstd stream")
    assert why in stray["message"]


def test_a_rollout_inflating_beyond_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compressed file is inflated on disk, never past :data:`MAX_INFLATED` (a crafted
    stream cannot fill the disk), and refused as too large."""
    packed = tmp_path / "rollout-2026-03-01T10-00-00-x.jsonl.zst"
    packed.write_bytes(zstd.compress(b"x" * 5_000_000))
    monkeypatch.setattr(compressed, "MAX_INFLATED", 4_000_000)
    with pytest.raises(OSError, match="inflates past 4,000,000 bytes") as raised:
        open_rollout(packed)
    assert raised.value.errno == errno.EFBIG
    monkeypatch.setattr(compressed, "MAX_INFLATED", 5_000_000)
    with open_rollout(packed) as stream:
        assert stream.seek(0, 2) == 5_000_000


def test_inflating_holds_a_chunk_not_the_rollout(tmp_path: Path) -> None:
    """A compressed rollout is inflated to disk a chunk at a time: memory stays flat
    whatever it inflates to (48 MB here, a few MB of buffers held at most)."""
    import tracemalloc

    line = json.dumps({"type": "event_msg", "payload": {"text": "x" * 900}}).encode() + b"\n"
    packed = tmp_path / "rollout-2026-03-01T10-00-00-x.jsonl.zst"
    packed.write_bytes(zstd.compress(line * (48 * 1024 * 1024 // len(line))))
    tracemalloc.start()
    try:
        with open_rollout(packed) as stream:
            assert stream.seek(0, 2) > 47 * 1024 * 1024
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024


def test_a_fifo_named_like_a_compressed_rollout_is_no_file_and_never_opened(
    tmp_path: Path,
) -> None:
    """What is named like a compressed rollout but is no file is reported as such (not as a
    compressed copy), and never opened: a FIFO would stall the run."""
    sessions = tmp_path / ".codex" / "sessions"
    name = "rollout-2026-03-01T10-00-00-019c8bfe-0000-7000-8000-000000000002.jsonl"
    meta = {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta"}
    write_rollout(sessions / name, [{**meta, "payload": {"id": "t"}}])
    os.mkfifo(sessions / f"{name}.zst")
    os.mkfifo(sessions / "rollout-2026-03-01T10-00-01-alone.jsonl.zst")
    out = tmp_path / "out"
    assert convert([tmp_path / ".codex"], out) == 0
    (report,) = reports_in(out)
    why = "not a regular file (a FIFO, a device, a link to a folder or to nothing): not converted"
    assert sorted((f["unit"], f["message"]) for f in report["dropped"]) == [
        (f"{name}.zst", why),
        ("rollout-2026-03-01T10-00-01-alone.jsonl.zst", why),
    ]
    assert len(report["files"]) == 1
