"""``asf export`` as a user runs it: outputs, layout, and every expected error as one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_paths import VECTORS

from asf_core.cli.main import main
from asf_core.export import SessionTree, atif_document
from asf_core.model import Header
from asf_core.reader import read_session
from asf_core.writer import SessionBuilder, write_session

SESSIONS = VECTORS / "sessions"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["export", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_file_to_stdout_is_one_document_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = SESSIONS / "basic.jsonl"
    code, out, err = _run(capsys, str(path), "--to", "atif")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 1
    session = read_session(path)
    expected = atif_document(SessionTree(session).view(str(session.resume_leaf())))
    assert json.loads(lines[0]) == expected
    code, out, _ = _run(capsys, str(SESSIONS / "branch.jsonl"), "--to", "otel", "--all-leaves")
    assert code == 0
    assert [len(json.loads(line)["resourceSpans"]) for line in out.splitlines()] == [1, 1]


def test_leaf_picks_the_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, str(SESSIONS / "branch.jsonl"), "--to", "atif", "--leaf", "0b9d4d6f"
    )
    assert code == 0
    assert json.loads(out)["trajectory_id"].startswith("sha256:0b9d4d6f")


def test_output_file_and_directory_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = tmp_path / "one.md"
    code, out, _ = _run(capsys, str(SESSIONS / "basic.jsonl"), "--to", "markdown", "-o", str(one))
    assert (code, out) == (0, "")
    assert one.read_text().startswith("# Session 01995b2a")
    leaves = tmp_path / "leaves"
    code, _, _ = _run(
        capsys, str(SESSIONS / "branch.jsonl"), "--to", "html", "--all-leaves", "-o", str(leaves)
    )
    assert code == 0
    assert sorted(p.name for p in leaves.iterdir()) == ["branch.0b9d4d6fb06c.html", "branch.html"]
    # The resume leaf's page links to the other branch's page.
    assert 'href="branch.0b9d4d6fb06c.html"' in (leaves / "branch.html").read_text()
    # A directory: one file per session, the input's layout mirrored; nothing half-written.
    tree = tmp_path / "in"
    for name in ("basic", "runs"):
        (tree / name).mkdir(parents=True)
        shutil.copy(SESSIONS / f"{name}.jsonl", tree / name / f"{name}.jsonl")
    code, _, err = _run(capsys, str(tree), "--to", "atif", "-o", str(tmp_path / "out"))
    assert (code, err) == (0, "")
    written = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")
    )
    assert written == ["basic", "basic/basic.atif.json", "runs", "runs/runs.atif.json"]


def test_directory_to_stdout_concatenates_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in ("basic", "runs"):
        shutil.copy(SESSIONS / f"{name}.jsonl", tmp_path / f"{name}.jsonl")
    code, out, _ = _run(capsys, str(tmp_path), "--to", "text")
    assert code == 0
    assert out.count("session: 01995b2a") == 2


def _header_only(path: Path) -> Path:
    write_session(path, Header(id="empty", created_at="2026-01-01T00:00:00Z"), [])
    return path


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["/no/such/file", "--to", "atif"], 2, "no such file or directory"),
        (
            [str(SESSIONS / "unsupported-format.jsonl"), "--to", "atif"],
            2,
            "not an ASF session file",
        ),
        (
            [str(SESSIONS / "basic.jsonl"), "--to", "atif", "--leaf", "ffffffff"],
            2,
            "no entry id starts",
        ),
        ([str(SESSIONS), "--to", "atif", "--leaf", "ab"], 2, "give a FILE"),
        ([str(SESSIONS / "basic.jsonl"), "--to", "atif", "--content"], 2, "--to otel only"),
        ([str(SESSIONS / "basic.jsonl"), "--to", "html", "--all-leaves"], 2, "give -o DIR"),
        ([str(SESSIONS / "basic.jsonl"), "--to", "pdf"], 2, ""),
        (
            [str(SESSIONS / "basic.jsonl"), "--to", "otel", "--endpoint", "ftp://x"],
            2,
            "not an http",
        ),
    ],
)
def test_errors_are_one_line(
    argv: list[str], code: int, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    got, out, err = _run(capsys, *argv)
    assert got == code
    assert out == ""
    assert says in err
    assert "Traceback" not in err
    if says:
        assert err.count("\n") == 1


def test_nothing_to_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, str(tmp_path), "--to", "atif")[0] == 4
    empty = _header_only(tmp_path / "empty.jsonl")
    code, _, err = _run(capsys, str(empty), "--to", "atif")
    assert code == 4
    assert "no entries" in err
    # A directory whose every file has no entries exported nothing either, on one process
    # or several; beside a file that exports, an empty one is said and the run succeeds.
    _header_only(tmp_path / "also-empty.jsonl")
    for jobs in ("1", "2"):
        out_dir = tmp_path.parent / f"out-{jobs}"
        code, _, err = _run(capsys, str(tmp_path), "--to", "atif", "-o", str(out_dir), "-j", jobs)
        assert (code, err.count("no entries, nothing to export")) == (4, 2)
    assert _run(capsys, str(tmp_path), "--to", "markdown")[0] == 4
    shutil.copy(SESSIONS / "basic.jsonl", tmp_path / "basic.jsonl")
    for jobs in ("1", "2"):
        out_dir = tmp_path.parent / f"out-{jobs}"
        code, _, err = _run(capsys, str(tmp_path), "--to", "atif", "-o", str(out_dir), "-j", jobs)
        assert (code, err.count("no entries, nothing to export")) == (0, 2)
        assert (out_dir / "basic.atif.json").is_file()


def test_a_bad_file_in_a_directory_does_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SESSIONS / "basic.jsonl", tmp_path / "a.jsonl")
    shutil.copy(SESSIONS / "unsupported-format.jsonl", tmp_path / "b.jsonl")
    _header_only(tmp_path / "c.jsonl")
    code, out, err = _run(capsys, str(tmp_path), "--to", "atif", "-o", str(tmp_path / "out"))
    assert code == 2
    assert out == ""
    assert [line.split(":")[0] for line in err.splitlines()] == ["asf", "asf"]
    assert "b.jsonl" in err
    assert "c.jsonl: no entries" in err
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["a.atif.json"]


def test_a_document_is_never_written_over_what_the_export_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` naming FILE itself (or a link to it, or a session file beside it, where its
    sub-agents are looked for) is refused before anything is written: the session stays."""
    path = tmp_path / "basic.jsonl"
    shutil.copy(SESSIONS / "basic.jsonl", path)
    sibling = tmp_path / "runs.jsonl"
    shutil.copy(SESSIONS / "runs.jsonl", sibling)
    (tmp_path / "link.jsonl").symlink_to(path)
    (tmp_path / "hard").hardlink_to(path)
    before = {p: p.read_bytes() for p in (path, sibling)}
    change = "writing there would change it; name another path"
    for target, says in [
        (path, f"this run reads it: {change}"),
        (tmp_path / "link.jsonl", f"is a link to {path}, which this run reads: {change}"),
        (tmp_path / "hard", f"is a hard link to {path} (the same file), which this run reads"),
        (sibling, "read for its sub-agents; not written"),
    ]:
        code, out, err = _run(capsys, str(path), "--to", "html", "-o", str(target))
        assert (code, out) == (2, "")
        assert err.startswith(f"asf: {target}: ")
        assert says in err
        assert err.count("\n") == 1
    assert {p: p.read_bytes() for p in before} == before
    # A DIR's documents need a directory: an existing file is named as the problem.
    (tmp_path / "taken").write_text("")
    code, out, err = _run(capsys, str(tmp_path), "--to", "atif", "-o", str(tmp_path / "taken"))
    assert (code, out, err) == (
        2,
        "",
        f"asf: {tmp_path / 'taken'}: exists and is not a directory\n",
    )
    # A document file elsewhere is written as before, a session file in another folder
    # (not one the export reads) too.
    for _ in range(2):  # the second time over the first: a document, not a session file
        code, _, _ = _run(capsys, str(path), "--to", "html", "-o", str(tmp_path / "basic.html"))
        assert code == 0
        assert (tmp_path / "basic.html").read_text().startswith("<!DOCTYPE html>")
    # A new *.jsonl name beside it is no session file the export reads.
    code, _, err = _run(capsys, str(path), "--to", "otel", "-o", str(tmp_path / "t.otlp.jsonl"))
    assert (code, err) == (0, "")
    assert json.loads((tmp_path / "t.otlp.jsonl").read_text())["resourceSpans"]
    (tmp_path / "other").mkdir()
    elsewhere = tmp_path / "other" / "old.jsonl"
    shutil.copy(SESSIONS / "runs.jsonl", elsewhere)
    code, _, err = _run(capsys, str(path), "--to", "html", "-o", str(elsewhere))
    assert (code, err) == (0, "")
    assert elsewhere.read_text().startswith("<!DOCTYPE html>")


