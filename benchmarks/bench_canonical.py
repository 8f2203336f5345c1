"""Speed of canonical JSON (RFC 8785) on realistic ASF entry bodies.

Run: ``.venv/bin/python benchmarks/bench_canonical.py [--quick]``.  Compares
:func:`asf_core.canonical.dumps` (C-encoder fast path with a pure-Python fallback) with its
own pure-Python path, the ``rfc8785`` package and a naive pure-Python JCS written straight
from the RFC, and prints entries/s and MB/s of canonical output for each corpus.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import rfc8785

from asf_core import canonical

# ----------------------------------------------------------------------------- corpus

_WORDS = [
    *("the", "agent", "reads", "file", "config", "yaml", "error", "stack", "trace"),
    *("retry", "tool", "call", "output", "token", "context", "window", "summary"),
    *("branch", "commit", "test", "failed", "passed", "ünïcödé", "数据", "✓", "résumé"),
]


def _prose(rng: random.Random, words: int) -> str:
    lines = []
    for _ in range(max(1, words // 12)):
        lines.append(" ".join(rng.choice(_WORDS) for _ in range(12)))
    return "\n".join(lines) + '\n"quoted" and \\ backslash\tend'


def _message(rng: random.Random) -> dict[str, Any]:
    role = rng.choice(["user", "assistant"])
    kind = "input_text" if role == "user" else "output_text"
    return {
        "item": {
            "type": "message",
            "role": role,
            "content": [{"type": kind, "text": _prose(rng, rng.randint(50, 900))}],
        }
    }


def _tool_call(rng: random.Random) -> dict[str, Any]:
    args = {"path": f"/home/u/proj/src/mod{rng.randint(1, 99)}.py", "limit": rng.randint(1, 500)}
    return {
        "item": {
            "type": "function_call",
            "call_id": f"call_{rng.randint(0, 10**9):09d}",
            "name": rng.choice(["read_file", "terminal", "search_files", "patch"]),
            "arguments": json.dumps(args),
        }
    }


def _tool_output(rng: random.Random) -> dict[str, Any]:
    listing = "\n".join(
        f"{rng.randint(0, 9999):5d}  src/file_{i}.py  {rng.choice(_WORDS)}"
        for i in range(rng.randint(5, 120))
    )
    return {
        "item": {
            "type": "function_call_output",
            "call_id": f"call_{rng.randint(0, 10**9):09d}",
            "output": json.dumps({"output": listing, "exit_code": 0, "error": None}),
        }
    }


def _config(rng: random.Random) -> dict[str, Any]:
    tools = [
        {
            "type": "function",
            "name": f"tool_{i}",
            "description": _prose(rng, 30),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path"},
                    "offset": {"type": "integer", "minimum": 0},
                    "mode": {"type": "string", "enum": ["r", "w", "a"]},
                },
                "required": ["path"],
            },
        }
        for i in range(rng.randint(3, 12))
    ]
    return {
        "model": "anthropic/claude-sonnet-4",
        "instructions": _prose(rng, 400),
        "tools_added": tools,
        "reasoning": {"effort": "medium", "summary": None},
        "extra": {"temperature": 0.7, "top_p": 0.95, "max_output_tokens": 8192},
    }


def _response(rng: random.Random) -> dict[str, Any]:
    return {
        "response_id": f"resp_{rng.randint(0, 10**6)}",
        "status": "completed",
        "model": "gpt-5",
        "usage": {
            "input_tokens": rng.randint(100, 200000),
            "output_tokens": rng.randint(1, 8000),
            "total_tokens": rng.randint(100, 208000),
        },
        "latency_ms": rng.randint(50, 90000),
        "cost_usd": round(rng.uniform(0.0001, 2.5), 6),
        "request_hash": f"sha256:{rng.getrandbits(256):064x}",
        "hermes:finish_reason": "stop",
    }


def _reasoning_floats(rng: random.Random) -> dict[str, Any]:
    """An entry with a few floats that Python's repr writes differently (1.0, 1e-07)."""
    body = _response(rng)
    body["outcome"] = {"kind": "eval", "pass": True, "score": 1.0, "epsilon": 1e-7}
    return body


def corpora() -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(20261130)
    makers: dict[str, Callable[[random.Random], dict[str, Any]]] = {
        "message (long text)": _message,
        "function_call": _tool_call,
        "function_call_output": _tool_output,
        "config (tools, floats)": _config,
        "response (usage, float)": _response,
        "eval (1.0, 1e-7: slow path)": _reasoning_floats,
    }
    out = {name: [make(rng) for _ in range(200)] for name, make in makers.items()}
    out["mixed session"] = [body for bodies in out.values() for body in bodies]
    rng.shuffle(out["mixed session"])
    return out


# ----------------------------------------------------------------------------- naive JCS


def _naive_string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def naive_jcs(value: Any) -> bytes:
    """A straightforward JCS as one would write it from the RFC: per-character escaping."""

    def enc(item: Any) -> str:
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, (int, float)):
            return canonical._float_text(float(item)) if isinstance(item, float) else str(item)
        if isinstance(item, str):
            return _naive_string(item)
        if isinstance(item, list):
            return "[" + ",".join(enc(v) for v in item) + "]"
        keys = sorted(item, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(_naive_string(k) + ":" + enc(item[k]) for k in keys) + "}"

    return enc(value).encode("utf-8")


# ----------------------------------------------------------------------------- timing


def _measure(fn: Callable[[Any], bytes], bodies: list[dict[str, Any]], budget: float) -> float:
    """Best-of-several seconds for one pass over ``bodies``."""
    best = float("inf")
    spent = 0.0
    runs = 0
    while runs < 3 or (spent < budget and runs < 50):
        start = time.perf_counter()
        for body in bodies:
            fn(body)
        took = time.perf_counter() - start
        best = min(best, took)
        spent += took
        runs += 1
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing budget")
    args = parser.parse_args(argv)
    budget = 0.1 if args.quick else 0.6
    encoders: dict[str, Callable[[Any], bytes]] = {
        "asf dumps": canonical.dumps,
        "asf pure-Python path": canonical._dumps_slow,
        "rfc8785.dumps": rfc8785.dumps,
        "naive pure-Python": naive_jcs,
    }
    print(f"python {sys.version.split()[0]}; best of runs; MB/s = canonical output bytes")
    header = f"{'corpus':30} {'encoder':22} {'entries/s':>11} {'MB/s':>8} {'vs rfc8785':>10}"
    print(header)
    print("-" * len(header))
    for name, bodies in corpora().items():
        expected = [rfc8785.dumps(body) for body in bodies]
        size = sum(len(b) for b in expected)
        for fn_name, fn in encoders.items():
            if [fn(body) for body in bodies] != expected:
                print(f"{name}: {fn_name} disagrees with rfc8785", file=sys.stderr)
                return 1
        reference = _measure(rfc8785.dumps, bodies, budget)
        for fn_name, fn in encoders.items():
            took = reference if fn is rfc8785.dumps else _measure(fn, bodies, budget)
            rate = len(bodies) / took
            print(
                f"{name:30} {fn_name:22} {rate:11,.0f} {size / took / 1e6:8.1f}"
                f" {reference / took:9.1f}x"
            )
        print(f"{'':30} ({len(bodies)} bodies, {size / len(bodies) / 1024:.1f} KiB average)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
