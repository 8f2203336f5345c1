"""The ``asf`` command: convert session stores to ASF, list them, inspect and verify ASF files.

``main`` never lets an expected error out as a traceback: a :class:`~asf_core.cli.output.Fail`
becomes one stderr line and its exit code, Ctrl-C exits 130 (files are written atomically, so
only whole files remain), and a reader closing our stdout early ends the run quietly.
Exit codes are the :class:`ExitCode` members, documented in docs/cli.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from asf_core import FORMAT, plugins
from asf_core.cli import convert as cli_convert
from asf_core.cli import show as cli_show
from asf_core.cli.output import ExitCode, Fail, err, out, out_json
from asf_core.formats import Finding, NativeSession, StoreError
from asf_core.plugins import AsfPluginManager, Candidate, PluginError
from asf_core.stores import Troubles, find_stores

__all__ = ["ExitCode", "build_parser", "main"]


def _version() -> str:
    try:
        return version("asf")
    except PackageNotFoundError:
        return "unknown"


# --- asf plugins -------------------------------------------------------------------------


def run_plugins(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf plugins`` command: every plugin, loaded or broken; exit 3 if any is broken."""
    records = pm.records()
    if args.json:
        out_json(
            [
                {
                    "name": r.name,
                    "distribution": r.distribution,
                    "version": r.version,
                    "hooks": list(r.hooks),
                    "status": r.status,
                    "error": r.error or None,
                }
                for r in records
            ]
        )
    else:
        rows = [("NAME", "DISTRIBUTION", "VERSION", "STATUS", "HOOKS")]
        for r in records:
            status = r.status if not r.error else f"{r.status}: {r.error}"
            hooks = ",".join(r.hooks) or "-"
            rows.append((r.name, r.distribution or "-", r.version or "-", status, hooks))
        _table(rows)
    broken = any(r.status != "ok" for r in records)
    return ExitCode.PLUGIN if broken else ExitCode.OK


def _table(rows: Sequence[Sequence[str]]) -> None:
    """Rows in aligned columns; the last column is left ragged."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        out("  ".join([*cells, row[-1]]).rstrip())


# --- asf list ----------------------------------------------------------------------------


def _session_json(candidate: Candidate, s: NativeSession) -> dict[str, Any]:
    return {
        "format": candidate.claim.format,
        "id": s.id,
        "title": s.title,
        "source": s.source,
        "started": s.started,
        "ended": s.ended,
        "relation": s.relation,
        "parent": s.parent,
        "counts": dict(s.counts),
        "findings": len(s.findings),
    }


def _list_store(pm: AsfPluginManager, candidate: Candidate) -> dict[str, Any]:
    store = plugins.open_store(pm, candidate)
    try:
        sessions: list[dict[str, Any]] = []
        findings: list[Finding] = []
        info = plugins.store_info(candidate.plugin, store)
        for item in plugins.read(pm, candidate.plugin, store):
            if isinstance(item, NativeSession):
                sessions.append(_session_json(candidate, item))
                findings.extend(item.findings)
            else:
                findings.append(item)
    finally:
        plugins.close_store(candidate.plugin, store)
    kinds: dict[str, int] = {}
    for f in findings:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    return {
        "format": candidate.claim.format,
        "plugin": candidate.plugin,
        "path": str(candidate.claim.path),
        "store": info,
        "sessions": sessions,
        "findings": kinds,
    }


def run_list(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf list`` command: native sessions as the read hook gives them, unconverted."""
    troubles = Troubles()
    stores: list[dict[str, Any]] = []
    for candidate in find_stores(pm, args.paths, args.format, troubles):
        try:
            stores.append(_list_store(pm, candidate))
        except StoreError as exc:  # the store is damaged: the input's fault, not the plugin's
            troubles.add(f"{candidate.claim.path}: {plugins.store_problem(exc)}", ExitCode.USAGE)
        except PluginError as exc:
            troubles.add(f"{candidate.claim.path}: {exc}", ExitCode.PLUGIN)
    if args.json:
        out_json({"stores": stores, "errors": troubles.lines})
        return troubles.code
    rows = [
        (
            "FORMAT",
            "ID",
            "SOURCE",
            "STARTED",
            "ENDED",
            "RELATION",
            "PARENT",
            "COUNTS",
            "FINDINGS",
            "TITLE",
        )
    ]
    for store in stores:
        for s in store["sessions"]:
            counts = ",".join(f"{k}={v}" for k, v in s["counts"].items()) or "-"
            rows.append(
                (
                    s["format"],
                    s["id"],
                    s["source"] or "-",
                    s["started"] or "-",
                    s["ended"] or "-",
                    s["relation"] or "-",
                    s["parent"] or "-",
                    counts,
                    str(s["findings"]),
                    " ".join((s["title"] or "").split())[:60],
                )
            )
        if store["findings"]:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(store["findings"].items()))
            err(f"{store['path']}: {kinds} (details: asf convert, report.json)")
    if len(rows) > 1:
        _table(rows)
    return troubles.code


# --- parser and main ---------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asf",
        description=f"Turn AI agents' session logs into the Agent Session Format ({FORMAT}).",
        epilog="Exit codes and the output layout: docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"asf {_version()} ({FORMAT})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    cli_convert.add_parser(sub)
    lst = sub.add_parser(
        "list",
        help="list the native sessions of stores without converting them",
        description="List each store's sessions as its format plugin reads them.",
    )
    lst.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    lst.add_argument("--format", metavar="NAME", help="use this format plugin; resolves ties")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.set_defaults(run=run_list)
    plug = sub.add_parser(
        "plugins",
        help="list format plugins and whether they loaded",
        description="Every format plugin: name, distribution, version, hooks, status.",
    )
    plug.add_argument("--json", action="store_true", help="machine-readable output")
    plug.set_defaults(run=run_plugins)
    cli_show.add_parsers(sub)
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | ExitCode:
    try:
        return build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors (and --help) by exiting
        code = exc.code if isinstance(exc.code, int) else ExitCode.USAGE
        return ExitCode.OK if code == 0 else ExitCode.USAGE


def _dispatch(args: argparse.Namespace) -> ExitCode:
    run: Callable[..., ExitCode] = args.run
    if run in (cli_show.run_show, cli_show.run_verify):
        return run(args)
    return run(args, plugins.make_plugin_manager())


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (tests)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``asf`` with ``argv`` (default: the process arguments); return the exit code."""
    try:
        parsed = _parse(argv)
        if isinstance(parsed, ExitCode):
            return int(parsed)
        code = _dispatch(parsed)
        sys.stdout.flush()
    except Fail as exc:
        err(str(exc))
        code = exc.code
    except KeyboardInterrupt:
        err("interrupted")
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        code = ExitCode.BROKEN_PIPE
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