def test_closed_stdout_is_quiet(tmp_path: Path) -> None:
    """``asf export DIR --to markdown | head -1``: no traceback, the SIGPIPE exit code."""
    for n in range(30):
        shutil.copy(SESSIONS / "runs.jsonl", tmp_path / f"s{n}.jsonl")
    cmd = f"{sys.executable} -m asf_core.cli.main export {tmp_path} --to markdown | head -1"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, check=False
    )
    assert done.stdout.startswith("# ")
    assert done.stderr == ""
    assert done.returncode == 141


def test_sessions_built_here_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session of nothing but settings still gives a valid (one-step) ATIF document."""
    from asf_core.model import Config

    builder = SessionBuilder(Header(id="settings-only", created_at="2026-01-01T00:00:00Z"))
    builder.append(Config(ts="2026-01-01T00:00:01Z", model="m"), parent=None)
    path = tmp_path / "s.jsonl"
    write_session(path, builder.header, builder.entries)
    code, out, _ = _run(capsys, str(path), "--to", "atif")
    assert code == 0
    doc = json.loads(out)
    assert [s["source"] for s in doc["steps"]] == ["system"]
    assert doc["steps"][0]["extra"]["config_entries"] == [builder.entries[0].id]


@pytest.mark.parametrize("target", ["atif", "otel", "markdown", "text"])
def test_stdout_carries_no_raw_control_character(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Text from the data reaches stdout escaped (JSON: the same value), files keep it raw."""
    from asf_core.model import Config, Item, Response

    hostile = "title\x1b]0;pwned\x07 \x1b[2J \u202eevil \x9b"
    builder = SessionBuilder(Header(id="hostile", created_at="2026-01-01T00:00:00Z"))
    builder.append(Config(ts="2026-01-01T00:00:01Z", model="m", instructions=hostile), parent=None)
    message = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": hostile}],
    }
    builder.append(Item(ts="2026-01-01T00:00:02Z", item=message))
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": hostile}],
    }
    builder.append(Item(ts="2026-01-01T00:00:03Z", item=answer, response="r1"))
    builder.append(Response(ts="2026-01-01T00:00:04Z", response_id="r1", model="m"))
    path = tmp_path / "s.jsonl"
    write_session(path, builder.header, builder.entries)
    extra = ["--content"] if target == "otel" else []
    code, out, _ = _run(capsys, str(path), "--to", target, *extra)
    assert code == 0
    assert not any(ch in out for ch in "\x1b\x07\x9b\u202e")
    code, _, _ = _run(capsys, str(path), "--to", target, *extra, "-o", str(tmp_path / "f"))
    assert code == 0
    written = (tmp_path / "f").read_text(encoding="utf-8")
    if target in ("atif", "otel"):  # the same document, only escaped
        assert json.loads(out) == json.loads(written)
        assert "pwned" in out
    else:  # the text spelled out on stdout; the file keeps the data as it is
        assert "\\x1b]0;pwned" in out
        assert hostile in written


