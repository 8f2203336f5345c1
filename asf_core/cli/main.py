"""The ``asf`` command: convert session stores to ASF, list them, inspect and verify ASF files.

``main`` never lets an expected error out as a traceback: a :class:`~asf_core.cli.output.Fail`
becomes one stderr line and its exit code, Ctrl-C exits 130 (files are written atomically, so
only whole files remain), and a reader closing our stdout early ends the run quietly.
Exit codes are the :class:`ExitCode` members (the ``--help`` epilog lists them).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

from asf_core import DISTRIBUTION, FORMAT, plugins
from asf_core.cli.output import ExitCode, Fail, err

__all__ = ["ExitCode", "build_parser", "main"]


def _version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


# --- parser and main ---------------------------------------------------------------------

_EPILOG = """\
start here:
  asf list                      your sessions (~/.hermes, ~/.claude/projects), newest first
  asf show HOME --session ID --format markdown
                                read one as a transcript
  asf convert -o DIR            every session to ASF files, with a report.json per store

Run 'asf COMMAND --help' for a command's options.

exit codes:
  0 done (strays and warnings included)   1 asf verify found errors
  2 bad arguments, unreadable path or damaged store   3 a format plugin failed
  4 nothing found to work on   130 interrupted   141 stdout closed early
"""


def _subcommand(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` (the top-level one when there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            chosen: argparse.ArgumentParser = action.choices[name]
            return chosen
    return parser


#: Each subcommand and the module that defines it, imported only when needed: a run of one
#: command (a nightly ``asf convert`` with nothing to do) does not pay for the others.
_COMMANDS = {
    "convert": "asf_core.cli.convert",
    "list": "asf_core.cli.listing",
    "plugins": "asf_core.cli.plugins",
    "show": "asf_core.cli.show",
    "verify": "asf_core.cli.verify",
    "export": "asf_core.cli.export",
}


def _command(argv: Sequence[str] | None) -> str | None:
    """The subcommand ``argv`` runs, when it names one and asks for no general help."""
    args = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args if not a.startswith("-")), None)
    before = args[: args.index(first)] if first in args else args
    if first in _COMMANDS and not before:
        return first
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``asf`` parser: every subcommand, or ``only`` that one."""
    parser = argparse.ArgumentParser(
        prog="asf",
        description=f"Turn AI agents' session logs into the Agent Session Format ({FORMAT}).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"asf {_version()} ({FORMAT})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in _COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).add_parser(sub)
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | ExitCode:
    parser = build_parser(_command(argv))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # an option the subcommand does not know: its usage, not the top level's
            _subcommand(parser, getattr(args, "command", None)).error(
                f"unrecognized arguments: {' '.join(extra)}"
            )
        return args
    except SystemExit as exc:  # argparse reports usage errors (and --help) by exiting
        code = exc.code if isinstance(exc.code, int) else ExitCode.USAGE
        return ExitCode.OK if code == 0 else ExitCode.USAGE


def _dispatch(args: argparse.Namespace) -> ExitCode:
    run: Callable[..., ExitCode] = args.run
    if not getattr(args, "plugins", True):  # works on ASF files alone
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
