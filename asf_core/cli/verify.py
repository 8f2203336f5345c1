"""``asf verify``: check session files against the format (no plugins involved).

Exits 1 only for errors, because warnings flag style (a missing ``request_hash``) rather than
data a reader would get wrong.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from asf_core.cli.jobs import add_jobs_option
from asf_core.cli.output import ExitCode, Fail, out, out_json
from asf_core.cli.path_args import a_path
from asf_core.cli.render import short
from asf_core.verify.session import check_path

__all__ = ["add_parser", "run_verify"]


def run_verify(args: argparse.Namespace) -> ExitCode:
    """The ``asf verify`` command."""
    path: Path = args.path
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
    if args.json:
        out_json(
            {
                "path": str(path),
                "files": files,
                "ok": severities["error"] == 0,
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
            }
        )
    else:
        for f in findings:
            where = f"{f.path or path}:{f.line}" if f.line else (f.path or str(path))
            entry = f" (entry {short(f.entry)})" if f.entry else ""
            out(f"{where}: {f.severity}: {f.code}: {f.message}{entry}")
        verdict = "ok" if severities["error"] == 0 else "FAILED"
        counts = ", ".join(
            f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(severities.items())
        )
        counted = [] if not path.is_dir() else [f"{files} file{'s' if files != 1 else ''}"]
        detail = "; ".join([*counted, *([counts] if counts else [])])
        out(f"{path}: {verdict}" + (f" ({detail})" if detail else ""))
    if not path.is_dir() and any(f.code == "unreadable" for f in findings):
        return ExitCode.USAGE
    return ExitCode.PROBLEMS if severities["error"] else ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = sub.add_parser(
        "verify",
        help="check session files against the format",
        description="Verify one session file or every *.jsonl file under a directory. Exit 1 "
        "when any error is found; warnings alone exit 0.",
    )
    verify.add_argument("path", type=a_path, metavar="FILE|DIR")
    verify.add_argument("--json", action="store_true", help="machine-readable output")
    add_jobs_option(verify, "verify a directory's files")
    verify.set_defaults(run=run_verify, plugins=False)
