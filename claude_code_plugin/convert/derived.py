"""Entries no single line is: a response's ``response`` entry, the settings and environment
in force, links to child sessions.

Each carries the member ``claude-code`` with ``derived`` (what it was derived from) and the
line number(s) it was derived from, so a reader rebuilding lines knows to skip it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from asf_core.model import Config, Env, Link, Response
from claude_code_plugin import NS
from claude_code_plugin.source.index import text_of

__all__ = [
    "SYNTHETIC_MODEL",
    "api_error",
    "config_entry",
    "env_entry",
    "link_entry",
    "message_id",
    "response_entry",
    "usage",
]

JSON = dict[str, Any]

#: The model name Claude Code gives messages it made up itself (API errors, interruptions).
SYNTHETIC_MODEL: Final = "<synthetic>"

#: Anthropic ``stop_reason`` -> Open Responses ``status`` and ``incomplete``.
_STOPS: Final[dict[str, tuple[str, JSON | None]]] = {
    "end_turn": ("completed", None),
    "tool_use": ("completed", None),
    "stop_sequence": ("completed", None),
    "pause_turn": ("incomplete", {"reason": "pause_turn"}),
    "max_tokens": ("incomplete", {"reason": "max_output_tokens"}),
    "model_context_window_exceeded": ("incomplete", {"reason": "max_output_tokens"}),
    "refusal": ("incomplete", {"reason": "content_filter"}),
}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage(native: Any) -> JSON | None:
    """Anthropic usage in the Open Responses shape.

    Anthropic counts uncached, cache-written and cache-read input apart; Open Responses'
    ``input_tokens`` is all of them, with the cache reads as ``cached_tokens``. The thinking
    tokens a line counts (``output_tokens_details.thinking_tokens``) are the reasoning tokens.
    """
    if not isinstance(native, dict):
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    if not any(isinstance(native.get(k), int) for k in (*keys, "output_tokens")):
        return None
    total_in = sum(_count(native.get(k)) for k in keys)
    out = _count(native.get("output_tokens"))
    mapped: JSON = {
        "input_tokens": total_in,
        "input_tokens_details": {"cached_tokens": _count(native.get("cache_read_input_tokens"))},
        "output_tokens": out,
        "total_tokens": total_in + out,
    }
    # Newer CLIs (2.1.150 on) say how many of the output tokens were thinking.
    details = native.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
    if isinstance(thinking, int) and not isinstance(thinking, bool):
        mapped["output_tokens_details"] = {"reasoning_tokens": thinking}
    return mapped


def api_error(line: JSON) -> JSON | None:
    """The Open Responses ``error`` of a call that failed, from the line Claude Code wrote in
    its stead (``isApiErrorMessage``: a ``<synthetic>`` assistant text such as "API Error: …"
    with ``error``, ``apiErrorStatus``, ``errorDetails`` beside it); None for any other line.

    Without it the failed call would read as a completed answer, and a run ending there as
    done rather than failed (the ASF run reason reads ``error``).
    """
    if line.get("isApiErrorMessage") is not True:
        return None
    kind, status, details = line.get("error"), line.get("apiErrorStatus"), line.get("errorDetails")
    message = line.get("message")
    text = text_of(message.get("content")) if isinstance(message, dict) else None
    return {
        "type": kind if isinstance(kind, str) else "api_error",
        "code": str(status) if isinstance(status, int) and not isinstance(status, bool) else None,
        "message": details if isinstance(details, str) else text or "",
        "param": None,
    }


def message_id(line: JSON) -> str | None:
    """An assistant line's ``message.id``: the ASF ``response_id`` of its response."""
    message = line.get("message")
    ident = message.get("id") if isinstance(message, dict) else None
    return ident if isinstance(ident, str) else None


def response_entry(ts: str, last: JSON, numbers: Sequence[int]) -> Response:
    """The response a group of assistant lines make, from its last line (which holds the
    final ``output_tokens`` and ``stop_reason``)."""
    message = last.get("message")
    message = message if isinstance(message, dict) else {}
    model = message.get("model")
    status, incomplete = _STOPS.get(str(message.get("stop_reason")), (None, None))
    error = api_error(last)
    return Response(
        ts=ts,
        response_id=message_id(last),
        model=model if isinstance(model, str) else None,
        status="failed" if error is not None else status,
        error=error,
        incomplete=incomplete,
        usage=usage(message.get("usage")),
        unknown={NS: {"derived": "response", "lines": list(numbers)}},
    )


def config_entry(ts: str, model: str, number: int) -> Config:
    """The model in force changes (a response of another model follows)."""
    return Config(ts=ts, model=model, unknown={NS: {"derived": "model", "line": number}})


def env_entry(ts: str, cwd: str | None, branch: str | None, number: int) -> Env:
    """The working directory or git branch changes from this line on."""
    vcs = {"system": "git", "branch": branch} if branch else None
    return Env(ts=ts, cwd=cwd, vcs=vcs, unknown={NS: {"derived": "env", "line": number}})


def link_entry(ts: str, session: str, call_id: str | None, agent: str) -> Link:
    """A child session: a sub-agent (``call_id`` its Task call) or the compaction helper."""
    return Link(
        ts=ts,
        rel="subsession",
        session=session,
        call_id=call_id,
        unknown={NS: {"derived": "link", "agent": agent}},
    )
