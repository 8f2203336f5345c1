"""A session and its sub-agents (docs/formats/claude-code.md §6): which call or compaction
links each transcript, and what happens when nothing or something odd does."""

from __future__ import annotations

import shutil
from pathlib import Path

from cc_helpers import NS, PROJECTS, Converted, convert, line_entries, reports_in, sessions_in
from cc_synth import SESSION, Lines, simple

from asf_core.model import Compaction, Entry
from asf_core.reader import SessionFile
from asf_core.verify.session import verify_path

PROJECT = "-home-u-proj"
#: The shared F6 (a short session, no compaction) and F4 (F1's compaction helper).
F6 = PROJECTS / "-home-marco-projects-spotter" / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl"
F4 = (
    PROJECTS
    / "-home-USER-projects-spotter-worktrees-spotter-a0y"
    / "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    / "subagents"
    / "agent-acompact-70d8e7.jsonl"
)


def _converted(tmp_path: Path) -> dict[str, SessionFile]:
    out = tmp_path / "out"
    assert convert([tmp_path / PROJECT], out) == 0
    assert [f for f in verify_path(out) if f.severity != "info"] == []
    return sessions_in(out)


def _links(session: SessionFile) -> list[Entry]:
    return [e for e in session.entries if e.unknown.get(NS, {}).get("derived") == "link"]


def test_a_compaction_helper_hanging_from_no_line_of_its_session_is_linked_at_the_end(
    tmp_path: Path,
) -> None:
    """F4 beside a session whose lines it does not hang from (F6, no compaction): nothing
    places it, so it is a child linked from the session's end, like any unlinked
    transcript; finding no line to anchor it is no crash."""
    project = tmp_path / PROJECT
    project.mkdir()
    main = shutil.copy(F6, project)
    agents = project / F6.stem / "subagents"
    agents.mkdir(parents=True)
    shutil.copy(F4, agents)
    sessions = _converted(tmp_path)
    session, helper = sessions[F6.stem], sessions[f"{F6.stem}.agent-acompact-70d8e7"]
    assert helper.header.parent_session == session.header.id
    assert helper.header.spawned_by is None
    assert session.entries[-1] is _links(session)[-1]
    assert session.entries[-1].session == helper.header.id  # type: ignore[attr-defined]
    assert session.entries[-1].call_id is None  # type: ignore[attr-defined]
    assert Path(main).read_bytes() == F6.read_bytes()


def _compacted(boundaries: list[str | None]) -> tuple[Lines, str, list[int]]:
    """A prompt and answer (the helper's anchor), then a compact boundary per entry of
    ``boundaries`` (its ``logicalParentUuid``: the answer's uuid for "anchor", the prompt's
    for "prompt", none for None), each followed by its summary and a new prompt. Returns the
    lines, the anchor's uuid and each summary's line number."""
    s = Lines()
    u = s.user(None, "hello")
    a = s.text(u, "msg_1", "Hi.")
    named = {"anchor": a, "prompt": u}
    summaries = []
    for logical in boundaries:
        more = {} if logical is None else {"logicalParentUuid": named[logical]}
        b = s.system(None, "compact_boundary", compactMetadata={"preTokens": 10}, **more)
        summary = s.user(b, "This session is being continued.", isCompactSummary=True)
        summaries.append(len(s.objects))
        s.user(summary, "go on")
    return s, a, summaries


def _with_helper(s: Lines, anchor: str, project: Path, *earlier: str) -> None:
    """The helper's transcript: hook output hanging from ``earlier`` lines of the session,
    then its request hanging from ``anchor`` (as F4's lines hang from F1's)."""
    s.write(project)
    helper = Lines(agentId="acompact-1", isSidechain=True)
    own = (f"00000000-0000-4000-9000-{n:012d}" for n in range(len(earlier) + 2))
    for uid in earlier:
        hook = "<system-reminder>hook output</system-reminder>"
        helper.user(uid, hook, isMeta=True, uuid=next(own))
    req = helper.user(anchor, "Summarise the conversation.", uuid=next(own))
    helper.text(req, "msg_h", "This session is being continued.", uuid=next(own))
    helper.write(project / s.session / "subagents", "agent-acompact-1")


def _compaction_parents(session: SessionFile, number: int) -> tuple[object, ...]:
    (entry,) = line_entries(session, number)
    assert isinstance(entry, Compaction)
    return tuple(entry.parents)


