"""The ``asf`` command: convert session stores to ASF, list them, inspect and verify ASF files.

``main`` never lets an expected error out as a traceback: a :class:`~asf_core.cli.output.Fail`
becomes one stderr line and its exit code, SIGINT (Ctrl-C) and SIGTERM exit 130 and 143
(files are written atomically, so only whole files remain), and a reader closing our stdout
early ends the run quietly. Exit codes are the :class:`ExitCode` members, documented in
docs/cli.md.

The signal handlers go in before anything heavy is imported: this module and
:mod:`asf_core.cli.signals` load only light parts of the standard library, and the
subcommands (with attrs, cattrs, pluggy and the plugins) are imported inside :func:`main`.
"""

from __future__ import annotations

import gc
import os
import sys

from asf_core.cli import signals, streams

TYPE_CHECKING = False  # as typing's, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

    from _typeshed import SupportsWrite

    from asf_core.cli.exit_codes import ExitCode

__all__ = ["ExitCode", "build_parser", "console", "main"]


def _version() -> str:
    from asf_core import DISTRIBUTION
    from asf_core.entry_points import installed_version

    return installed_version(DISTRIBUTION) or "unknown"


# --- parser and main ---------------------------------------------------------------------

_EPILOG = """\
start here:
  asf list                      your sessions, newest first (~/.hermes,
                                ~/.claude/projects, ~/.codex)
  asf show --session ID --format markdown
                                read one of them as a transcript
  asf convert -o DIR            every session to ASF files, with a report.json per store

Run 'asf COMMAND --help' for a command's options.

exit codes:
  0 done (strays and warnings included)   1 asf verify found errors
  2 bad arguments, unreadable path or damaged store   3 a format plugin failed
  4 nothing found to work on   130 interrupted (SIGINT)   141 stdout closed early
  143 terminated (SIGTERM)
"""


