"""``asf convert``: every store's sessions into ASF files (:mod:`asf_core.conversion`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from asf_core.cli.output import ExitCode, Fail, Troubles, out, out_json, worst
from asf_core.cli.progress import progress_for
from asf_core.conversion import convert_paths
from asf_core.errors import OutputError
from asf_core.layout import REPORT_NAME
from asf_core.plugins import AsfPluginManager
from asf_core.report import RunReport, StoreReport, write_report

__all__ = ["DEFAULT_OUT", "add_parser", "run_convert"]

DEFAULT_OUT = Path("asf-out")


def _summary(run: RunReport) -> str:
    t = run.totals()
    stores = len(run.stores)
    text = (
        f"Converted {stores} store{'s' if stores != 1 else ''} into {run.output}: "
        f"{t['sessions_read']} native sessions read, {t['sessions_written']} ASF sessions "
        f"({t['files_written']} written, {t['files_unchanged']} unchanged), "
        f"{t['entries_written']} entries; {t['strays']} strays, {t['dropped']} dropped"
    )
    failed = sum(1 for s in run.stores if s.error)
    if failed:
        text += f"; {failed} store{'s' if failed != 1 else ''} stopped early"
    return text + f". Details: {REPORT_NAME} beside each store's files."


def run_convert(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf convert`` command."""
    troubles = Troubles()
    progress = progress_for(quiet=args.quiet or args.json)

    def show(report: StoreReport) -> None:
        progress.show(
            f"{report.format} {Path(report.path).name}: {report.sessions_written} sessions, "
            f"{report.files_written} written"
        )

    try:
        run, problems = convert_paths(
            pm, args.paths, args.output, format=args.format, on_session=show
        )
    except OutputError as exc:
        raise Fail(str(exc)) from exc
    finally:
        progress.clear()
    troubles.note(problems)
    if run.interrupted:
        troubles.code = worst(troubles.code, ExitCode.INTERRUPTED)
    if args.report is not None:
        try:
            write_report(args.report, run)
        except OSError as exc:
            troubles.add(f"cannot write {args.report}: {exc.strerror or exc}", ExitCode.USAGE)
    if run.interrupted:
        raise KeyboardInterrupt
    if args.json:
        out_json(run.to_json())
    elif not args.quiet and run.stores:
        out(_summary(run))
    return troubles.code


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "convert",
        help="convert session stores into ASF files",
        description="Find each PATH's format, convert every session into one ASF file under "
        "DIR/<format>/<store label>/ and write report.json beside them. With no PATH, every "
        "plugin's default locations.",
    )
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="a store or a directory")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where to write (default: ./{DEFAULT_OUT})",
    )
    p.add_argument("--format", metavar="NAME", help="use this format plugin; resolves ties")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary")
    p.add_argument("--report", type=Path, metavar="FILE", help="also write the run's report here")
    p.set_defaults(run=run_convert)
