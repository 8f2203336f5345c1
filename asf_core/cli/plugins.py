"""``asf plugins``: every format plugin, loaded or broken."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from asf_core.cli.output import ExitCode, out, out_json
from asf_core.plugins import AsfPluginManager
from asf_core.safe_text import printable

__all__ = ["add_parser", "run_plugins", "table"]


def run_plugins(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf plugins`` command: every plugin, loaded or broken; exit 3 if any is broken."""
    records = pm.records()
    if args.json:
        out_json(records)
    else:
        rows = [("NAME", "DISTRIBUTION", "VERSION", "STATUS", "HOOKS")]
        for r in records:
            status = r.status if not r.error else f"{r.status}: {r.error}"
            hooks = ",".join(r.hooks) or "-"
            rows.append((r.name, r.distribution or "-", r.version or "-", status, hooks))
        table(rows)
    broken = any(r.status != "ok" for r in records)
    return ExitCode.PLUGIN if broken else ExitCode.OK


def table(rows: Sequence[Sequence[str]]) -> None:
    """Rows in aligned columns, measured as printed (data escaped); the last left ragged."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        out("  ".join([*cells, row[-1]]).rstrip())


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    plug = sub.add_parser(
        "plugins",
        help="list format plugins and whether they loaded",
        description="Every format plugin: name, distribution, version, hooks, status.",
    )
    plug.add_argument("--json", action="store_true", help="machine-readable output")
    plug.set_defaults(run=run_plugins)
