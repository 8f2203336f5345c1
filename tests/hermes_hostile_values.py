"""Hostile values and folder shapes for the SQL damage fuzzer (``tests/hermes_sql_fuzz.py``):
values of every SQLite type, JSON edge cases, and folders a home may sit beside."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEEP",
    "FOLDER_SHAPES",
    "JSON_COLUMNS",
    "JSON_TEXTS",
    "PLAIN",
    "TABLES",
    "build_folders",
    "remove_tree",
]

#: Tables whose rows the reader reads, and how often a mutation picks each.
TABLES = {
    "sessions": 30,
    "messages": 45,
    "session_model_usage": 6,
    "async_delegations": 6,
    "system_prompts": 6,
    "schema_version": 2,
}
#: Columns holding JSON, which get JSON edge cases more often.
JSON_COLUMNS = frozenset(
    {
        "tool_calls",
        "reasoning_details",
        "codex_reasoning_items",
        "codex_message_items",
        "model_config",
        "display_metadata",
        "tool_call_uids",
        "absorbed_message_uids",
        "origin_json",
        "event_json",
        "result_json",
        "task_json",
    }
)
DEEP = 1200

#: Hostile JSON texts: numbers no double holds, nesting past the recursion limit, lone
#: surrogates, duplicate and (once normalised) colliding keys, wrong shapes, broken text.
JSON_TEXTS: tuple[str, ...] = (
    "1e400",
    "[1e400]",
    '{"a": -1e999}',
    "[" + "1" * 400 + "]",
    "1" * 5000,
    "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP,
    "[" * 300 + "]" * 300,
    '"\\ud800"',
    '["\\udfff", {"\\ud800": 1}]',
    '{"\\ud800": 1, "\\ufffd": 2}',
    '{"a": 1, "a": 2}',
    "[]",
    "{}",
    '"text"',
    "null",
    "true",
    "0",
    "[1, 2",
    "NaN",
    "[Infinity]",
    "-0.0",
    '[{"id": null, "function": "x"}]',
    '[{"id": "c", "type": "function", "function": {"name": 1e400, "arguments": {"a": 1e400}}}]',
    '[{"id": "c", "function": {"name": "t", "arguments": ' + "[" * DEEP + "]" * DEEP + "}}]",
    '[{"call_id": "", "id": "", "function": {"name": "", "arguments": null}}]',
    '[["not", "an", "object"], 7, null]',
    '{"id": "single", "function": {"name": "t", "arguments": "{}"}}',
    '[{"type": "reasoning", "summary": 1e400}]',
    '[{"type": "text", "text": "\\u0000\\u001b[31m"}]',
)
#: Hostile values of every SQLite type (bytes marked ``text`` are stored as TEXT, which is
#: then not valid UTF-8).
PLAIN: tuple[Any, ...] = (
    None,
    0,
    -1,
    1,
    2**63 - 1,
    -(2**63),
    2**53 + 1,
    1.5,
    -0.0,
    float("inf"),
    float("-inf"),
    float("nan"),
    1e308,
    "",
    " ",
    "x",
    "\x00",
    "\x1b]0;title\x07\x1b[31mred",
    "\u202eevil",
    "line\nbreak\r\n",
    "\ufeff",
    "\U0001f600" * 3,
    "x" * 100_000,
    "0",
    "1.5",
    "compression",
    "subagent",
    "tool",
    "assistant",
    "tool",
    "user",
    "session_meta",
    "hidden",
    b"",
    b"\x00\xff",
    b"{}",
    ("text", b"\xff\xfe"),
    ("text", b"abc\xc3"),
    ("text", b"\xed\xa0\x80"),
)


#: Shapes of the folders beside a home under a searched path.
FOLDER_SHAPES = (
    "deep",
    "control names",
    "bad bytes",
    "link loop",
    "fifo state.db",
    "directory state.db",
    "empty state.db",
    "closed directory",
)


def build_folders(root: Path, shapes: Sequence[str]) -> None:
    """Build hostile folders under ``root`` (beside the home), without recursion."""
    for shape in shapes:
        place = root / shape.replace(" ", "-")
        place.mkdir()
        if shape == "deep":
            for _ in range(1000):
                place = place / "d"
                place.mkdir()
            (place / "state.db").write_bytes(b"SQLite format 3\x00")
        elif shape == "control names":
            for name in ("\x1b[31mred", "a\nb", "\u202eevil", " "):
                (place / name).mkdir()
                (place / name / "state.db").write_bytes(b"")
        elif shape == "bad bytes":
            (place / os.fsdecode(b"\xff\xfe")).mkdir()  # a name that is not UTF-8
        elif shape == "link loop":
            (place / "loop").symlink_to(place)
            (place / "state.db").symlink_to(place / "state.db")
        elif shape == "fifo state.db":
            os.mkfifo(place / "state.db")
        elif shape == "directory state.db":
            (place / "state.db").mkdir()
        elif shape == "empty state.db":
            (place / "state.db").write_bytes(b"")
        elif shape == "closed directory":
            (place / "inner").mkdir()
            (place / "inner" / "state.db").write_bytes(b"")
            (place / "inner").chmod(0)


def remove_tree(root: Path) -> None:
    """Remove a tree of any depth (``shutil.rmtree`` recurses), links not followed."""
    stack, directories = [root], []
    while stack:
        directory = stack.pop()
        directories.append(directory)
        directory.chmod(0o700)
        for entry in os.scandir(directory):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                Path(entry.path).unlink()
    for directory in reversed(directories):
        directory.rmdir()
