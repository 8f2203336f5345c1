"""``-`` as a path: the ASF lines on stdin for ``asf show`` and ``asf verify``, refused by
``asf export`` (whose documents are named after FILE and whose sub-agents lie beside it);
``./-`` names a file called ``-`` (docs/cli.md)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from fixture_paths import SHARED

from asf_core.cli.main import ExitCode, main
from asf_core.model import Header, Item
from asf_core.writer import SessionBuilder, entry_line, header_line

SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"


def _run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *argv: str,
    stdin: bytes = b"",
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", ["basic.jsonl", "bad-parent.jsonl", "corrupt-middle.jsonl"])
def test_verify_reads_stdin_as_it_reads_the_file(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``asf convert ... -o - | asf verify -`` said '-: no such file or directory' (exit 2);
    the lines on stdin are verified as the same file is, named ``stdin``."""
    path = SESSIONS / name
    code, out, err = _run(capsys, monkeypatch, "verify", str(path))
    piped = _run(capsys, monkeypatch, "verify", "-", stdin=path.read_bytes())
    assert piped == (code, out.replace(str(path), "stdin"), err)
    assert piped[1].splitlines()[-1].startswith("stdin: ")
    as_json = _run(capsys, monkeypatch, "verify", "--json", "-", stdin=path.read_bytes())
    of_file = _run(capsys, monkeypatch, "verify", "--json", str(path))
    doc, expected = json.loads(as_json[1]), json.loads(of_file[1])
    assert as_json[0] == of_file[0]
    assert doc["path"] == "-"
    assert {f["path"] for f in doc["findings"]} <= {"stdin"}
    strip = [{**f, "path": ""} for f in expected["findings"]]
    assert [{**f, "path": ""} for f in doc["findings"]] == strip


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"hello\n", "line 1 is not a session header (not a JSON object: it begins 'hello')"),
        (b"", "empty file: no session header"),
    ],
)
def test_verify_of_stdin_that_is_not_asf_fails_as_a_file_does(
    data: bytes, why: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = _run(capsys, monkeypatch, "verify", "-", stdin=data)
    assert (code, err) == (ExitCode.USAGE, "")
    assert out == (
        f"stdin: error: unreadable: not an ASF session file: {why}\nstdin: FAILED (1 error)\n"
    )


def test_a_file_called_dash_is_named_as_dot_slash_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(SESSIONS / "basic.jsonl", tmp_path / "-")
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, monkeypatch, "verify", "./-")
    assert (code, out) == (ExitCode.OK, "-: ok\n")
    code, out, err = _run(capsys, monkeypatch, "export", "./-", "--to", "text")
    assert (code, err) == (ExitCode.OK, "")
    assert out.startswith("Session ")


def test_export_refuses_stdin_with_what_to_do(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``asf export -`` said '-: no such file or directory', as if a file were missing."""
    data = (SESSIONS / "basic.jsonl").read_bytes()
    for target in ("text", "atif"):
        code, out, err = _run(capsys, monkeypatch, "export", "-", "--to", target, stdin=data)
        assert (code, out) == (ExitCode.USAGE, "")
        assert err == (
            "asf: export reads a FILE or DIR, not stdin ('-'): write the session to a file "
            "first (asf convert ... -o DIR), or name a file called '-' as ./-\n"
        )


def test_show_of_stdin_reads_no_sidecar_blob_from_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines on stdin have no file, so no directory beside it: their ``sidecar:`` images are
    named, as a missing blob is, even where the current directory holds a folder named by
    the session id (``asf show -`` inlined the blob found there)."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(16)
    digest = hashlib.sha256(png).hexdigest()
    (tmp_path / "with-media").mkdir()
    (tmp_path / "with-media" / digest).write_bytes(png)
    monkeypatch.chdir(tmp_path)
    header = Header(id="with-media", created_at="2026-01-01T00:00:00Z", media="sidecar")
    b = SessionBuilder(header)
    image = {"type": "input_image", "image_url": f"sidecar:sha256:{digest}"}
    text = {"type": "input_text", "text": "look"}
    message = {"type": "message", "role": "user", "content": [text, image]}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=message), parent=None)
    data = header_line(header) + b"".join(entry_line(e) for e in b.entries)
    code, out, err = _run(capsys, monkeypatch, "show", "-", "--format", "markdown", stdin=data)
    assert (code, err) == (ExitCode.OK, "")
    assert f"*\\[image: sidecar:sha256:{digest}\\]*" in out
    assert "data:image" not in out
    # The same lines in a file there: the blob beside it is shown.
    (tmp_path / "s.jsonl").write_bytes(data)
    code, out, _ = _run(capsys, monkeypatch, "show", "s.jsonl", "--format", "markdown")
    assert code == ExitCode.OK
    assert "![image](<data:image/png;base64," in out