def test_a_helper_is_linked_from_the_boundary_naming_its_anchor(tmp_path: Path) -> None:
    """Two compactions below the answer the helper's request hangs from: the first boundary
    names the prompt as what it followed, the second the answer. The helper summarised for
    the second (its ``logicalParentUuid`` is the helper's anchor), not the first one written
    after the anchor."""
    s, anchor, (first, second) = _compacted(["prompt", "anchor"])
    _with_helper(s, anchor, tmp_path / PROJECT)
    sessions = _converted(tmp_path)
    session, helper = sessions[SESSION], sessions[f"{SESSION}.agent-acompact-1"]
    leaf = helper.resume_leaf()
    assert _compaction_parents(session, first) == ()
    (parent,) = _compaction_parents(session, second)
    assert (parent.session, parent.entry) == (helper.header.id, leaf)  # type: ignore[attr-defined]
    (link,) = _links(session)
    at = session.entries.index(link)
    assert session.entries[at - 1].unknown[NS]["line"] == second - 1  # right after its boundary


def test_a_helper_hanging_from_several_lines_summarised_after_the_latest(
    tmp_path: Path,
) -> None:
    """A helper whose lines hang from the first compaction's line and from a later one (its
    request's) wrote the summary of the compaction that followed the later line."""
    s, anchor, (first, _) = _compacted(["anchor", "anchor"])
    later = s.text(s.objects[-1]["uuid"], "msg_9", "Later.")
    b = s.system(None, "compact_boundary", logicalParentUuid=later)
    summary = s.user(b, "This session is being continued.", isCompactSummary=True)
    s.user(summary, "go on")
    _with_helper(s, later, tmp_path / PROJECT, anchor)
    sessions = _converted(tmp_path)
    session, helper = sessions[SESSION], sessions[f"{SESSION}.agent-acompact-1"]
    assert _compaction_parents(session, first) == ()
    (parent,) = _compaction_parents(session, len(s.objects) - 1)
    assert parent.entry == helper.resume_leaf()  # type: ignore[attr-defined]


def test_a_boundary_without_a_logical_parent_takes_the_helper_above_it(tmp_path: Path) -> None:
    """A boundary naming no ``logicalParentUuid``: the helper's compaction is the first
    boundary after the line its request hangs from; its summary lists the helper's last
    entry, and the link follows the boundary (not the session's end)."""
    s, anchor, (summary,) = _compacted([None])
    _with_helper(s, anchor, tmp_path / PROJECT)
    sessions = _converted(tmp_path)
    session, helper = sessions[SESSION], sessions[f"{SESSION}.agent-acompact-1"]
    (parent,) = _compaction_parents(session, summary)
    assert parent.entry == helper.resume_leaf()  # type: ignore[attr-defined]
    (link,) = _links(session)
    at = session.entries.index(link)
    assert session.entries[at - 1].unknown[NS]["line"] == summary - 1
    assert session.entries[-1] is not link


def _spawning(agent: str, spawns: str, call: str) -> Lines:
    """A sub-agent transcript whose Task call's result names ``spawns`` as its agent."""
    s = Lines(agentId=agent, isSidechain=True)
    u = s.user(None, "delegate")
    c = s.call(u, "msg_1", call, name="Task")
    r = s.result(c, call, "done", toolUseResult={"agentId": spawns, "status": "completed"})
    s.text(r, "msg_2", "Done.")
    return s


def test_sub_agents_spawning_each_other_are_cut_loose_once(tmp_path: Path) -> None:
    """Damaged files where two sub-agents' Task results name each other: the loop is cut
    where it is found, at the first transcript (by name), which hangs from the session's
    end; the other stays the child of the call naming it. Each converts once, no crash."""
    project = tmp_path / PROJECT
    simple().write(project)
    agents = project / SESSION / "subagents"
    _spawning("loop1", "loop2", "toolu_1").write(agents, "agent-loop1")
    _spawning("loop2", "loop1", "toolu_2").write(agents, "agent-loop2")
    sessions = _converted(tmp_path)
    session = sessions[SESSION]
    one, two = (sessions[f"{SESSION}.agent-loop{n}"] for n in (1, 2))
    assert (one.header.parent_session, one.header.spawned_by) == (session.header.id, None)
    assert (two.header.parent_session, two.header.spawned_by) == (one.header.id, "toolu_1")
    assert [link.session for link in _links(session)] == [one.header.id]  # type: ignore[attr-defined]
    assert session.entries[-1] is _links(session)[-1]
    assert [link.session for link in _links(one)] == [two.header.id]  # type: ignore[attr-defined]
    (report,) = reports_in(tmp_path / "out")
    assert len(report["files"]) == 3


def _header_and_entries(out: Path, name: str) -> tuple[object, list[Entry]]:
    session = sessions_in(out)[name]
    return session.header, session.entries


