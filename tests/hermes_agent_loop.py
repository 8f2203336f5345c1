"""Run Hermes' own agent loop against a scripted model; write a fixture-shaped directory.

The other generators write rows through ``SessionDB``'s methods; here the rows come from
Hermes' real ``AIAgent`` doing its work: streaming replies, running the ``terminal`` tool,
compressing its context (in place, or into a continuation session, with a summary from the
auxiliary client), delegating to sub-agents, resuming a session, turns run as the gateway runs
them (a new agent on the transcript loaded again each turn), a gateway user's identity, an
image, a tool it does not have, arguments cut short, an empty reply, a server error, a tool
interrupted as it runs, and the same through the Responses API (``codex_responses``: reasoning
and message items kept in their own columns). The model is a small OpenAI-compatible HTTP
server in this process (chat completions and Responses, streamed) whose replies are fixed by
the last user message. Run under an interpreter with ``hermes-agent`` and its dependencies::

    python tests/hermes_agent_loop.py --generator shared/hermes/make_fixtures.py \
        --out DIR/hermes-agentloop-inplace [--split]

Then Hermes' own readers record the oracle (``expected-conversation`` ...) and
``manifest.json`` says what the run did (compacted rows, continuations, sub-agents), so a
test can tell that the loop took the paths it meant to, and each session's intent as the
fixture generator words it, so the fixture tests read the directory as one of theirs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hermes_scenarios import load_generator

#: Reported as the prompt's size on a reply with tool calls to a message saying ``BIG``:
#: past half the model's window, so Hermes compresses before its next call.
_BIG_PROMPT = 125_000
_WINDOW = 128_000


class Script:
    """The model's replies: chosen by the request's last message, numbered in order."""

    def __init__(self) -> None:
        self._count = itertools.count(1)
        self._once: set[str] = set()
        self._lock = threading.Lock()

    def reply(self, last: dict[str, Any], tools: set[str]) -> dict[str, Any]:
        """``content``, ``reasoning``, ``calls`` [(name, arguments text)], ``error`` or
        ``big`` for a request whose last message is ``last`` (``role`` and ``content``),
        offering ``tools``."""
        with self._lock:
            n = next(self._count)
            if not tools and "summar" in json.dumps(last).lower():
                return {"content": f"Summary {n}: files were listed and tools were run."}
            if last.get("role") != "user":
                return {"content": f"Done {n}: {str(last.get('content'))[:40]}"}
            text = _text(last.get("content"))
            first = text not in self._once
            self._once.add(text)
            return self._to_user(n, text, tools, first)

    @staticmethod
    def _to_user(n: int, text: str, tools: set[str], first: bool) -> dict[str, Any]:
        def call(name: str, args: dict[str, Any]) -> tuple[str, str]:
            return (name, json.dumps(args))

        if "ERR500" in text and first:
            return {"error": 500}
        if "EMPTY" in text and first:
            return {"content": ""}
        if "BADJSON" in text:
            return {"calls": [("terminal", '{"command": "echo cut')], "reasoning": "cut"}
        if "NOTOOL" in text:
            return {"calls": [call("no_such_tool", {"x": 1})]}
        if "BATCH" in text and "delegate_task" in tools:
            tasks = [{"goal": "Count to three", "context": "a"}, {"goal": "Count to four"}]
            return {"calls": [call("delegate_task", {"tasks": tasks})]}
        if "delegate" in text and "delegate_task" in tools:
            goal = {"goal": "Count to three with terminal echo", "context": "be brief"}
            return {"calls": [call("delegate_task", goal)], "reasoning": "I will delegate."}
        if "SLOW" in text:
            return {"calls": [call("terminal", {"command": "sleep 5; echo late"})]}
        if "tool" in text or "Count" in text:
            calls = [call("terminal", {"command": f"echo call-{n}"})]
            if "two" in text:
                calls.append(call("terminal", {"command": f"echo second-{n}"}))
            return {"calls": calls, "reasoning": f"thinking {n}", "big": "BIG" in text}
        # A long answer to "more": real text to summarise (a release that weighs the summary
        # against what it replaces refuses to compress a chat of a few short lines).
        padding = " and more detail" * 120 if "more" in text else ""
        answer = f"Answer {n} to: {text[:40]}{padding}"
        return {"content": answer, "reasoning": f"plain thought {n}"}


def _chat_request(body: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """A chat completions request's last message and tool names."""
    messages = body.get("messages") or [{}]
    return messages[-1], {t["function"]["name"] for t in body.get("tools") or []}


