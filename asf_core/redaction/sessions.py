"""Redacting converted sessions before they are written: ids sealed again, links kept.

An entry's id hashes its content, so an entry whose text changed gets a new id, and so does
every entry below it (their ``parent`` changed). Entries are redacted in file order and each
is sealed again with its redacted parent; members that name an entry of the session
(``first_kept``, ``target``, ``parents`` ...) are moved to the new ids, as are references to
the leaves of sessions redacted earlier in the run (a sub-agent's, which a plugin writes
before the session that spawned it). A ``request_hash`` no longer describes the redacted
request and is dropped. So a redacted file verifies like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import attrs

from asf_core.codec import entry_from_json, entry_to_json, header_from_json, header_to_json
from asf_core.findings import Finding
from asf_core.formats import ConvertedSession
from asf_core.ids import ENVELOPE
from asf_core.model import Entry, Header
from asf_core.redaction.redactor import Redactor
from asf_core.writer import seal

__all__ = ["SessionRedaction"]

#: Members of a ``parents`` reference that are ids, never redacted.
_REF_IDS = ("entry", "session")
#: Members of a header that are ids, never redacted.
_HEADER_IDS = frozenset({"id", "parent_session", "base", "type", "format", "payload", "created_at"})


class SessionRedaction:
    """The redaction of one run: a :class:`Redactor` and the leaves of sessions done so far."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        #: ASF session id -> its entries' old id -> new id, for entries no other entry of the
        #: session hangs from (the ones a later session may name).
        self.leaves: dict[str, dict[str, str]] = {}

    def header(self, header: Header) -> Header:
        obj = header_to_json(header)
        redacted = {k: (v if k in _HEADER_IDS else self.redactor.value(v)) for k, v in obj.items()}
        return attrs.evolve(header_from_json(redacted), redacted=True)

    def findings(self, findings: Iterable[Finding]) -> list[Finding]:
        """Findings with their text and data redacted (their kind and code kept)."""
        r = self.redactor
        return [
            attrs.evolve(
                f,
                message=r.text(f.message),
                unit=r.text(f.unit) if f.unit else f.unit,
                session=r.text(f.session) if f.session else f.session,
                data=r.value(f.data),
            )
            for f in findings
        ]

    def session(self, session: ConvertedSession) -> ConvertedSession:
        """``session`` redacted: header, entries (lazily, as the writer pulls them), findings.

        The counts of what was replaced are taken with :meth:`Redactor.take_counts` once the
        entries have been consumed.
        """
        self.redactor.learn(session.personal)
        header = self.header(session.header)
        return attrs.evolve(
            session,
            header=header,
            entries=_Redacted(self, header.id, session.entries),
            findings=self.findings(session.findings),
            personal={},
        )

    def entries(self, session_id: str, entries: Iterable[Entry]) -> Iterator[Entry]:
        """The entries redacted and sealed again, in order (one pass)."""
        moved: dict[str, str] = {}
        parents: set[str] = set()
        dropped = 0
        for entry in entries:
            obj = entry_to_json(entry)
            old = obj.pop("id", None)
            parent = obj.get("parent")
            if isinstance(parent, str):  # a damaged file's may be anything: kept as it is
                parents.add(parent)
                obj["parent"] = moved.get(parent, parent)
            if isinstance(obj.get("parents"), list):  # a damaged file's may be anything
                obj["parents"] = [self._ref(ref, moved) for ref in obj["parents"]]
            if obj.pop("request_hash", None) is not None:
                dropped += 1
            for key, value in list(obj.items()):
                if key not in ENVELOPE:
                    obj[key] = self._body(value, moved)
            sealed = seal(entry_from_json(obj))
            if isinstance(old, str) and sealed.id is not None:
                moved[old] = sealed.id
            yield sealed
        self.leaves[session_id] = {k: v for k, v in moved.items() if k not in parents}
        if dropped:
            self.redactor.counts["request_hash_dropped"] += dropped

    def _ref(self, ref: Any, moved: dict[str, str]) -> Any:
        """A ``parents`` reference: its entry moved to its new id, its session id kept, any
        other member redacted."""
        if not isinstance(ref, dict):
            return ref
        entry, other = ref.get("entry"), ref.get("session")
        table = moved if other is None else self.leaves.get(str(other), {})
        rest = {k: v for k, v in ref.items() if k not in _REF_IDS}
        return {
            **{k: ref[k] for k in _REF_IDS if k in ref},
            **self.redactor.value(rest),
            "entry": table.get(entry, entry) if isinstance(entry, str) else entry,
        }

    def _body(self, value: Any, moved: dict[str, str]) -> Any:
        """A body member: strings naming an entry of the session moved, the rest redacted."""
        if isinstance(value, str):
            return moved.get(value) or self.redactor.text(value)
        if isinstance(value, dict):
            return {self.redactor.text(k): self._body(v, moved) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._body(v, moved) for v in value]
        return self.redactor.value(value)


class _Redacted:
    """A session's redacted entries, redacted afresh on each pass (placeholders are stable,
    so each pass gives the same entries): as re-readable as the entries they come from. A
    second pass counts its replacements again; only the host's single pass is reported."""

    def __init__(
        self, redaction: SessionRedaction, session_id: str, entries: Iterable[Entry]
    ) -> None:
        self.redaction, self.session_id, self.source = redaction, session_id, entries

    def __iter__(self) -> Iterator[Entry]:
        return self.redaction.entries(self.session_id, self.source)
