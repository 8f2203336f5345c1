"""``asf list``: each store's native sessions as its plugin reads them, unconverted."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from asf_core import host
from asf_core.cli.output import ExitCode, Troubles, err, out_json
from asf_core.cli.plugins import table
from asf_core.codec import converter
from asf_core.errors import PluginError
from asf_core.formats import StoreError
from asf_core.listing import StoreListing, list_store
from asf_core.plugins import AsfPluginManager
from asf_core.stores import find_stores

__all__ = ["add_parser", "run_list"]

_COLUMNS = (
    "FORMAT",
    "ID",
    "SOURCE",
    "STARTED",
    "ENDED",
    "RELATION",
    "PARENT",
    "COUNTS",
    "FINDINGS",
    "CWD",
    "DETAILS",
    "TITLE",
)


def _store_json(listing: StoreListing) -> dict[str, Any]:
    """A listing as ``asf list --json`` prints it: each session names its format."""
    obj: dict[str, Any] = converter().unstructure(listing)
    obj["sessions"] = [{"format": listing.format, **s} for s in obj["sessions"]]
    return obj


def run_list(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf list`` command: native sessions as the read hook gives them, unconverted."""
    troubles = Troubles()
    found = find_stores(pm, args.paths, args.format)
    troubles.note(found.problems)
    listings: list[StoreListing] = []
    for candidate in found.stores:
        try:
            listings.append(list_store(pm, candidate))
        except StoreError as exc:  # the store is damaged: the input's fault, not the plugin's
            troubles.add(f"{candidate.claim.path}: {host.store_problem(exc)}", ExitCode.USAGE)
        except PluginError as exc:
            troubles.add(f"{candidate.claim.path}: {exc}", ExitCode.PLUGIN)
    if args.json:
        out_json({"stores": [_store_json(s) for s in listings], "errors": troubles.lines})
        return troubles.code
    rows: list[tuple[str, ...]] = [_COLUMNS]
    for listing in listings:
        for s in listing.sessions:
            counts = ",".join(f"{k}={v}" for k, v in s.counts.items()) or "-"
            details = ",".join(f"{k}={v}" for k, v in s.details.items()) or "-"
            rows.append(
                (
                    listing.format,
                    s.id,
                    s.source or "-",
                    s.started or "-",
                    s.ended or "-",
                    s.relation or "-",
                    s.parent or "-",
                    counts,
                    str(len(s.findings)),
                    s.cwd or "-",
                    details,
                    " ".join((s.title or "").split())[:60],
                )
            )
        if listing.findings:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(listing.findings.items()))
            err(f"{listing.path}: {kinds} (details: asf convert, report.json)")
    if len(rows) > 1:
        table(rows)
    return troubles.code


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lst = sub.add_parser(
        "list",
        help="list the native sessions of stores without converting them",
        description="List each store's sessions as its format plugin reads them.",
    )
    lst.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    lst.add_argument("--format", metavar="NAME", help="use this format plugin; resolves ties")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.set_defaults(run=run_list)