def test_a_sub_agent_named_alone_is_placed_in_its_project(tmp_path: Path) -> None:
    """A sub-agent's transcript under ``<session>/subagents/`` given on its own belongs to
    the project directory above its session's folder: its header names that project and
    the file under it, as converting the project does (it named ``subagents`` and the bare
    file). A nested workflow agent whose session file is missing is the same session, id
    and all, whether it or its project is named."""
    alone = PROJECTS / F4.parent.parent.parent.name / F4.parent.parent.name / "subagents"
    agent = alone / "agent-a93ccab.jsonl"
    assert convert([agent], tmp_path / "one") == 0
    (report,) = reports_in(tmp_path / "one")
    assert report["store"] == {"kind": "file", "project": F4.parent.parent.parent.name}
    (session,) = sessions_in(tmp_path / "one").values()
    assert session.header.unknown[NS]["file"] == f"{F4.parent.parent.name}/subagents/{agent.name}"
    assert session.header.unknown[NS]["project"] == F4.parent.parent.parent.name
    nested = tmp_path / PROJECT / SESSION / "subagents" / "workflows" / "run1"
    written = simple(Lines(agentId="wf1", isSidechain=True)).write(nested, "agent-wf1")
    assert convert([tmp_path / PROJECT], tmp_path / "all") == 0
    assert convert([written], tmp_path / "alone") == 0
    name = f"{SESSION}.workflows.run1.agent-wf1"
    whole = _header_and_entries(tmp_path / "all", name)
    assert _header_and_entries(tmp_path / "alone", name) == whole
    assert whole[0].unknown[NS]["file"] == (  # type: ignore[attr-defined]
        f"{SESSION}/subagents/workflows/run1/agent-wf1.jsonl"
    )


def test_an_empty_sub_agent_transcript_is_said_and_not_written(tmp_path: Path) -> None:
    """A sub-agent's transcript of 0 bytes (created, never written) is no session: a
    warning names it, and only the session file is converted."""
    project = tmp_path / PROJECT
    simple().write(project)
    agents = project / SESSION / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-empty1.jsonl").write_bytes(b"")
    sessions = _converted(tmp_path)
    assert list(sessions) == [SESSION]
    (report,) = reports_in(tmp_path / "out")
    (finding,) = [f for f in report["findings"] if f["kind"] == "warning"]
    assert finding["message"] == "empty sub-agent transcript: nothing to convert"
    assert finding["unit"] == f"{SESSION}/subagents/agent-empty1.jsonl"


def test_the_report_counts_every_line_of_the_shared_files(converted: Converted) -> None:
    """Each project's report sums its files' lines as the shared README counts them: F1 to
    F4 (1881 + 116 + 98 + 15 lines, of which F1's 27 file-history-snapshot and 1
    queue-operation lines are bookkeeping; 157 + 11 + 9 + 1 API responses), F5 to F7
    (96 + 15 + 39; 3 + 1 + 3 snapshots and 2 queue-operations; 12 + 1 + 4 responses) and F8
    (5 lines, 2 queue-operations and 1 last-prompt; 1 response)."""
    reports = reports_in(converted.out)
    assert {r["store"]["kind"] for r in reports} == {"project"}
    counts = {r["store"]["project"]: r["counts"] for r in reports}
    expected = {
        F4.parent.parent.parent.name: (2110, 2082, 28, 178),
        F6.parent.name: (150, 141, 9, 17),
        "-tmp-agent-history-real-agent-claude-workspace": (5, 2, 3, 1),
    }
    assert set(counts) == set(expected)
    for project, (lines, transcript, bookkeeping, responses) in expected.items():
        assert counts[project] == {
            "lines": lines,
            "transcript_lines": transcript,
            "bookkeeping_lines": bookkeeping,
            "unreadable_lines": 0,
            "responses": responses,
            "branches": 0,
        }


def test_every_transcript_after_an_older_clis_copy_is_linked(tmp_path: Path) -> None:
    """An older CLI's project-level copy of an agent's transcript (``~2``) comes before
    another project-level agent (by name): the copy hangs from the session's end, and so
    does the agent after it; no transcript is left out."""
    project = tmp_path / PROJECT
    simple().write(project)
    copied = simple(Lines(agentId="a1", isSidechain=True))
    copied.write(project / SESSION / "subagents", "agent-a1")
    copied.write(project, "agent-a1")
    simple(Lines(agentId="b2", isSidechain=True)).write(project, "agent-b2")
    sessions = _converted(tmp_path)
    names = [f"{SESSION}.agent-a1", f"{SESSION}.agent-a1~2", f"{SESSION}.agent-b2"]
    assert sorted(sessions) == [SESSION, *names]
    session = sessions[SESSION]
    for name in names:
        assert sessions[name].header.parent_session == session.header.id
    linked = {link.session for link in _links(session)}  # type: ignore[attr-defined]
    assert linked == {sessions[name].header.id for name in names}


