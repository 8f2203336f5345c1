"""``asf verify``: check session files against the format (no plugins involved).

Exits 1 only for errors, because warnings flag style (a missing ``request_hash``) rather than
data a reader would get wrong.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

import attrs

from asf_core.cli.jobs import add_jobs_option
from asf_core.cli.output import ExitCode, Fail, out, out_json
from asf_core.cli.path_args import STDIN, path_text, read_stdin
from asf_core.cli.render import short
from asf_core.reader import FormatError, parse_session
from asf_core.verify.session import Finding, check_path, verify_session

__all__ = ["add_parser", "run_verify"]


#: How findings name stdin.
STDIN_NAME = "stdin"


def _stdin() -> list[Finding]:
    """The findings of the ASF lines on stdin (no file beside them: sub-agent sessions and
    sidecar blobs are not looked for)."""
    try:
        session = parse_session(read_stdin())
    except FormatError as exc:
        found = [Finding(code="unreadable", message=f"not an ASF session file: {exc}")]
    else:
        found = verify_session(session)
    return [attrs.evolve(f, path=STDIN_NAME) for f in found]


def run_verify(args: argparse.Namespace) -> ExitCode:
    """The ``asf verify`` command."""
    path = Path(args.path)  # as given: "./-" names a file called "-"
    if args.path == STDIN:
        files, findings = 1, _stdin()
    else:
        if not path.exists():
            raise Fail(f"{path}: no such file or directory")
        checked = check_path(path, jobs=args.jobs)
        files, findings = checked.files, checked.findings
    if not files:
        root = [f.message for f in findings if f.code == "unsearchable" and f.path == str(path)]
        if root:
            raise Fail(f"{path}: {root[0]}")
        raise Fail(f"{path}: no *.jsonl session files under it", ExitCode.NOTHING)
    severities = Counter(f.severity for f in findings)
    is_dir = args.path != STDIN and path.is_dir()
    name = STDIN_NAME if args.path == STDIN else str(path)
    if args.json:
        out_json(_document(str(path), files, findings, []))
    else:
        for f in findings:
            where = f"{f.path or name}:{f.line}" if f.line else (f.path or name)
            entry = f" (entry {short(f.entry)})" if f.entry else ""
            out(f"{where}: {f.severity}: {f.code}: {f.message}{entry}")
        verdict = "ok" if severities["error"] == 0 else "FAILED"
        counts = ", ".join(
            f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(severities.items())
        )
        counted = [] if not is_dir else [f"{files} file{'s' if files != 1 else ''}"]
        detail = "; ".join([*counted, *([counts] if counts else [])])
        out(f"{name}: {verdict}" + (f" ({detail})" if detail else ""))
    if not is_dir and any(f.code == "unreadable" for f in findings):
        return ExitCode.USAGE
    return ExitCode.PROBLEMS if severities["error"] else ExitCode.OK


def _document(path: str, files: int, findings: list[Finding], errors: list[str]) -> dict[str, Any]:
    """The ``--json`` document: ok when no error stopped the run and none was found."""
    severities = Counter(f.severity for f in findings)
    return {
        "path": path,
        "files": files,
        "ok": not errors and severities["error"] == 0,
        "counts": dict(sorted(severities.items())),
        "findings": [
            {
                "path": f.path,
                "line": f.line,
                "severity": f.severity,
                "code": f.code,
                "entry": f.entry,
                "message": f.message,
            }
            for f in findings
        ],
        "errors": errors,
    }


def failed(args: argparse.Namespace, message: str) -> dict[str, Any]:
    """The ``--json`` document of a run that stopped before verifying (a missing path, a
    directory without session files): nothing verified, not ok, and why."""
    return _document(args.path, 0, [], [message])


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = sub.add_parser(
        "verify",
        help="check session files against the format",
        description="Verify one session file or every *.jsonl file under a directory. Exit 1 "
        "when any error is found; warnings alone exit 0.",
    )
    verify.add_argument(
        "path", type=path_text, metavar="FILE|DIR|-", help="'-': one ASF session read from stdin"
    )
    verify.add_argument("--json", action="store_true", help="machine-readable output")
    add_jobs_option(verify, "verify a directory's files")
    verify.set_defaults(run=run_verify, plugins=False, failed=failed)