def _responses_request(body: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """A Responses request's last input item as a message, and its tool names."""
    items = body.get("input") or [{}]
    last = items[-1] if isinstance(items, list) else {"role": "user", "content": items}
    if last.get("type") == "function_call_output":
        last = {"role": "tool", "content": last.get("output")}
    return last, {t.get("name", "") for t in body.get("tools") or []}


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, obj: Any, code: int = 200) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # the model's window, asked for at start
            models = [{"id": "test-model", "object": "model", "context_length": _WINDOW}]
            self._json({"object": "list", "data": models})

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(size) or b"{}")
            responses = self.path.endswith("/responses")
            if not responses and not self.path.endswith("/chat/completions"):
                self._json({})
                return
            plan = script.reply(*(_responses_request if responses else _chat_request)(body))
            if plan.get("error"):
                self._json({"error": {"message": "scripted failure", "type": "server_error"}}, 500)
                return
            if responses:
                self._responses(plan, 100 + size // 4)
                return
            stamp = time.time_ns()
            calls = [
                {
                    "id": f"call_{stamp}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
                for i, (name, args) in enumerate(plan.get("calls", []))
            ]
            prompt = _BIG_PROMPT if plan.get("big") else 100 + size // 4
            usage = {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}
            finish = "tool_calls" if calls else "stop"
            if body.get("stream"):
                self._stream(body, plan, calls, usage, finish, f"chatcmpl-{stamp}")
                return
            message: dict[str, Any] = {"role": "assistant", "content": plan.get("content")}
            if plan.get("reasoning"):
                message["reasoning_content"] = plan["reasoning"]
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json(
                {
                    "id": f"chatcmpl-{stamp}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [choice],
                    "usage": usage,
                }
            )

        def _stream(
            self,
            body: dict[str, Any],
            plan: dict[str, Any],
            calls: list[dict[str, Any]],
            usage: dict[str, int],
            finish: str,
            ident: str,
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()

            def chunk(choices: list[dict[str, Any]], **extra: Any) -> None:
                event = {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": choices,
                    **extra,
                }
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")

            def delta(d: dict[str, Any], reason: str | None = None) -> None:
                chunk([{"index": 0, "delta": d, "finish_reason": reason}])

            delta({"role": "assistant"})
            if plan.get("reasoning"):
                delta({"reasoning_content": plan["reasoning"]})
            text = plan.get("content") or ""
            for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                if piece:
                    delta({"content": piece})
            for i, c in enumerate(calls):
                delta({"tool_calls": [{"index": i, **c}]})
            delta({}, finish)
            chunk([], usage=usage)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _responses(self, plan: dict[str, Any], prompt: int) -> None:
            """The Responses API's event stream: each output item whole, then the end."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            ident = f"resp_{time.time_ns()}"
            items: list[dict[str, Any]] = []
            if plan.get("reasoning"):
                summary = [{"type": "summary_text", "text": plan["reasoning"]}]
                items.append(
                    {
                        "type": "reasoning",
                        "id": f"rs_{ident}",
                        "summary": summary,
                        "encrypted_content": f"opaque-{ident}",
                    }
                )
            if plan.get("content"):
                part = {"type": "output_text", "text": plan["content"], "annotations": []}
                items.append(
                    {
                        "type": "message",
                        "id": f"msg_{ident}",
                        "role": "assistant",
                        "status": "completed",
                        "content": [part],
                    }
                )
            for i, (name, args) in enumerate(plan.get("calls", [])):
                items.append(
                    {
                        "type": "function_call",
                        "id": f"fc_{ident}_{i}",
                        "call_id": f"call_{ident}_{i}",
                        "name": name,
                        "arguments": args,
                        "status": "completed",
                    }
                )

            def event(kind: str, **members: Any) -> None:
                data = json.dumps({"type": kind, **members}).encode()
                self.wfile.write(b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n")

            event("response.created", response={"id": ident, "status": "in_progress"})
            for index, item in enumerate(items):
                if item["type"] == "message":
                    event("response.output_text.delta", output_index=index, delta=plan["content"])
                event("response.output_item.done", output_index=index, item=item)
            tokens = _BIG_PROMPT if plan.get("big") else prompt
            usage = {"input_tokens": tokens, "output_tokens": 20, "total_tokens": tokens + 20}
            event(
                "response.completed", response={"id": ident, "status": "completed", "usage": usage}
            )
            self.wfile.flush()

    return Handler


def _conversations(make: Any, db: Any) -> None:
    """The runs, one agent a conversation (the resumed one: a second agent)."""

    def run(turns: list[Any], agent: Any = None, history: Any = None, **kw: Any) -> Any:
        agent = agent or make(**kw)
        for turn in turns:
            history = agent.run_conversation(turn, conversation_history=history).get("messages")
        return agent

    tool = "run a tool"
    run(["hello there", "please run a tool for files", "thanks"])
    run(["run two tools please", "and one more tool"])
    chat = ["start a long chat", "tell me more", tool, "and more", "what else"]
    run([*chat, "run a tool BIG", "after compression hello", "one more tool please"])
    run([*chat, "run a tool BIG", "after it a tool BIG again", "last words"])
    delegation = {"enabled_toolsets": ["terminal", "delegation"]}
    run(["please delegate this", "thanks"], **delegation)
    run(["BATCH delegate please", "thanks"], **delegation)
    gateway = {
        "platform": "telegram",
        "user_id": "u-42",
        "chat_id": "c-99",
        "user_name": "Ann",
        "chat_name": "Group",
    }
    run(["hi from telegram", tool], **gateway)
    picture = [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]
    run([picture, "thanks"])
    first = run(["first visit", tool])
    stored = db.get_messages_as_conversation(first.session_id)
    run(["back again", tool], agent=make(session_id=first.session_id), history=stored)
    # As the gateway runs a chat: each turn a new agent on the transcript loaded again (from
    # 0.17 its messages carry their stored times, which the agent writes back when it carries
    # them into a continuation), so a compression carries rows stamped before its summary.
    sid = None
    for turn in ["gateway style start", tool, "and more", "run a tool BIG", "after it", tool]:
        history = db.get_messages_as_conversation(sid) if sid else None
        agent = make(session_id=sid) if sid else make()
        agent.run_conversation(turn, conversation_history=history)
        sid = agent.session_id
    for odd in ("BADJSON tool please", "NOTOOL please", "EMPTY answer please", "ERR500 then fine"):
        run([odd, "thanks"])
    # Interrupted while its tool runs (the user pressed Ctrl-C), then asked again.
    slow = make()
    threading.Timer(1.5, slow.interrupt, ("stop that",)).start()
    run(["a SLOW tool please", "are you there?"], agent=slow)
    # The Responses API (Hermes' ``codex_responses`` mode): reasoning and message items kept
    # in their own columns, calls by ``call_id``, compression too.
    codex = {"api_mode": "codex_responses"}
    run(["hello codex", "run two tools please", "thanks"], **codex)
    run([*chat, "run a tool BIG", "after compression a tool", "bye"], **codex)


def _facts(path: Path) -> dict[str, Any]:
    """What the run left in the database, for the test to check it took its paths (a count
    over a column the release does not have is None)."""
    with sqlite3.connect(str(path)) as conn:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}

        def one(sql: str, *needs: str) -> Any:
            return conn.execute(sql).fetchone()[0] if set(needs) <= columns else None

        return {
            "sessions": one("SELECT count(*) FROM sessions"),
            "compacted_rows": one("SELECT count(*) FROM messages WHERE compacted = 1", "compacted"),
            "compression_ends": one(
                "SELECT count(*) FROM sessions WHERE end_reason = 'compression'"
            ),
            "subagents": one(
                "SELECT count(*) FROM sessions WHERE source = 'subagent'"
                " AND parent_session_id IS NOT NULL"
            ),
            "gateway": one("SELECT count(*) FROM sessions WHERE source = 'telegram'"),
            "tool_rows": one("SELECT count(*) FROM messages WHERE role = 'tool'"),
            "interrupted": one(
                "SELECT count(*) FROM messages WHERE role = 'tool' AND content LIKE '%interrupted%'"
            ),
            "codex_rows": one(
                "SELECT count(*) FROM messages WHERE codex_message_items"
                " IS NOT NULL AND codex_reasoning_items IS NOT NULL",
                "codex_message_items",
                "codex_reasoning_items",
            ),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generator", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument(
        "--split", action="store_true", help="compress into continuation sessions, not in place"
    )
    args = parser.parse_args()
    mf = load_generator(args.generator.resolve())
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    home = Path(tempfile.mkdtemp(prefix="hermes-agent-loop-"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Script()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["HERMES_HOME"] = str(home)
    (home / "config.yaml").write_text(
        "auxiliary:\n  compression:\n"
        f"    base_url: {url}\n    api_key: sk-scripted\n    model: test-model\n"
        f"compression:\n  in_place: {'false' if args.split else 'true'}\n",
        encoding="utf-8",
    )
    import hermes_state
    from run_agent import AIAgent

    path = home / "state.db"
    db = hermes_state.SessionDB(db_path=path)

    def make(**kw: Any) -> Any:
        kw.setdefault("enabled_toolsets", ["terminal"])
        return AIAgent(
            base_url=url,
            api_key="sk-scripted",
            model="test-model",
            session_db=db,
            quiet_mode=True,
            skip_context_files=True,
            tool_delay=0,
            **kw,
        )

    try:
        _conversations(make, db)
    finally:
        db.close()
        server.shutdown()
    with sqlite3.connect(str(path)) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY started_at, id")]
    mf.record_oracle(hermes_state.SessionDB, path, out, ids)
    mf.finish_db(path, out / "state.db")
    facts = _facts(out / "state.db")
    with sqlite3.connect(str(out / "state.db")) as conn:
        stamped = [r[0] for r in conn.execute("SELECT version FROM schema_version")]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    manifest = {
        "generator": "tests/hermes_agent_loop.py",
        "split": args.split,
        "facts": facts,
        "schema_version_rows": stamped,
        "journal_mode": journal,
        "sessions": _intents(out / "state.db"),
    }
    mf.jdump(out / "manifest.json", manifest)


def _intents(path: Path) -> dict[str, str]:
    """Each session's intent in the fixture generator's words (what the reader's relation
    tests expect): the runs make a child session only by compressing (its parent ended so)
    or by delegating (before 0.18 the child keeps its parent's ``source``); every other
    session is a conversation of its own."""
    intents = {}
    with sqlite3.connect(str(path)) as conn:
        rows = conn.execute(
            "SELECT s.id, s.source, s.parent_session_id, p.end_reason FROM sessions s"
            " LEFT JOIN sessions p ON p.id = s.parent_session_id"
        )
        for sid, source, parent, parent_end in rows:
            if parent is None:
                intents[sid] = "root conversation of the agent loop"
            elif parent_end == "compression":
                intents[sid] = "compression continuation written by the agent loop"
            elif source == "subagent":
                intents[sid] = "delegate sub-agent run by the agent loop"
            else:
                intents[sid] = (
                    "delegate sub-agent, unmarked: the agent loop's, with its parent's source"
                )
    return intents


if __name__ == "__main__":
    main()
