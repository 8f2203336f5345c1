"""``asf show HOME --session ID --format markdown`` shows the conversation Hermes' own reader
returns for that session (``expected-conversation/``: ``get_messages_as_conversation``):
every message's text, in order, under its role's heading, every tool call with its name and
arguments, every tool output that answers a call (one that answers none is not context:
docs/formats/hermes.md §3.3)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import HOMES, copy_home, oracles
from fixture_paths import RELEASES, label
from hermes_reader_messages import as_message

from asf_core.cli.main import ExitCode, main
from asf_core.safe_text import printable
from hermes_plugin.convert.calls import CallBook
from hermes_plugin.convert.items import row_items

_HEADINGS = {"user": "### User", "assistant": "### Assistant", "system": "### System"}
#: A compaction's summary is a message Hermes returns in its role; the transcript shows it
#: as the compaction it is.
_COMPACTED = "**Context compacted**"
_MARKERS = re.compile(r"### User|### Assistant|### System|\*\*Context compacted\*\*")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [str(value)] if isinstance(value, str) else []


def _printable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _expectations(message: dict[str, Any]) -> list[tuple[str, str | None]]:
    """What the transcript must show of one oracle message, in order: (text, heading)."""
    role = message.get("role")
    want: list[tuple[str, str | None]] = []
    if role in _HEADINGS:
        want += [(t, _HEADINGS[str(role)]) for t in _texts(message.get("content")) if t.strip()]
    elif role == "tool":
        want += [(t, "Output:") for t in _texts(message.get("content")) if t.strip()]
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        want.append((f"**Tool call** `{function.get('name')}`", None))
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = function.get("arguments")
        want += [(leaf, None) for leaf in _leaves(arguments) if leaf.strip()]
    return [(t, h) for t, h in want if _printable(t)]


def _find(page: str, text: str, at: int, heading: str | None) -> int:
    """Where ``text`` is next shown from ``at``: under ``heading`` (its turn's, or a
    compaction's) when it is a role's heading; -1 if nowhere."""
    found = page.find(text, at)
    while found >= 0 and heading in _HEADINGS.values():
        under = [m.group() for m in _MARKERS.finditer(page, 0, found)]
        if under and under[-1] in (heading, _COMPACTED):
            break
        found = page.find(text, found + 1)
    return found


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    into = tmp_path_factory.mktemp("homes")
    return {home: copy_home(home, into) for home in HOMES}


@pytest.mark.parametrize("home", RELEASES, ids=[label(r) for r in RELEASES])
def test_markdown_transcript_shows_what_hermes_reads(
    home: Path, copies: dict[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    checked = 0
    for session, oracle in oracles(home):
        expected = json.loads(oracle.read_text(encoding="utf-8"))
        code = main(["show", str(copies[home]), "--session", session, "--format", "markdown"])
        shown = capsys.readouterr()
        assert code == ExitCode.OK, (session, shown.err)
        text = re.sub(r"(?m)^> ?", "", shown.out)  # quoted blocks (summaries) read as text
        text = re.sub(r" · \d{4}-\d\d-\d\dT\S+", "", text)  # times hold any digit...
        text = re.sub(r"(?m)^\*[^*\n].*\*$", "", text)  # ...and so do usage lines
        page = _flat(text)
        assert page.startswith("# "), session
        at = page.find("### ")  # past the heading facts (ids and hashes hold any digit)
        turn = at
        book = CallBook(keep_native=True)
        for message in expected:
            if message.get("observed"):
                # Group-chat text the bot saw but was not addressed with: not context, kept as
                # a custom entry (docs/formats/hermes.md, "observed"), so no transcript turn.
                continue
            if not row_items(as_message(message), book, lambda index: "").in_context:
                continue  # e.g. a result read before its call (0.17.0 reads rows by time)
            if message.get("role") in _HEADINGS:
                turn = at  # a turn's calls and outputs are shown together, each with its call
            for text, heading in _expectations(message):
                role_text = heading in _HEADINGS.values()
                # Shown as asf shows data to people: control characters escaped.
                shown_text = _flat(printable(text, layout=True))
                found = _find(page, shown_text, at if role_text else turn, heading)
                assert found >= 0, (session, message.get("role"), heading, text[:80])
                if heading == "Output:":
                    assert page.rfind("Output:", turn, found) >= 0, (session, text[:80])
                if role_text:
                    at = found
                checked += 1
    assert checked > 20
