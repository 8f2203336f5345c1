"""Single lines of odd but readable shape, each mapped as docs/formats/codex.md §3 says and
rebuilt, equal, from its entries (§6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cx_helpers import (
    context_items,
    convert,
    rebuilt_lines,
    reports_in,
    sessions_in,
    source_lines,
    write_rollout,
)
from cx_oracle import rebuild

from asf_core.model import Config, Response
from asf_core.reader import SessionFile

THREAD = "0199aaaa-0000-7000-8000-0000000000f2"
ROLLOUT = f"sessions/2026/03/01/rollout-2026-03-01T10-00-00-{THREAD}.jsonl"
JSON = dict[str, Any]


def _line(kind: str, payload: Any, second: int = 0) -> JSON:
    return {"timestamp": f"2026-03-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def _meta(**members: Any) -> JSON:
    return _line("session_meta", {"id": THREAD, "timestamp": "2026-03-01T10:00:00Z", **members})


def _converted(root: Path, lines: list[Any]) -> tuple[SessionFile, JSON]:
    source = write_rollout(root / ".codex" / ROLLOUT, lines)
    assert convert([root / ".codex"], root / "out") == 0
    (session,) = sessions_in(root / "out").values()
    assert rebuilt_lines(session) == source_lines(source)
    (report,) = reports_in(root / "out")
    return session, report


def test_base_instructions_without_a_text_stay_in_the_header_line(tmp_path: Path) -> None:
    """``base_instructions`` without a string ``text`` gives no instructions; the line is
    kept whole (nothing ``moved``), so it is rebuilt as written."""
    for n, base in enumerate(({}, {"text": None}, {"text": 5, "kind": "x"}, "You are Codex.")):
        session, _ = _converted(tmp_path / str(n), [_meta(base_instructions=base)])
        (config,) = session.entries
        assert isinstance(config, Config)
        assert config.instructions is None
        assert config.unknown["codex"] == {"line": 1, "object": _meta(base_instructions=base)}


def test_token_counts_keep_only_integer_usage(tmp_path: Path) -> None:
    """A ``token_count`` event's ``last_token_usage`` gives the response's usage; a count
    that is not an integer (a string, a float, a bool) is left out, and with none left the
    event is no response but a kept event, as is another event carrying such a usage."""
    usage = {
        "input_tokens": 1200,
        "cached_input_tokens": 1000,
        "output_tokens": "30",
        "reasoning_output_tokens": 2.5,
        "total_tokens": True,
    }
    odd = {"input_tokens": "1", "output_tokens": 1.0, "total_tokens": False}
    lines = [
        _meta(),
        _line("turn_context", {"model": "gpt-5"}, 1),
        _line("event_msg", {"type": "token_count", "info": {"last_token_usage": usage}}, 2),
        _line("event_msg", {"type": "token_count", "info": {"last_token_usage": odd}}, 3),
        _line("event_msg", {"type": "future_count", "info": {"last_token_usage": usage}}, 4),
    ]
    session, _ = _converted(tmp_path, lines)
    kinds = [e.type for e in session.entries]
    assert kinds == ["config", "config", "response", "custom", "custom"]
    response = session.entries[2]
    assert isinstance(response, Response)
    assert response.model == "gpt-5"
    assert response.usage == {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000}}


def test_a_local_shell_call_without_a_call_id_is_left_unanswered(tmp_path: Path) -> None:
    """An old model's ``local_shell_call`` may carry no ``call_id`` (Codex's is optional):
    it is in the context, and no output can name it, so none is derived for it; the
    report counts no aborted call."""
    action = {"type": "exec", "command": ["ls"]}
    call = {"type": "local_shell_call", "id": "lsh_1", "status": "completed", "action": action}
    lines = [_meta(), _line("response_item", call, 1)]
    session, report = _converted(tmp_path, lines)
    assert context_items(session) == [call]
    assert context_items(session) == rebuild(tmp_path / ".codex" / ROLLOUT)
    assert "aborted_calls" not in report["counts"]


def _native(items: list[JSON]) -> list[JSON]:
    """Items with the call id Codex wrote (a repeated one is renamed ``<id>-<n>`` in ASF)."""
    return [{**i, "call_id": i["call_id"].split("-")[0]} if "call_id" in i else i for i in items]


def test_a_repeated_call_id_is_answered_as_codex_matches_it(tmp_path: Path) -> None:
    """Providers other than OpenAI's may number their calls per turn (``call_0`` again in
    the next turn; CLI 0.152.1 records whatever id the provider gives). Codex matches calls
    and outputs by that id alone: a repeated call left open is answered by the earlier
    output of its id (no ``aborted`` output is added), and an output after a rollback of
    the repeated call still has the first call of its id in the history (not left out)."""

    def msg(role: str, text: str) -> JSON:
        return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}

    call = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_0"}
    output = {"type": "function_call_output", "call_id": "call_0", "output": "ok"}
    turns = [msg("user", "one"), call, output, msg("user", "two"), call]
    open_call = [_line("response_item", item, n) for n, item in enumerate(turns, 1)]
    session, report = _converted(tmp_path / "open", [_meta(model_provider="shirty"), *open_call])
    items = context_items(session)
    assert [i.get("call_id") for i in items] == [None, "call_0", "call_0", None, "call_0-2"]
    assert _native(items) == rebuild(tmp_path / "open" / ".codex" / ROLLOUT)
    assert "aborted_calls" not in report["counts"]
    rollback = _line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}, 6)
    after = [_line("response_item", item, 7) for item in (msg("user", "three"), output)]
    session, _ = _converted(tmp_path / "rolled", [_meta(), *open_call, rollback, *after])
    items = context_items(session)
    assert [i.get("call_id") for i in items] == [None, "call_0", "call_0", None, "call_0-2"]
    assert _native(items) == rebuild(tmp_path / "rolled" / ".codex" / ROLLOUT)


def test_blank_lines_are_counted_never_read(tmp_path: Path) -> None:
    """Blank lines (empty, spaces, a carriage return) make no entry and no stray, but count:
    the lines after them keep their physical numbers."""
    lines: list[Any] = [_meta(), b"", b"   ", b"\r", _line("turn_context", {"model": "m"}, 1)]
    session, report = _converted(tmp_path, lines)
    assert [e.unknown["codex"]["line"] for e in session.entries] == [1, 5]
    assert report["strays"] == []
    assert report["counts"]["lines"] == 2


def test_tool_searches_are_paired_as_codex_pairs_them(tmp_path: Path) -> None:
    """CLI 0.140+ lets the model search for tools: a client-run ``tool_search_call`` is
    answered by a ``tool_search_output`` of its ``call_id``. Codex's resume gives one left
    open (a turn interrupted mid-search) an output that found nothing, drops a client
    output whose call is not there, and keeps a server-run pair (no ``call_id``); calls and
    outputs of other kinds never answer each other, so a function call whose id only a
    custom tool's output carries is answered ``aborted``."""
    query = {"query": "calendar create event", "limit": 8}
    search = {"type": "tool_search_call", "call_id": "call_ts1", "status": "completed"}
    search |= {"execution": "client", "arguments": query}
    server = {"type": "tool_search_call", "call_id": None, "status": "completed"}
    server |= {"execution": "server", "arguments": {"paths": ["calendar"]}}
    found = {"type": "tool_search_output", "call_id": None, "status": "completed"}
    found |= {"execution": "server", "tools": [{"type": "namespace", "name": "calendar"}]}
    stray = {"type": "tool_search_output", "call_id": "call_gone", "status": "completed"}
    stray |= {"execution": "client", "tools": []}
    call = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c9"}
    other = {"type": "custom_tool_call_output", "call_id": "c9", "output": "ok"}
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    items = [prompt, server, found, stray, call, other, search]
    lines = [
        _meta(cli_version="0.144.4"),
        *(_line("response_item", i, n) for n, i in enumerate(items, 1)),
    ]
    session, report = _converted(tmp_path, lines)
    aborted = {"type": "function_call_output", "call_id": "c9", "output": "aborted"}
    nothing = {"type": "tool_search_output", "call_id": "call_ts1", "status": "completed"}
    nothing |= {"execution": "client", "tools": []}
    assert context_items(session) == [prompt, server, found, call, aborted, search, nothing]
    assert context_items(session) == rebuild(tmp_path / ".codex" / ROLLOUT)
    assert report["counts"]["aborted_calls"] == 2


