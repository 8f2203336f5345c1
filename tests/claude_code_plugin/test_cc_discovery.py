"""Which paths are Claude Code stores: cheap, never raising, and never another format's."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
from pathlib import Path

import pytest
from cc_helpers import CLAUDE_HOME, PROJECTS, convert, outputs, reports_in, run
from cc_synth import SESSION, Lines, simple
from fixture_paths import HERMES_FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_plugin.plugin as hermes
from asf_core import plugins
from asf_core.cli.main import ExitCode
from asf_core.pipeline import host
from claude_code_plugin import plugin

A0Y = PROJECTS / "-home-USER-projects-spotter-worktrees-spotter-a0y"
F1 = A0Y / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
ALL_PROJECTS = sorted(p for p in PROJECTS.iterdir() if p.is_dir())


def _claimed(path: Path | None) -> list[tuple[Path, float]]:
    return [(c.path, c.confidence) for c in plugin.discover(path) or []]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in ("CLAUDE_CONFIG_DIR", "HERMES_HOME", "CHATLOG_DIR"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    "path",
    [CLAUDE_HOME, CLAUDE_HOME / ".claude", PROJECTS],
    ids=["home", ".claude", "projects"],
)
def test_every_project_is_a_store(path: Path) -> None:
    assert _claimed(path) == [(p, 1.0) for p in ALL_PROJECTS]


def test_a_project_directory_a_session_file_and_its_side_directory() -> None:
    assert _claimed(A0Y) == [(A0Y, 1.0)]
    assert _claimed(F1) == [(F1, 1.0)]
    assert _claimed(A0Y / F1.stem) == [(F1, 1.0)]


def test_a_folder_in_a_side_directory_is_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder inside a session's side directory (its ``subagents/``, a workflow's run
    folder ``subagents/workflows/<run>/`` beside that run's ``journal.jsonl``, as CLI 2.1.167
    and later write them) is that session's, as the side directory is: it was taken for a
    project, its journal converted as a session and its agents as orphans of a missing file."""
    project = tmp_path / "projects" / "-home-cwtrocks"
    main = simple(Lines(version="2.1.212")).write(project)
    side = project / SESSION / "subagents"
    simple(Lines(agentId="a651d9ec80933f498", isSidechain=True)).write(
        side, "agent-a651d9ec80933f498"
    )
    run_folder = side / "workflows" / "wf_ee4496f1-21b"
    simple(Lines(agentId="a1dc167b051549fcf", isSidechain=True)).write(
        run_folder, "agent-a1dc167b051549fcf"
    )
    journal = '{"type":"started","key":"v2:50ad796a","agentId":"a1dc167b051549fcf"}\n'
    (run_folder / "journal.jsonl").write_text(journal)
    for folder in (side, side / "workflows", run_folder):
        assert _claimed(folder) == [(main, 1.0)]
    monkeypatch.chdir(run_folder)
    assert _claimed(Path()) == [(main.absolute(), 1.0)]
    monkeypatch.chdir(tmp_path)
    assert convert([run_folder], tmp_path / "out") == 0
    (report,) = reports_in(tmp_path / "out")
    assert sorted(report["files"]) == [
        SESSION,
        f"{SESSION}.agent-a651d9ec80933f498",
        f"{SESSION}.workflows.wf_ee4496f1-21b.agent-a1dc167b051549fcf",
    ]
    assert report["strays"] == []
    unit = f"{SESSION}/subagents/workflows/wf_ee4496f1-21b/journal.jsonl"
    assert [d["unit"] for d in report["dropped"]] == [unit]
    # Not in a side directory, or its session's file missing: judged as before.
    assert _claimed(project) == [(project, 1.0)]
    main.unlink()
    assert _claimed(run_folder) == [(run_folder, 0.9)]