def _subcommand(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` (the top-level one when there is none)."""
    import argparse

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
    """The subcommand ``argv`` runs, when it names one and asks for no general help; ``""``
    (none to load) when it asks for the version first."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        return ""
    first = next((a for a in args if not a.startswith("-")), None)
    before = args[: args.index(first)] if first in args else args
    if first in _COMMANDS and not before:
        return first
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``asf`` parser: every subcommand, or ``only`` that one (``""``: none)."""
    import argparse
    import importlib

    from asf_core import FORMAT
    from asf_core.safe_text import printable

    class Parser(argparse.ArgumentParser):
        """argparse, with the arguments it quotes in an error made safe to print, and the
        terminal's width (and ``shutil``, which argparse imports for it) looked up only when
        something is printed, not for each argument added."""

        _adding = False

        def error(self, message: str) -> NoReturn:
            super().error(printable(message))

        def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
            if message and file is sys.stdout:  # --help: argparse would hide a failed write
                file.write(message)
            else:
                super()._print_message(message, file)

        def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
            self._adding = True  # argparse asks a formatter to check the argument's metavar
            try:
                return super().add_argument(*args, **kwargs)
            finally:
                self._adding = False

        def _get_formatter(self) -> argparse.HelpFormatter:
            if self._adding:  # the metavar check: the same in every formatter asf uses
                return argparse.HelpFormatter(prog=self.prog, width=80)
            return super()._get_formatter()

    class Version(argparse.Action):
        """``--version``: the installed version, looked up (in the package metadata, which
        is slow to load) only when asked for, not by every run."""

        def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
            sys.stdout.write(f"asf {_version()} ({FORMAT})\n")
            parser.exit()

    parser = Parser(
        prog="asf",
        description=f"Turn AI agents' session logs into the Agent Session Format ({FORMAT}).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=Version, nargs=0, help="show the version and exit")
    # prog: what argparse would format from the usage (no positional precedes COMMAND)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, prog="asf")
    for name, module in _COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).add_parser(sub)
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | ExitCode:
    from asf_core.cli.exit_codes import ExitCode

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
    if not getattr(args, "plugins", True):  # works on ASF files alone: no plugin is loaded
        return run(args)
    from asf_core import plugins

    return run(args, plugins.make_plugin_manager())


def _run(argv: Sequence[str] | None) -> ExitCode:
    """Parse and run one command; an expected error becomes its line and its code."""
    from asf_core.cli.exit_codes import ExitCode
    from asf_core.cli.output import Fail, err

    parsed: argparse.Namespace | ExitCode | None = None
    try:
        parsed = _parse(argv)
        code = parsed if isinstance(parsed, ExitCode) else _dispatch(parsed)
        sys.stdout.flush()
    except Fail as exc:
        _failed_json(parsed, str(exc))
        err(str(exc))
        code = exc.code
    except OSError as exc:
        if _cwd_gone(exc):
            err("the current directory no longer exists: name paths from / or run elsewhere")
            return ExitCode.USAGE
        if not (_no_room(exc) or isinstance(exc, streams.StdoutError)):
            raise
        where = "" if exc.filename is None else f" {exc.filename}"  # none: stdout, most often
        err(f"cannot write{where}: {exc.strerror}")
        _silence_stdout()
        code = ExitCode.USAGE
    return code


def _failed_json(parsed: argparse.Namespace | ExitCode | None, message: str) -> None:
    """With ``--json``, a command that stops on an expected error still prints one JSON
    document, of its usual shape, empty but for ``errors`` (each command's ``failed``): a
    program reading stdout gets the document it parses, and why it is empty."""
    failed: Callable[[Any, str], dict[str, Any] | None] | None = getattr(parsed, "failed", None)
    document = failed(parsed, message) if failed and getattr(parsed, "json", False) else None
    if document is not None:
        from asf_core.cli.output import out_json

        out_json(document, plain=True)


def _cwd_gone(exc: OSError) -> bool:
    """Whether ``exc`` is ``os.getcwd`` failing because the current directory was deleted
    (the run started in it, or it went meanwhile): a relative path then means nothing, and
    making one absolute fails with no file name to report."""
    if not isinstance(exc, FileNotFoundError) or exc.filename is not None:
        return False
    try:
        os.getcwd()  # noqa: PTH109 - this module keeps pathlib out of start-up
    except FileNotFoundError:
        return True
    return False


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


def _guarded(argv: Sequence[str] | None, caught: signals.Catcher) -> int:
    """:func:`_run`, with interrupts and a closed stdout turned into their exit codes.

    Only what is loaded already is used here: an interrupt may come in the middle of an
    import.
    """
    try:
        return int(_run(argv))
    except KeyboardInterrupt:  # SIGINT, SIGTERM (signals.Interrupted), or raised by code
        sys.stderr.write(f"asf: {caught.what()}\n")
        return caught.exit_code()
    except BrokenPipeError:
        from asf_core.cli.exit_codes import ExitCode

        _silence_stdout()
        return int(ExitCode.BROKEN_PIPE)


def _no_room(exc: OSError) -> bool:
    """Whether a write failed for want of room: a full disk, a quota, a file-size limit
    (``ulimit -f``). Never a bug, wherever it comes from (most often stdout: ``asf list
    --json > file`` on a full disk), so one line, not a traceback."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``asf`` with ``argv`` (default: the process arguments); return the exit code.

    SIGINT and SIGTERM are handled while it runs; the previous handlers come back after.
    """
    with signals.Trap() as caught:
        return _guarded(argv, caught)


#: The collector's first threshold for the ``asf`` process (Python's default: 700). A
#: conversion allocates containers by the million, nearly all freed at once by their
#: reference counts (entries hold no cycles); each collection of the young ones walks them
#: all the same, and every tenth one the older generation.
_GC_YOUNG = 10_000


def console() -> NoReturn:
    """The ``asf`` script: :func:`main` for the whole process, signals handled to the end.
    The process's collector runs less often (:data:`_GC_YOUNG`) and its standard streams
    escape what their encoding cannot spell (:func:`~asf_core.cli.streams.prepare`): the
    process is ours; a program calling :func:`main` keeps its own settings."""
    gc.set_threshold(_GC_YOUNG, *gc.get_threshold()[1:])
    streams.prepare()
    with signals.Trap(restore=False) as caught:
        try:
            code = _guarded(None, caught)
        except KeyboardInterrupt:  # a signal between the end of the work and this line
            code = caught.exit_code()
        caught.finished = True
    _leave(code)


def _leave(code: int) -> NoReturn:
    """End the process with ``code``, skipping the interpreter's teardown when nothing is
    left for it: it frees every loaded module one by one, about 8 ms, a tenth of a run that
    finds its stores unchanged. Only with no exit callback registered (a worker pool, a
    temporary directory or a coverage tool would have one) and no other thread running, and
    once the standard streams are flushed; otherwise, or when a flush fails, the usual exit
    finishes and reports as ever."""
    import atexit

    threading = sys.modules.get("threading")
    if atexit._ncallbacks() or (threading is not None and threading.active_count() > 1):
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def __getattr__(name: str) -> Any:
    if name == "ExitCode":  # imported on demand: start-up stays light
        from asf_core.cli.exit_codes import ExitCode

        return ExitCode
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    console()
