"""The least work a Python converter of a Hermes ``state.db`` to hashed JSON lines can do:
a yardstick for issue 9's goal (CPU per row at most twice the floor's), not a converter.

Run: ``.venv/bin/python benchmarks/bench_least.py HOME/state.db [OUT.jsonl]``.

Per message row, session by session in id order: read the row, build two entry objects that
hold its cells (a message item and a call item, each with a ``hermes`` member), and for each
write what the writer writes: the body's bytes with sorted keys (orjson), its sha256, the
envelope's bytes and their sha256 (the id), the line's bytes. No mapping, no pairing, no
check that the bytes are RFC 8785's, nothing kept for a re-run: what remains when every layer
between the row and the line is gone. Its CPU per row, beside the floor's
(``bench_vs_hermes.py``), says how far the per-row layers of ``asf convert`` could shrink.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import orjson

_SORTED = orjson.OPT_SORT_KEYS
_COLUMNS = "id, role, content, tool_calls, tool_call_id, reasoning, timestamp, token_count"


def _entries(row: tuple[Any, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    rid, role, content, tool_calls, call_id, reasoning, timestamp, tokens = row
    unit = f"state.db:messages/{rid}"
    part = "output_text" if role == "assistant" else "input_text"
    message = {
        "item": {"type": "message", "role": role, "content": [{"type": part, "text": content}]},
        "hermes": {
            "row": unit,
            "part": "message",
            "columns": {"timestamp": timestamp, "token_count": tokens, "reasoning": reasoning},
        },
    }
    calls = json.loads(tool_calls) if tool_calls else []
    call = {
        "item": {"type": "function_call", "call_id": call_id or "", "arguments": calls},
        "hermes": {"row": unit, "part": "call"},
    }
    return message, call


def convert(db: Path, out: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    rows = 0
    with out.open("wb", buffering=256 * 1024) as sink:
        for (session,) in conn.execute("SELECT id FROM sessions ORDER BY id").fetchall():
            parent = None
            query = f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id"
            for row in conn.execute(query, (session,)):
                rows += 1
                for body in _entries(row):
                    content = (
                        "sha256:" + hashlib.sha256(orjson.dumps(body, option=_SORTED)).hexdigest()
                    )
                    envelope = {"content": content, "parent": parent, "ts": "", "type": "item"}
                    parent = (
                        "sha256:"
                        + hashlib.sha256(orjson.dumps(envelope, option=_SORTED)).hexdigest()
                    )
                    body.update(id=parent, parent=envelope["parent"], ts="", type="item")
                    sink.write(orjson.dumps(body, option=_SORTED) + b"\n")
    conn.close()
    return rows


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1])
        return 2
    out = Path(argv[1]) if len(argv) > 1 else Path("/dev/null")
    started = time.process_time()
    rows = convert(Path(argv[0]), out)
    cpu = time.process_time() - started
    print(f"{rows} rows: {cpu:.3f} s of CPU, {cpu / max(rows, 1) * 1e6:.1f} µs a row")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
