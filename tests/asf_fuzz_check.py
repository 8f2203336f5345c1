"""Mutation fuzzing of ASF session files, the check: findings out, never a crash or a hang.

:func:`check` runs a file through everything a user can point at one (``asf verify``,
``asf show``, with and without ``--json``, in this process with stdout and stderr as strict
UTF-8, and the library's ``read``, ``verify_path``, ``context_at`` and requests) and returns
what went wrong: an exception, an exit code docs/cli.md does not give, a control character on
the terminal, output that is not JSON, a verifier that gave up, request checks that differ from
rebuilding each request on its own, or a case slower than its bound. The mutants come from
:mod:`asf_fuzz`.
"""

from __future__ import annotations

import io
import json
import re
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from asf_core.api import read
from asf_core.canonical import JsonError
from asf_core.cli.main import main
from asf_core.context import ContextError, context_at
from asf_core.model import Response
from asf_core.reader import FormatError, SessionFile
from asf_core.request import request_body, request_context, request_hash
from asf_core.verify.requests import request_findings
from asf_core.verify.session import verify_path

__all__ = [
    "CASE_SECONDS",
    "RAW_CONTROL",
    "Hang",
    "check",
    "compare_request_checks",
    "run_cli",
    "time_bound",
]

#: Seconds one case may take (all its runs together) before it counts as a hang.
CASE_SECONDS = 10.0


#: What no byte of human output may be (escaped by asf), the newline ending a line excepted.
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


class Hang(BaseException):
    """A case ran past its time bound (raised by SIGALRM; no ``except Exception`` takes it)."""


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise Hang(f"no result after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``asf ARGV`` in this process; stdout and stderr as strict UTF-8, as a terminal takes."""
    saved = sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")
    sys.stdout, sys.stderr = out, err
    try:
        code = main(list(argv))
    finally:
        sys.stdout, sys.stderr = saved
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
    return code, texts[0], texts[1]


def _library(data: bytes, path: Path, *, thorough: bool) -> list[str]:
    problems: list[str] = []
    try:
        session = read(data)
    except FormatError:
        session = None
    if session is not None:
        leaves = session.leaves()
        resume = session.resume_leaf()
        for leaf in [*leaves[:20], *([resume] if resume else [])]:
            with suppress(ContextError):
                context_at(session, leaf)
        responses = [e for e in session.entries if isinstance(e, Response)][:20]
        for response in responses:
            with suppress(ContextError):
                ctx = request_context(session, str(response.id))
                request_body(ctx)
                with suppress(JsonError):  # documented: a value that is not I-JSON
                    request_hash(ctx)
        if thorough and len(session.entries) <= 300:
            problems.extend(compare_request_checks(session))
    for finding in verify_path(path):
        if finding.code == "verify-failed" or "cannot read as ASF" in finding.message:
            problems.append(f"verify_path gave up: {finding.message}")
    return problems


def _plain_request_checks(session: SessionFile) -> list[tuple[str, str | None, str]]:
    """What the verifier's request rule must find, each request rebuilt on its own."""
    out = []
    for entry in session.entries:
        if not isinstance(entry, Response) or not isinstance(entry.request_hash, str):
            continue
        if session.path_to(str(entry.id))[0].parent is not None:
            continue  # cut off from the root: no request to rebuild
        try:
            got = request_hash(request_context(session, str(entry.id)))
        except (ContextError, JsonError):
            got = None
        if got is None:
            out.append(("request-unbuildable", entry.id, ""))
        elif got != entry.request_hash:
            out.append(("request-hash", entry.id, got))
    return sorted(out, key=str)


def compare_request_checks(session: SessionFile) -> list[str]:
    """The one-walk request check against rebuilding each request on its own."""
    fast = sorted(
        (
            (f.code, f.entry, f.message.split()[-1] if f.code == "request-hash" else "")
            for f in request_findings(session)
        ),
        key=str,
    )
    plain = _plain_request_checks(session)
    return [] if fast == plain else [f"request checks differ: {fast[:3]} != {plain[:3]}"]


def _cli(path: Path, *, thorough: bool) -> list[str]:
    problems: list[str] = []
    runs = [(("verify", str(path)), {0, 1, 2}), (("show", str(path)), {0, 2})]
    if thorough:
        runs += [
            (("verify", "--json", str(path)), {0, 1, 2}),
            (("show", "--json", str(path)), {0, 2}),
        ]
    for argv, codes in runs:
        code, out, err = run_cli(*argv)
        shown = " ".join(argv[:-1])
        if code not in codes:
            problems.append(f"asf {shown}: exit {code}")
        for name, text in (("stdout", out), ("stderr", err)):
            bad = RAW_CONTROL.search(text)
            if bad:
                problems.append(f"asf {shown}: raw {bad.group()!r} on {name}")
        if "--json" in argv and (code == 0 or argv[0] == "verify"):
            try:
                doc = json.loads(out)
            except ValueError as exc:
                problems.append(f"asf {shown}: stdout is not JSON: {exc}")
                continue
            if argv[0] == "verify" and doc["ok"] != (code == 0):
                problems.append(f"asf {shown}: ok={doc['ok']} with exit {code}")
        if argv[0] == "verify" and "--json" not in argv:
            unreadable = ": error: unreadable: " in out
            if unreadable != (code == 2):
                problems.append(f"asf verify: exit {code}, unreadable={unreadable}")
    return problems


def check(
    data: bytes, workdir: Path, *, seconds: float = CASE_SECONDS, thorough: bool = True
) -> list[str]:
    """Everything wrong with how asf treats the file ``data`` (empty when all is well).

    Without ``thorough``: no ``--json`` runs and no comparison of the request checks with
    plain rebuilds (for sweeps of many similar cases).
    """
    path = workdir / "case.jsonl"
    path.write_bytes(data)
    started = time.monotonic()
    try:
        with time_bound(seconds * 3):
            problems = _library(data, path, thorough=thorough) + _cli(path, thorough=thorough)
    except Hang as exc:
        return [f"hang: {exc}"]
    except Exception as exc:
        return [f"raised {type(exc).__name__}: {str(exc)[:300]}"]
    took = time.monotonic() - started
    if took > seconds:
        problems.append(f"slow: {took:.1f} s")
    return problems
