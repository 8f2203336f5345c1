"""What every ``asf`` subcommand shares: exit codes, the expected-error exception, output.

Results go to stdout, diagnostics to stderr, and an expected error (a missing file, a file
that is not ASF, an unknown leaf) is one stderr line and an exit code, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from attrs import define, field

from asf_core import conversion, selecting, single, stores
from asf_core.codec import converter
from asf_core.findings import Finding
from asf_core.report import json_bytes

__all__ = ["ExitCode", "Fail", "Troubles", "err", "exit_code_for", "out", "out_json", "worst"]


class ExitCode(IntEnum):
    """The exit status of ``asf``; documented in docs/cli.md."""

    #: Done; strays and warnings do not change it.
    OK = 0
    #: ``asf verify`` found errors in a file.
    PROBLEMS = 1
    #: Bad arguments, a path that cannot be read or written, an ambiguous format, or a store
    #: its plugin recognises but cannot read (damaged: the plugin raised ``StoreError``).
    USAGE = 2
    #: A format plugin raised, broke the hook contract, or could not be loaded.
    PLUGIN = 3
    #: Nothing to work on: no plugin recognised the input, or no session file was found.
    NOTHING = 4
    #: Interrupted with Ctrl-C; every file written is whole.
    INTERRUPTED = 130
    #: stdout was closed early (``asf show f | head``), as if killed by SIGPIPE.
    BROKEN_PIPE = 141


#: Which code wins when several things go wrong in one run: the later in this list.
_SEVERITY = (
    ExitCode.OK,
    ExitCode.PROBLEMS,
    ExitCode.NOTHING,
    ExitCode.USAGE,
    ExitCode.PLUGIN,
    ExitCode.BROKEN_PIPE,
    ExitCode.INTERRUPTED,
)


def worst(*codes: ExitCode) -> ExitCode:
    """The most severe of ``codes`` (OK when none)."""
    return max(codes, key=_SEVERITY.index, default=ExitCode.OK)


class Fail(Exception):
    """An expected error: printed as one stderr line, the command exits with ``code``."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.code = code


def out(text: str = "") -> None:
    """One line of results on stdout."""
    sys.stdout.write(text + "\n")


def out_json(value: Any) -> None:
    """A machine-readable result on stdout; attrs objects go through the library's converter."""
    sys.stdout.write(json_bytes(converter().unstructure(value)).decode())


def err(message: str) -> None:
    """One diagnostic line on stderr, prefixed like every message of the command."""
    sys.stderr.write(f"asf: {message}\n")


#: The exit code each code of :mod:`asf_core.stores` and :mod:`asf_core.conversion` calls for.
_EXIT_FOR = {
    stores.UNKNOWN_FORMAT: ExitCode.USAGE,
    stores.UNREADABLE_PATH: ExitCode.USAGE,
    stores.AMBIGUOUS: ExitCode.USAGE,
    stores.NOT_RECOGNISED: ExitCode.NOTHING,
    stores.PLUGIN_FAILED: ExitCode.PLUGIN,
    conversion.DAMAGED: ExitCode.USAGE,
    conversion.PLUGIN: ExitCode.PLUGIN,
    selecting.NO_SESSION: ExitCode.NOTHING,
    selecting.AMBIGUOUS_SESSION: ExitCode.USAGE,
    single.SEVERAL: ExitCode.USAGE,
}


def exit_code_for(finding: Finding) -> ExitCode:
    """The exit code a problem of the library calls for (by its ``code``)."""
    return _EXIT_FOR.get(finding.code, ExitCode.PLUGIN)


@define
class Troubles:
    """Problems met along the way: each printed once on stderr and kept for ``--json``."""

    code: ExitCode = ExitCode.OK
    lines: list[str] = field(factory=list)

    def add(self, message: str, code: ExitCode) -> None:
        err(message)
        self.lines.append(message)
        self.code = worst(self.code, code)

    def note(self, findings: Iterable[Finding]) -> None:
        """Add the library's problems, each with the exit code its ``code`` calls for."""
        for f in findings:
            self.add(f.message, exit_code_for(f))
