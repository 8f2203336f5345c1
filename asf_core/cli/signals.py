"""Stopping cleanly on SIGINT and SIGTERM, from the first moment of a run to the last.

Both signals become an :class:`Interrupted` exception. It is a ``KeyboardInterrupt``, so every
path that cleans up after Ctrl-C (a temporary file removed, a store closed, its report written)
cleans up after SIGTERM too, and ``asf`` exits ``128 + signal`` (130, 143) with one line. A
second signal while that cleanup runs ends the process at once with the same code: files on
disk are whole either way, and a temporary file left behind is removed by the next run.

This module imports only built-in modules (``_signal``, the C half of ``signal``, whose Python
half imports ``enum``): the command installs it before it loads anything else, so a signal
during start-up ends the run this way too, once the interpreter has run the first line of asf.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # as typing's, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import signal as _signal  # the same functions and constants, with types
    from collections.abc import Callable
    from types import FrameType, TracebackType
    from typing import Any, TypeAlias

    _Handler: TypeAlias = Callable[[int, FrameType | None], Any] | int | None
else:
    import _signal

__all__ = ["SIGNALS", "Catcher", "Interrupted", "Trap"]

#: The signals that stop a run cleanly, by name.
SIGNALS: dict[int, str] = {_signal.SIGINT: "SIGINT", _signal.SIGTERM: "SIGTERM"}


class Interrupted(KeyboardInterrupt):
    """A signal stopped the run (raised in the main thread by the handler)."""

    def __init__(self, signum: int) -> None:
        super().__init__(SIGNALS.get(signum, str(signum)))
        self.signum = signum


class Catcher:
    """The handler for :data:`SIGNALS`: remembers the first signal and raises once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        #: Set when the work is done: a late signal then just ends the process.
        self.finished = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None or self.finished:
            os._exit(128 + (self.signum or signum))
        self.signum = signum
        raise Interrupted(signum)

    def what(self) -> str:
        """What happened, for the one line ``asf`` prints."""
        return "terminated" if self.signum == _signal.SIGTERM else "interrupted"

    def exit_code(self) -> int:
        """128 + the signal received; 130 for a ``KeyboardInterrupt`` raised otherwise."""
        return 128 + (self.signum if self.signum is not None else _signal.SIGINT)


class Trap:
    """Handle :data:`SIGNALS` inside the ``with`` block (only the main thread can; elsewhere
    this changes nothing); the previous handlers come back after it unless ``restore`` is
    false. A signal ignored when the block starts stays ignored, as the shell that started a
    background job meant (Ctrl-C stops the script's foreground command, not ``asf``). A class
    rather than ``contextlib``, which start-up does not load."""

    def __init__(self, *, restore: bool = True) -> None:
        self._restore = restore
        self._previous: dict[int, _Handler] = {}
        self.catcher = Catcher()

    def __enter__(self) -> Catcher:
        for signum in SIGNALS:
            try:
                if _signal.getsignal(signum) == _signal.SIG_IGN:
                    continue  # ignored by whoever started us (`asf ... &` in a script): so be it
                self._previous[signum] = _signal.signal(signum, self.catcher.handle)
            except ValueError:  # not the main thread of the main interpreter
                break
        return self.catcher

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._restore:
            for signum, handler in self._previous.items():
                _signal.signal(signum, handler if handler is not None else _signal.SIG_DFL)