def test_an_older_clis_agent_without_its_session_file_converts_alone(tmp_path: Path) -> None:
    """A project-level ``agent-<id>.jsonl`` (before CLI 2.1.2) whose session file is gone:
    its lines' ``sessionId`` names the session it belongs to, which is read as a session
    with no file; the transcript converts as a session of its own, and the report says so."""
    project = tmp_path / PROJECT
    simple(Lines(agentId="old1", isSidechain=True)).write(project, "agent-old1")
    sessions = _converted(tmp_path)
    (report,) = reports_in(tmp_path / "out")
    assert list(sessions) == [f"{SESSION}.agent-old1"]
    (session,) = sessions.values()
    assert session.header.parent_session is None
    assert session.header.unknown[NS]["file"] == "agent-old1.jsonl"
    (stray,) = report["strays"]
    assert "session file is missing" in stray["message"]


def test_an_older_clis_agent_file_naming_no_session_is_its_own(tmp_path: Path) -> None:
    """A project-level ``agent-<id>.jsonl`` left empty names no session in its lines: it
    is a session of its own, named by the file, and said to be empty; the project's other
    session converts as ever."""
    project = tmp_path / PROJECT
    simple().write(project)
    (project / "agent-void1.jsonl").write_bytes(b"")
    sessions = _converted(tmp_path)
    assert list(sessions) == [SESSION]
    (report,) = reports_in(tmp_path / "out")
    (finding,) = [f for f in report["findings"] if f["kind"] == "warning"]
    assert (finding["session"], finding["unit"]) == ("agent-void1", "agent-void1.jsonl")
    assert finding["message"] == "empty sub-agent transcript: nothing to convert"


def test_an_unlinked_sub_agent_is_linked_at_the_end_of_the_live_branch(tmp_path: Path) -> None:
    """The session was rewound (the live branch is not the first one written) and holds a
    sub-agent nothing names: its link comes after the live branch's last entry, the file's
    last, not at the end of the branch given up."""
    s = Lines()
    a1 = s.text(s.user(None, "first"), "msg_1", "one")
    s.text(s.user(a1, "second"), "msg_2", "two")
    s.text(s.user(a1, "second again"), "msg_3", "two again")
    s.write(tmp_path / PROJECT)
    orphan = simple(Lines(agentId="lone1", isSidechain=True))
    orphan.write(tmp_path / PROJECT / SESSION / "subagents", "agent-lone1")
    sessions = _converted(tmp_path)
    session = sessions[SESSION]
    (link,) = _links(session)
    assert session.entries[-1] is link
    assert link.session == sessions[f"{SESSION}.agent-lone1"].header.id  # type: ignore[attr-defined]
    assert session.entries[-2].unknown[NS]["derived"] == "response"
    assert session.entries[-2].response_id == "msg_3"  # type: ignore[attr-defined]


def test_a_one_line_session_links_its_sub_agent_after_its_prompt(tmp_path: Path) -> None:
    """A session file holding only its first prompt (interrupted at once) and a sub-agent
    nothing names: the link hangs from the prompt, on its one branch, not as a root."""
    s = Lines()
    s.user(None, "start")
    s.write(tmp_path / PROJECT)
    simple(Lines(agentId="lone1", isSidechain=True)).write(
        tmp_path / PROJECT / SESSION / "subagents", "agent-lone1"
    )
    session = _converted(tmp_path)[SESSION]
    prompt, link = session.entries
    assert link is _links(session)[0]
    assert link.parent == prompt.id


def test_a_call_whose_result_names_no_agent_is_linked_by_its_progress(tmp_path: Path) -> None:
    """A Task call whose result carries no ``toolUseResult.agentId`` (interrupted, say)
    while its ``agent_progress`` lines name the agent (``data.agentId`` under the call's
    ``parentToolUseID``): the sub-agent is spawned by that call; hook progress lines, which
    name no agent, link nothing."""
    s = Lines()
    c = s.call(s.user(None, "delegate"), "msg_1", "toolu_task", name="Task")
    p = s.progress(c, parentToolUseID="toolu_task")
    p = s.progress(
        p, data={"type": "agent_progress", "agentId": "prog1"}, parentToolUseID="toolu_task"
    )
    s.text(s.result(c, "toolu_task", "[Request interrupted by user]"), "msg_2", "Stopped.")
    s.write(tmp_path / PROJECT)
    simple(Lines(agentId="prog1", isSidechain=True)).write(
        tmp_path / PROJECT / SESSION / "subagents", "agent-prog1"
    )
    sessions = _converted(tmp_path)
    child = sessions[f"{SESSION}.agent-prog1"]
    assert child.header.spawned_by == "toolu_task"
    assert child.header.parent_session == sessions[SESSION].header.id
