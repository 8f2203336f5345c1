"""``--redact`` for the commands that take it (``convert``, ``show``, ``export``): the run's
redaction, and an ASF file redacted as ``convert --redact`` would have written it.

A module of its own so that ``asf show`` of an ASF file loads neither the conversion pipeline
nor the detectors unless it redacts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from asf_core.cli.output import ExitCode, Fail

if TYPE_CHECKING:
    from asf_core.plugins import AsfPluginManager
    from asf_core.reader import SessionFile
    from asf_core.redaction import SessionRedaction

__all__ = ["JoinedSessions", "joined_ids", "redacted_file", "redaction_for"]


def redaction_for(args: argparse.Namespace) -> SessionRedaction | None:
    """The run's redaction when ``--redact`` is given; a missing detector is a usage error."""
    if not getattr(args, "redact", False):
        return None
    from asf_core.redaction import MissingDetector, Redactor, SessionRedaction

    try:
        return SessionRedaction(Redactor())
    except MissingDetector as exc:
        raise Fail(str(exc)) from None


def redacted_file(
    session: SessionFile, redaction: SessionRedaction, name: Path, pm: AsfPluginManager
) -> SessionFile:
    """An ASF file redacted as ``convert --redact`` would have written it, knowing the ids its
    entries had that redacting changed (``renamed``, old -> new: an entry is sealed again when
    its content changes), so that ``--leaf`` and other sessions may name an entry as the file
    names it.

    The values naming people that the plugin which wrote the file knows (its ``personal``
    hook: Hermes' identity columns) are replaced too, as converting would have; a plugin
    failing there stops the redaction (exit 3) rather than let them through."""
    import attrs

    from asf_core.canonical import JsonError
    from asf_core.errors import PluginError
    from asf_core.formats import ConvertedSession
    from asf_core.ids import IdError
    from asf_core.pipeline.host import personal
    from asf_core.reader import parse_session
    from asf_core.writer import session_lines

    try:
        values = personal(pm, session.header, session.entries)
    except PluginError as exc:
        raise Fail(f"{name}: cannot redact: {exc}", ExitCode.PLUGIN) from exc
    converted = ConvertedSession(
        header=session.header, entries=session.entries, name="shown", personal=values
    )
    try:
        done = redaction.session(converted)
        lines = b"".join(session_lines(done.header, done.entries))
    except (JsonError, IdError) as exc:  # an entry of a damaged file that cannot be sealed
        raise Fail(f"{name}: cannot redact: {exc}") from exc
    redacted = parse_session(lines, path=name)
    renamed = {
        old.id: new.id
        for old, new in zip(session.entries, redacted.entries, strict=False)
        if old.id is not None and new.id is not None and old.id != new.id
    }
    return attrs.evolve(redacted, renamed=renamed)


def joined_ids(session: SessionFile) -> Iterator[str]:
    """The ids of the other sessions whose entries ``session``'s entries name (``parents``)."""
    for entry in session.entries:
        for ref in entry.parents or ():
            if isinstance(ref.session, str) and ref.session:
                yield ref.session


class JoinedSessions:
    """The other sessions a file being redacted names, redacted with it (one numbering of
    placeholders), by id; ``find`` reads one by id, ``failed`` is told of one that cannot be
    redacted (it is left out) and of the file that names it.

    An entry joining another session's (a sub-agent's answer, by a ``parents`` reference)
    names it by id, a hash of its text. Redacting those sessions first (:meth:`before`) lets
    redacting the file move each reference to the id the entry has once redacted; otherwise
    it would keep the unredacted id, naming no entry of the redacted session and letting
    the unredacted text be confirmed.
    """

    def __init__(
        self,
        redaction: SessionRedaction,
        find: Callable[[str], SessionFile | None],
        plugins: Callable[[], AsfPluginManager],
        failed: Callable[[Fail, Path], None],
    ) -> None:
        self.redaction, self.find, self.plugins, self.failed = redaction, find, plugins, failed
        self.done: dict[str, SessionFile | None] = {}

    def before(self, session: SessionFile, near: Path) -> None:
        """Redact the sessions ``session`` names, those they name first."""
        for other in joined_ids(session):
            if other not in self.done:
                self.done[other] = None  # a cycle of references ends here
                found = self.find(other)
                if found is not None:
                    self.before(found, found.path or near)
                    self.done[other] = self._redacted(found, near)

    def get(self, session_id: str, near: Path) -> SessionFile | None:
        """A session redacted (None: not found, or it cannot be redacted)."""
        if session_id not in self.done:
            found = self.find(session_id)
            self.done[session_id] = None if found is None else self._redacted(found, near)
        return self.done[session_id]

    def _redacted(self, found: SessionFile, near: Path) -> SessionFile | None:
        try:
            return redacted_file(found, self.redaction, found.path or near, self.plugins())
        except Fail as exc:
            self.failed(exc, near)
            return None
