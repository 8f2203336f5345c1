"""The exit codes of ``asf`` (documented in docs/cli.md), apart so start-up imports nothing else.

:mod:`asf_core.cli.main` needs them before it has loaded anything heavy: a signal in the first
moments of a run must still end it with its documented code.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "overall", "worst"]


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
    #: Interrupted by SIGINT (Ctrl-C); every file written is whole.
    INTERRUPTED = 130
    #: stdout was closed early (``asf show f | head``), as if killed by SIGPIPE.
    BROKEN_PIPE = 141
    #: Stopped by SIGTERM; every file written is whole.
    TERMINATED = 143


#: Which code wins when several things go wrong in one run: the later in this list.
_SEVERITY = (
    ExitCode.OK,
    ExitCode.PROBLEMS,
    ExitCode.NOTHING,
    ExitCode.USAGE,
    ExitCode.PLUGIN,
    ExitCode.BROKEN_PIPE,
    ExitCode.INTERRUPTED,
    ExitCode.TERMINATED,
)


def worst(*codes: ExitCode) -> ExitCode:
    """The most severe of ``codes`` (OK when none)."""
    return max(codes, key=_SEVERITY.index, default=ExitCode.OK)


def overall(codes: list[ExitCode]) -> ExitCode:
    """A run's code from its files' codes: nothing to work on (4) only when no file had
    anything; a file with nothing beside ones that had something is said, not a failure."""
    if codes and all(code == ExitCode.NOTHING for code in codes):
        return ExitCode.NOTHING
    return worst(*(code for code in codes if code != ExitCode.NOTHING))