def test_default_is_the_users_own(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("HOME", str(CLAUDE_HOME))
    assert _claimed(None) == [(p, 1.0) for p in ALL_PROJECTS]
    config = tmp_path / "config"
    simple().write(config / "projects" / "-x")
    clean_env.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert _claimed(None) == [(config / "projects" / "-x", 1.0)]
    clean_env.setenv("CLAUDE_CONFIG_DIR", "")  # set but empty: ignored
    assert _claimed(None) == [(p, 1.0) for p in ALL_PROJECTS]
    clean_env.setenv("HOME", str(tmp_path / "nobody"))
    assert plugin.discover(None) is None


def test_nothing_found_names_where_claude_code_keeps_sessions(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No path named and no session where Claude Code keeps them: the error says where
    that is (``~/.claude/projects``, or ``$CLAUDE_CONFIG_DIR/projects`` when set)."""
    clean_env.setenv("HOME", str(tmp_path))
    clean_env.setenv("ASF_PLUGINS", "claude-code")
    for config, looked in ((None, tmp_path / ".claude"), (tmp_path / "cfg", tmp_path / "cfg")):
        if config is not None:
            clean_env.setenv("CLAUDE_CONFIG_DIR", str(config))
        code, out, err = run(capsys, "list")
        assert (code, out) == (ExitCode.NOTHING, "")
        assert err == (
            "asf: no stores found in the default locations "
            f"(claude-code: {looked / 'projects'}); name a PATH\n"
        )


def test_copies_outside_claude_are_recognised_by_their_lines(tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    shutil.copytree(A0Y, backup / "some-project")
    assert _claimed(backup) == [(backup / "some-project", 0.9)]
    assert _claimed(backup / "some-project") == [(backup / "some-project", 0.9)]
    renamed = tmp_path / "session.jsonl"
    shutil.copyfile(F1, renamed)
    assert _claimed(renamed) == [(renamed, 0.9)]


def test_a_session_opening_with_a_prompt_of_megabytes_is_recognised(tmp_path: Path) -> None:
    """A first prompt pasted whole (a log, a file: a line of megabytes) is read as one line,
    not as pieces of 64 KB that parse as nothing: the copy of the project is claimed, the
    session file too, and it converts."""
    lines = Lines()
    prompt = lines.user(None, "look at this log\n" + "2026-03-01 INFO all is well\n" * 40_000)
    lines.text(prompt, "msg_1", "It is.")
    project = tmp_path / "copy" / "-home-u-big"
    path = lines.write(project)
    assert path.stat().st_size > 1 << 20
    assert _claimed(project) == [(project, 0.9)]
    assert _claimed(path) == [(path, 1.0)]
    assert convert([project], tmp_path / "out") == ExitCode.OK
    assert len(outputs(tmp_path / "out")) == 1


def test_other_formats_are_not_claimed(tmp_path: Path) -> None:
    """Hermes' databases, ASF files and other JSONL are not ours; ours are not Hermes'."""
    for path in [HERMES_FIXTURES, *sorted(HERMES_FIXTURES.glob("*/state.db"))[:2]]:
        assert plugin.discover(path) is None
    out = tmp_path / "out"
    assert convert([F1], out) == 0
    assert plugin.discover(out) is None
    for asf_file in out.rglob("*.jsonl"):
        assert plugin.discover(asf_file) is None
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": "hi", "session": "s"}) + "\n")
    assert plugin.discover(chat) is None
    for path in (CLAUDE_HOME, PROJECTS, A0Y, F1):
        assert hermes.discover(path) is None


def test_only_claude_code_claims_the_shared_home() -> None:
    pm = plugins.make_plugin_manager()
    discovery = host.discover(pm, CLAUDE_HOME / ".claude")
    assert not discovery.failures
    assert {c.claim.format for c in discovery.candidates} == {"claude-code"}


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(
        ["x.jsonl", "11111111-2222-4333-8444-555555555555.jsonl", "agent-a.jsonl"]
    ),
    data=st.binary(max_size=400),
)
def test_discover_never_raises(tmp_path: Path, name: str, data: bytes) -> None:
    target = tmp_path / "p" / name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(data)
    for path in (target, target.parent, tmp_path):
        plugin.discover(path)  # whatever it says, it says it without raising


def test_odd_paths(tmp_path: Path) -> None:
    assert plugin.discover(tmp_path / "missing") is None
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert plugin.discover(fifo) is None
    assert plugin.discover(tmp_path) is None


# --- through the command -----------------------------------------------------------------


def test_convert_a_claude_dir_and_convert_with_no_path_agree(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run(capsys, "convert", CLAUDE_HOME / ".claude", "-o", tmp_path / "given")
    assert code == ExitCode.OK
    clean_env.setenv("HOME", str(CLAUDE_HOME))
    code, _, _ = run(capsys, "convert", "-o", tmp_path / "default")
    assert code == ExitCode.OK
    given_files = outputs(tmp_path / "given")
    default_files = outputs(tmp_path / "default")
    assert sorted(given_files) == sorted(default_files)
    assert len(given_files) == len(list(PROJECTS.rglob("*.jsonl")))
    for key, path in given_files.items():
        assert path.read_bytes() == default_files[key].read_bytes()
    assert {r["format"] for r in reports_in(tmp_path / "default")} == {"claude-code"}


def test_list_shows_title_times_counts_cwd_branch_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, stdout, _ = run(capsys, "list", A0Y, "--json")
    assert code == ExitCode.OK
    (store,) = json.loads(stdout)["stores"]
    (session,) = store["sessions"]
    assert session["id"] == F1.stem
    assert session["title"].startswith("Work on bead spotter-a0y.")
    assert (session["started"], session["ended"]) == (
        "2026-02-12T15:36:08.028Z",
        "2026-02-12T16:17:55.991Z",
    )
    assert session["counts"] == {"lines": 1881, "prompts": 3, "responses": 157, "subagents": 3}
    assert session["cwd"] == "/home/USER/projects/spotter-worktrees/spotter-a0y"
    assert session["details"] == {"git_branch": "spotter-a0y", "version": "2.1.39"}
    code, stdout, _ = run(capsys, "list", CLAUDE_HOME / ".claude", "--json")
    listed = [s for st in json.loads(stdout)["stores"] for s in st["sessions"]]
    # A session per main file, and per session folder whose main file is missing.
    folders = {d.name for d in PROJECTS.glob("*/*") if (d / "subagents").is_dir()}
    assert {s["id"] for s in listed} == {p.stem for p in PROJECTS.glob("*/*.jsonl")} | folders
    assert len(listed) == len({s["id"] for s in listed})
    assert {"git_branch": "HEAD", "version": "2.1.152"} in [s["details"] for s in listed]
    # the terminal shows a line per session (id, times, rows, store, title) under a header
    code, stdout, _ = run(capsys, "list", CLAUDE_HOME / ".claude")
    assert len(stdout.splitlines()) == 1 + len(listed)


def test_list_gives_the_model_so_model_picks(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a model, 'asf list ~/.claude --model opus' picked nothing, whatever ran."""
    code, stdout, _ = run(capsys, "list", A0Y, "--json")
    (session,) = json.loads(stdout)["stores"][0]["sessions"]
    assert session["model"] == "claude-opus-4-6"  # the first response's (not its agents')
    code, stdout, _ = run(capsys, "list", A0Y, "--model", "OPUS-4", "--json")
    assert code == ExitCode.OK
    assert [s["id"] for st in json.loads(stdout)["stores"] for s in st["sessions"]] == [F1.stem]
    code, stdout, _ = run(capsys, "list", A0Y, "--model", "sonnet", "--json")
    assert code == ExitCode.OK
    assert [s for st in json.loads(stdout)["stores"] for s in st["sessions"]] == []


def test_the_model_listed_is_the_first_the_session_itself_answered_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a sub-agent's line (sidechain) nor a ``<synthetic>`` message Claude Code wrote
    itself (an API error it shows), nor a line that names no model."""
    s = Lines()
    u = s.user(None, "hello")
    a = s.text(u, "msg_0", "from a sidechain", model="claude-haiku-4-5", isSidechain=True)
    a = s.text(a, "msg_1", "API Error", model="<synthetic>")
    a = s.text(a, "msg_2", "no model named")
    s.objects[-1]["message"].pop("model")
    s.text(a, "msg_3", "Done.", model="claude-sonnet-4-5")
    s.write(tmp_path / "-work")
    code, stdout, _ = run(capsys, "list", tmp_path / "-work", "--json")
    assert code == ExitCode.OK
    (session,) = json.loads(stdout)["stores"][0]["sessions"]
    assert session["model"] == "claude-sonnet-4-5"


def test_list_of_a_session_whose_file_is_missing_tells_when_and_where_its_agents_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No title (an agent's prompt is its task, not the session's), but the earliest start,
    the latest end, and the working directory, branch and version of the agent that ran
    first, whatever the files' names."""
    agents = tmp_path / "-work" / SESSION / "subagents"
    late = simple(Lines(agentId="a1", isSidechain=True, cwd="/work/late", gitBranch="two"))
    for obj in late.objects:
        obj["timestamp"] = obj["timestamp"].replace("2026-03-01", "2026-03-02")
    late.write(agents, "agent-a1")
    early = simple(Lines(agentId="a2", isSidechain=True, cwd="/work/early", version="2.1.40"))
    early.write(agents, "agent-a2")
    code, stdout, _ = run(capsys, "list", tmp_path / "-work", "--json")
    assert code == ExitCode.OK
    (store,) = json.loads(stdout)["stores"]
    (session,) = store["sessions"]
    assert session["id"] == SESSION
    assert session.get("title") is None
    assert (session["started"], session["ended"]) == (
        "2026-03-01T10:00:01Z",
        "2026-03-02T10:00:07Z",
    )
    assert session["cwd"] == "/work/early"
    assert session["details"] == {"git_branch": "main", "version": "2.1.40"}


def test_registered_as_a_third_party_plugin() -> None:
    """An ``asf.formats`` entry point of the installed distribution, nothing more."""
    points = importlib.metadata.entry_points(group="asf.formats")
    assert points["claude-code"].value == "claude_code_plugin.plugin"
    records = {r.name: r for r in plugins.make_plugin_manager().records()}
    assert records["claude-code"].status == "ok"


def test_a_file_of_titles_only_is_claude_codes(tmp_path: Path) -> None:
    """CLI 1.0 opened a session's file with ``summary`` lines (a title and the ``leafUuid``
    of the conversation it names): a copy holding only those, under any name, is still
    recognised as Claude Code's."""
    titles = tmp_path / "titles.jsonl"
    line = {"type": "summary", "summary": "Fix the parser", "leafUuid": SESSION}
    titles.write_text(json.dumps(line) + "\n")
    assert _claimed(titles) == [(titles, 0.9)]


def test_only_the_projects_folder_of_claude_is_trusted(tmp_path: Path) -> None:
    """Another folder under ``.claude`` holding folders of JSONL files that are not Claude
    Code's (an editor's, a tool's logs) is judged by their lines, not claimed blindly."""
    other = tmp_path / ".claude" / "ide"
    (other / "logs").mkdir(parents=True)
    (other / "logs" / "events.jsonl").write_text('{"event": "open", "file": "a.py"}\n')
    assert _claimed(other) == []
