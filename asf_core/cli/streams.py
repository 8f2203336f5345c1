"""The standard streams as ``asf`` needs them, whatever the environment hands over.

A locale or ``PYTHONIOENCODING`` can give stdout and stderr an encoding that cannot spell the
data (ASCII, Latin-1): Python would then stop the run with a traceback at the first title
holding an em dash. So what a stream cannot encode is written as an escape instead: in text
for people the backslash escape ``printable`` uses for control characters (``\\u2014``), in
JSON its ``\\u`` escape (the same document), in HTML a character reference.

A stream closed before the run (``>&-``, ``2>&-``, ``<&-``) leaves its descriptor free for
the first file ``asf`` opens, where a stray write would land; so the descriptor is held on
the null device. A closed stdin reads as empty; a closed stderr, or one that cannot be written
(a full disk), loses what is said while the exit code still tells; a closed stdout refuses
every write with :class:`~asf_core.cli.stdio.StdoutError`, which the command reports in one
line. A stream opened the wrong way (``1< file``, ``0> file``) is taken as closed.

This module imports only what the interpreter has loaded at start-up or built in: the command
sets the streams up before anything else (see :mod:`asf_core.cli.main`).
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import sys

from asf_core.cli.stdio import StdoutError, patient

TYPE_CHECKING = False  # as typing's, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["JSON_ESCAPE", "StdoutError", "encodable", "prepare"]

#: The error handler spelling a character as JSON does: ``\\u00e9``, a surrogate pair beyond
#: the Basic Multilingual Plane. Valid wherever the character was, as every character beyond
#: ASCII in a JSON document lies inside a string.
JSON_ESCAPE = "asf-json-escape"

#: Encodings that spell every character: nothing to escape for them.
_UNICODE = frozenset(
    {"utf-8", "utf-8-sig", "utf-7", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"}
    | {"utf-32-be"}
)


def _json_escape(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    parts = []
    for ch in exc.object[exc.start : exc.end]:
        code = ord(ch)
        if code < 0x10000:
            parts.append(f"\\u{code:04x}")
        else:
            code -= 0x10000
            parts.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return "".join(parts), exc.end


codecs.register_error(JSON_ESCAPE, _json_escape)


def encodable(text: str, errors: str, stream: TextIO | None = None) -> str:
    """``text`` with what ``stream`` (default: stdout) cannot encode spelled by the error
    handler ``errors`` (:data:`JSON_ESCAPE`, ``xmlcharrefreplace``); as it is when the stream
    spells every character or says no encoding."""
    encoding = getattr(sys.stdout if stream is None else stream, "encoding", None)
    if text.isascii() or not isinstance(encoding, str):
        return text
    try:
        name = codecs.lookup(encoding).name
        if name in _UNICODE:
            return text
        return text.encode(name, errors).decode(name)
    except LookupError:
        return text


class _Closed(io.TextIOBase):
    """stdout when its descriptor was closed, or opened for reading only (``1< file``):
    every write fails, saying ``why``."""

    def __init__(self, why: str = "stdout is closed") -> None:
        self._why = why

    def write(self, text: str) -> int:
        raise StdoutError(errno.EBADF, self._why)


def _opened_backwards(fd: int) -> bool:
    """Whether standard descriptor ``fd`` is open the wrong way for it: stdin for writing
    only (``0> file``), stdout or stderr for reading only (``1< file``)."""
    import fcntl  # a C module: cheap, and this is the only use

    try:
        mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        return False
    return mode == (os.O_WRONLY if fd == 0 else os.O_RDONLY)


class _Muted(io.TextIOBase):
    """stderr, minus its write errors: when it cannot take a line (a full disk), the line is
    lost and the run goes on, its exit code unchanged (a traceback could not be seen)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the stream's, read-only
        return self._stream.encoding

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError:
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            return  # what it held is lost, as a line written

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()


class _Dropped(io.TextIOBase):
    """stderr when its descriptor was closed: what is said goes nowhere."""

    def write(self, text: str) -> int:
        return len(text)


def _hold_closed_fds() -> None:
    """Open each closed standard descriptor on the null device."""
    for fd in (0, 1, 2):  # in order: os.open takes the lowest free descriptor
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            except OSError:  # no null device (a bare chroot): leave it closed
                continue
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def prepare() -> None:
    """Hold closed standard descriptors (see the module), wait on those another program left
    non-blocking (:func:`~asf_core.cli.stdio.patient`), and let stdout and stderr write
    what their encoding cannot spell as backslash escapes (stderr does already, by Python's
    default)."""
    _hold_closed_fds()
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        stream = getattr(sys, name)
        if stream is not None:
            setattr(sys, name, patient(stream, fd))
    if sys.stdin is None or _opened_backwards(0):  # None: closed at start
        sys.stdin = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    if sys.stdout is None:
        sys.stdout = _Closed()
    elif _opened_backwards(1):
        sys.stdout = _Closed("stdout is open for reading only")
    if sys.stderr is None or _opened_backwards(2):
        sys.stderr = _Dropped()
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    if not isinstance(sys.stderr, _Dropped):
        sys.stderr = _Muted(sys.stderr)
