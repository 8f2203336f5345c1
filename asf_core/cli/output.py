"""What every ``asf`` subcommand shares: exit codes, the expected-error exception, output.

Results go to stdout, diagnostics to stderr, and an expected error (a missing file, a file
that is not ASF, an unknown leaf) is one stderr line and an exit code, never a traceback.
Every line goes through :func:`~asf_core.safe_text.printable` on its way out, so what the
data holds is shown, never obeyed by the terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import cache
from typing import Any

from attrs import define, field

from asf_core.cli.exit_codes import ExitCode, worst
from asf_core.cli.streams import JSON_ESCAPE, encodable
from asf_core.findings import Finding
from asf_core.safe_text import printable

__all__ = ["ExitCode", "Fail", "Troubles", "err", "exit_code_for", "out", "out_json", "worst"]


class Fail(Exception):
    """An expected error: printed as one stderr line, the command exits with ``code``."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.code = code


def out(text: str = "") -> None:
    """One line of results on stdout, control characters from the data escaped."""
    sys.stdout.write(printable(text) + "\n")


def out_json(value: Any, *, plain: bool = False) -> None:
    """A machine-readable result on stdout; attrs objects go through the library's converter
    (``plain``: the value is JSON data already, written without that copy).

    Characters a terminal would obey, and those stdout's encoding cannot spell, are ``\\u``
    escapes: the same JSON, safe on a screen. Written block by block as it is encoded
    (:func:`~asf_core.pipeline.report.json_blocks`).
    """
    from asf_core.pipeline.report import json_blocks

    if not plain:
        from asf_core.codec import converter

        value = converter().unstructure(value)
    for block in json_blocks(value, terminal=True):
        sys.stdout.write(encodable(block, JSON_ESCAPE))


def err(message: str) -> None:
    """One diagnostic line on stderr, prefixed like every message of the command."""
    sys.stderr.write(f"asf: {printable(message)}\n")


@cache
def _exit_for() -> dict[str, ExitCode]:
    """The exit code each code of :mod:`asf_core.pipeline.stores` and
    :mod:`asf_core.pipeline.conversion` calls for (their modules loaded when a problem is
    first met, not by every command that might meet one)."""
    from asf_core.pipeline import conversion, picking, single, stores

    return {
        stores.UNKNOWN_FORMAT: ExitCode.USAGE,
        stores.UNREADABLE_PATH: ExitCode.USAGE,
        stores.AMBIGUOUS: ExitCode.USAGE,
        stores.NOT_RECOGNISED: ExitCode.NOTHING,
        stores.PLUGIN_FAILED: ExitCode.PLUGIN,
        stores.UNSEARCHABLE: ExitCode.OK,
        conversion.DAMAGED: ExitCode.USAGE,
        conversion.PLUGIN: ExitCode.PLUGIN,
        picking.NO_SESSION: ExitCode.NOTHING,
        picking.AMBIGUOUS_SESSION: ExitCode.USAGE,
        single.SEVERAL: ExitCode.USAGE,
        single.NOTHING_CONVERTED: ExitCode.NOTHING,
        conversion.OUTPUT: ExitCode.USAGE,
    }


def exit_code_for(finding: Finding) -> ExitCode:
    """The exit code a problem of the library calls for (by its ``code``)."""
    return _exit_for().get(finding.code, ExitCode.PLUGIN)


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
