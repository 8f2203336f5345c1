"""Entries no single line is (docs/formats/claude-code.md §3.3, §3.4): a response's status,
usage and error read from its last line, and the environment in force."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cc_helpers import NS, converted
from cc_synth import Lines

from asf_core.model import Env, Item, Response
from claude_code_plugin.convert.derived import api_error, response_entry, usage

JSON = dict[str, Any]


def _last_line(**message: Any) -> JSON:
    """An assistant line as Claude Code writes it, its message's members replaced."""
    lines = Lines(version="2.1.152")
    lines.text(lines.user(None, "hi"), "msg_01", "hello")
    obj = lines.objects[-1]
    obj["message"].update(message)
    return obj


@pytest.mark.parametrize(
    ("stop", "status", "incomplete"),
    [
        ("end_turn", "completed", None),
        ("tool_use", "completed", None),
        ("stop_sequence", "completed", None),
        ("pause_turn", "incomplete", {"reason": "pause_turn"}),
        ("max_tokens", "incomplete", {"reason": "max_output_tokens"}),
        ("model_context_window_exceeded", "incomplete", {"reason": "max_output_tokens"}),
        ("refusal", "incomplete", {"reason": "content_filter"}),
        (None, None, None),  # every line of CLI 2.1.38-2.1.39
        ("some_later_reason", None, None),
    ],
)
def test_stop_reason_gives_status_and_incomplete(
    stop: str | None, status: str | None, incomplete: JSON | None
) -> None:
    response = response_entry("2026-03-01T10:00:02Z", _last_line(stop_reason=stop), [2])
    assert (response.status, response.incomplete) == (status, incomplete)
    assert response.error is None


@pytest.mark.parametrize(
    ("native", "expected"),
    [
        (
            {
                "input_tokens": 3,
                "cache_creation_input_tokens": 2120,
                "cache_read_input_tokens": 17442,
                "output_tokens": 9,
                "service_tier": "standard",
            },
            (19565, 17442, 9),
        ),
        ({"output_tokens": 5}, (0, 0, 5)),  # a count is a count, of output alone too
        ({"input_tokens": True, "output_tokens": 4}, (0, 0, 4)),  # a boolean is no count
        ({"service_tier": "standard"}, None),  # no count at all: no usage
        ("n/a", None),
    ],
    ids=["all-counts", "output-only", "boolean", "no-counts", "not-an-object"],
)
def test_usage_counts_all_input_and_only_counts(
    native: Any, expected: tuple[int, int, int] | None
) -> None:
    """Open Responses' ``input_tokens`` is uncached, cache-written and cache-read input
    together; anything that is not an integer count is left out."""
    if expected is None:
        assert usage(native) is None
        return
    total_in, cached, out = expected
    assert usage(native) == {
        "input_tokens": total_in,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "total_tokens": total_in + out,
    }


def _api_error_line(content: Any) -> JSON:
    """An API error line of a CLI that wrote only ``isApiErrorMessage`` beside the text."""
    obj = _last_line(model="<synthetic>", content=content)
    obj["isApiErrorMessage"] = True
    return obj


def test_an_api_error_without_its_members_reads_the_lines_text() -> None:
    """``api_error`` when ``error`` is missing, no code without ``apiErrorStatus``, and the
    line's text as the message when there are no ``errorDetails``."""
    line = _api_error_line([{"type": "text", "text": "API Error: Request was aborted."}])
    assert api_error(line) == {
        "type": "api_error",
        "code": None,
        "message": "API Error: Request was aborted.",
        "param": None,
    }
    response = response_entry("2026-03-01T10:00:02Z", line, [2])
    assert response.status == "failed"
    assert response.model == "<synthetic>"


@pytest.mark.parametrize(("status", "code"), [(529, "529"), (True, None), ("529", None)])
def test_an_api_errors_code_is_its_http_status_as_text(status: Any, code: str | None) -> None:
    """Only an integer status is an HTTP status (a boolean is none)."""
    line = _api_error_line([{"type": "text", "text": "API Error: Overloaded"}])
    line["apiErrorStatus"] = status
    error = api_error(line)
    assert error is not None
    assert error["code"] == code


def test_an_api_error_without_any_text_has_an_empty_message() -> None:
    error = api_error(_api_error_line([{"type": "tool_use", "id": "t", "name": "x", "input": {}}]))
    assert error is not None
    assert error["message"] == ""


def _convert(tmp_path: Path, lines: Lines) -> list[Any]:
    return list(converted(tmp_path, lines).entries)


def test_odd_message_id_and_model_still_make_a_valid_file(tmp_path: Path) -> None:
    """A damaged assistant line's non-string ``message.id`` and ``model`` are left out: they
    are no response id or model name, and ASF would not take them."""
    lines = Lines()
    lines.text(lines.user(None, "hi"), "msg_01", "hello")
    lines.objects[-1]["message"].update(id=5, model=7)
    entries = _convert(tmp_path, lines)
    (response,) = [e for e in entries if isinstance(e, Response)]
    assert (response.response_id, response.model) == (None, None)
    assert [e.response for e in entries if isinstance(e, Item)] == [None, None]


def test_leaving_the_git_repository_drops_vcs(tmp_path: Path) -> None:
    """Outside a repository Claude Code writes an empty ``gitBranch``: the ``env`` entry has
    the new ``cwd`` and no ``vcs``, and names the line it precedes."""
    lines = Lines()
    answer = lines.text(lines.user(None, "hi"), "msg_01", "hello")
    lines.common = {**lines.common, "cwd": "/home/u/notes", "gitBranch": ""}
    lines.user(answer, "now here")
    entries = _convert(tmp_path, lines)
    (env,) = [e for e in entries if isinstance(e, Env)]
    assert (env.cwd, env.vcs) == ("/home/u/notes", None)
    assert env.unknown[NS] == {"derived": "env", "line": 3}
    following = entries[entries.index(env) + 1]
    assert following.unknown[NS]["line"] == 3