#: The child's own peak (VmHWM): ru_maxrss would include the pytest process's pages the
#: child held between fork and exec.
_PEAK = """
import sys
from pathlib import Path
from asf_core.cli.main import main
code = main(["export", sys.argv[1], "--to", sys.argv[2], "-o", sys.argv[3]])
status = Path("/proc/self/status").read_text().splitlines()
print(code, next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""


@pytest.mark.parametrize("target", ["atif", "html"])
def test_memory_does_not_grow_with_the_sessions(
    converted_homes: list[Path], tmp_path: Path, target: str
) -> None:
    """Four times the sessions, the same peak RSS (within 2 MB): one session at a time.

    (Keeping every ATIF document of the 8 copies instead would add about 4 MB.)
    """
    source = converted_homes[-2]
    peaks = []
    for copies in (2, 8):
        tree = tmp_path / f"in{copies}"
        for n in range(copies):
            shutil.copytree(source, tree / f"copy{n}")
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, str(tree), target, str(tmp_path / f"out{copies}")],
            capture_output=True,
            text=True,
            check=True,
        )
        code, peak = done.stdout.split()
        assert code == "0"
        peaks.append(int(peak))
    assert peaks[1] - peaks[0] < 2 * 1024, peaks


def test_a_damaged_line_is_said_as_asf_show_says_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose last line was cut off mid-write, or with a line that does not parse,
    exports the path without that entry: what the reader found is said on stderr, in the
    words of ``asf show``, and the exit code is the same (the export said nothing: a
    transcript silently lost its last answer, or began mid-conversation)."""
    lines = (SESSIONS / "basic.jsonl").read_bytes().splitlines(keepends=True)
    cut = tmp_path / "dir" / "cut.jsonl"
    cut.parent.mkdir()
    cut.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])
    broken = tmp_path / "dir" / "broken.jsonl"
    broken.write_bytes(b"".join([*lines[:2], b"{not json\n", *lines[3:]]))
    main(["show", str(cut)])
    shown = capsys.readouterr().err
    assert f"{cut}:{len(lines)}: warning: truncated: " in shown
    for target in ("atif", "otel", "markdown", "html", "text"):
        code, out, err = _run(capsys, str(cut), "--to", target, "-o", str(tmp_path / target))
        assert (code, out, err) == (0, "", shown)
        code, _, err = _run(capsys, str(broken), "--to", target)
        assert code == 0
        assert f"{broken}:3: error: corrupt-line: line does not parse" in err
        for jobs in ("1", "2"):
            out_dir = tmp_path / f"{target}-{jobs}"
            argv = (str(cut.parent), "--to", target, "-o", str(out_dir), "-j", jobs)
            code, _, err = _run(capsys, *argv)
            assert code == 0
            assert err.startswith(f"asf: {broken}:3: error: corrupt-line: ")
            assert err.endswith(shown)


@pytest.mark.parametrize("url", ["", "  "])
def test_an_empty_endpoint_is_a_usage_error(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--endpoint "$UNSET"`` is refused (exit 2, the option named), as an empty path is;
    it was read as no endpoint: the trace was printed, nothing sent, exit 0 (found trying
    endpoints by hand)."""
    argv = ["export", str(SESSIONS / "basic.jsonl"), "--to", "otel", "--endpoint", url]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "argument --endpoint: an empty URL" in err