def test_an_output_codex_makes_takes_an_id_from_its_calls_id(tmp_path: Path) -> None:
    """Newer CLIs write each item's id (``fc_…``, ``ctc_…``, mid-2026 on). The output
    Codex makes for a call left open takes an id derived from its call's (codex-rs
    ``synthetic_output_id``, UUIDv5, so that a resume sends the same bytes), by the
    output's kind; a call without an id (older rollouts), or with an empty one, gives its
    output none."""
    call = {"type": "function_call", "id": "fc_08f6a29c7fb09c9d016a6f526982b08191937fa3b3473d7ef5"}
    call |= {"name": "wait", "arguments": '{"cell_id":"14"}', "call_id": "call_UK2D6"}
    custom = {
        "type": "custom_tool_call",
        "id": "ctc_08f6a29c7fb09c9d016a6e3bd6658081918b2f4d51ece60a33",
    }
    custom |= {"status": "completed", "call_id": "call_LdUx", "name": "exec", "input": "text(1);"}
    search = {"type": "tool_search_call", "id": "tsc_08f6a29c7fb09c9d016a6f5300"}
    search |= {"call_id": "call_ts", "status": "completed", "execution": "client", "arguments": {}}
    shell = {"type": "local_shell_call", "id": "lsh_08f6a29c7fb09c9d016a6f5301", "call_id": "c_sh"}
    shell |= {"status": "completed", "action": {"type": "exec", "command": ["ls"]}}
    old = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "call_old"}
    blank = old | {"id": "", "call_id": "call_blank"}  # an empty id derives none
    items = [call, custom, search, shell, old, blank]
    lines = [
        _meta(cli_version="0.158.0"),
        *(_line("response_item", i, n) for n, i in enumerate(items, 1)),
    ]
    session, _ = _converted(tmp_path, lines)
    made = [i for i in context_items(session) if i not in items]
    assert [(i["type"], i.get("id")) for i in made] == [
        ("function_call_output", "fco_7b919f15-0daf-51f0-b29c-990f97ba17c5"),
        ("custom_tool_call_output", "ctco_d0817c58-d6fe-5ed6-8a5a-bd56f1635595"),
        ("tool_search_output", "tso_e2c4d7f1-57d2-5523-a5be-8d6933af8c8d"),
        ("function_call_output", "fco_f8a857db-05cc-5966-b048-32cd54befe15"),
        ("function_call_output", None),
        ("function_call_output", None),
    ]
    assert context_items(session) == rebuild(tmp_path / ".codex" / ROLLOUT)


def test_a_tool_search_output_codex_keeps_without_its_call(tmp_path: Path) -> None:
    """Codex drops a tool search's output whose call is missing only when the output is
    the client's and names a call: a server-run output stays though it names a call id no
    call carries, and so does a client output naming none (codex-rs ``remove_orphan_outputs``
    checks only a client output's ``call_id``)."""
    named = {"type": "tool_search_output", "call_id": "srv_1", "status": "completed"}
    named |= {"execution": "server", "tools": [{"type": "namespace", "name": "calendar"}]}
    nameless = {"type": "tool_search_output", "call_id": None, "status": "completed"}
    nameless |= {"execution": "client", "tools": []}
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    items = [prompt, named, nameless]
    lines = [
        _meta(cli_version="0.144.4"),
        *(_line("response_item", i, n) for n, i in enumerate(items, 1)),
    ]
    session, _ = _converted(tmp_path, lines)
    assert context_items(session) == items
    assert context_items(session) == rebuild(tmp_path / ".codex" / ROLLOUT)
