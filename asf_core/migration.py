"""Reading a pre-0.5 file: its opaque ids become the hash ids of draft 0.5 and later.

Draft 0.11's section on versioning: each ``ts`` is respelled, the old id is kept as
``legacy_id`` in the body, every entry-naming member is rewritten to the new ids, and ids are
computed in file order. What cannot be rewritten is kept as written and reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from asf_core import ids
from asf_core.findings import WARNING, shown
from asf_core.model import CORE_TYPES

__all__ = ["Migration"]

#: Members of core entries that name another entry of the file (rewritten by migration).
_NAMING: Final[dict[str, tuple[str, ...]]] = {
    "dispatch": ("target",),
    "decision": ("target",),
    "label": ("target",),
    "outcome": ("target",),
    "link": ("target",),
    "compaction": ("first_kept",),
    "branch_summary": ("from",),
    "item": ("queued_from",),
}

#: How the reader records a problem: ``(code, message, line, entry, kind)``.
Report = Callable[..., None]


class Migration:
    """The legacy-to-new id map of one file, built line by line as the reader goes."""

    def __init__(self, session: str, report: Report) -> None:
        self.session = session
        self.report = report
        #: Each old id, by the new id computed for its entry.
        self.legacy: dict[str, str] = {}

    def migrate(self, n: int, obj: dict[str, Any], hashable: bool) -> str | None:
        """Rewrite a pre-0.5 line in place into its 0.5 form; return its new id."""
        old = obj.pop("id", None)
        if old is None:
            self.report("missing-id", "entry has no id", n)
        elif not isinstance(old, str):
            self.report("bad-id", f"id {shown(old)} is not a string", n)
            old = None
        elif old in self.legacy:
            self.report("duplicate-id", f"id {shown(old)} repeats; the first is kept", n, old)
            return None
        ts = obj.get("ts")
        if isinstance(ts, str):
            try:
                obj["ts"] = ids.migrate_ts(ts)
            except ids.IdError as exc:
                self.report("migration", f"{exc}; kept as written", n, kind=WARNING)
        if old is not None:
            was = obj.get("legacy_id", old)
            if was != old:
                self.report(
                    "migration", f"legacy_id {shown(was)} replaced by the id", n, old, WARNING
                )
            obj["legacy_id"] = old
        parent = obj.get("parent")
        if isinstance(parent, str) and parent in self.legacy:
            obj["parent"] = self.legacy[parent]
        refs = obj.get("parents")
        if isinstance(refs, list):
            obj["parents"] = [self._ref(n, ref) for ref in refs]
        kind = obj.get("type")
        for member in _NAMING.get(kind, ()) if isinstance(kind, str) else ():
            value = obj.get(member)
            if isinstance(value, str):
                if value in self.legacy:
                    obj[member] = self.legacy[value]
                else:
                    self.report(
                        "migration",
                        f"{member} {shown(value)} names no earlier entry; kept as written",
                        n,
                        old,
                        WARNING,
                    )
        if not (isinstance(kind, str) and kind in CORE_TYPES):
            for member, value in obj.items():
                if member not in ids.ENVELOPE and isinstance(value, str) and value in self.legacy:
                    self.report(
                        "migration",
                        f"extension member {shown(member)} may name entry {shown(value)}; "
                        "kept as written",
                        n,
                        old,
                        WARNING,
                    )
        try:
            new = ids.entry_id(obj)
        except ids.IdError as exc:
            if hashable:
                self.report("bad-entry", str(exc), n, old)
            return None
        if old is not None:
            self.legacy[old] = new
        obj["id"] = new
        return new

    def _ref(self, n: int, ref: Any) -> Any:
        if not isinstance(ref, dict) or not isinstance(ref.get("entry"), str):
            return ref
        session = ref.get("session")
        if session is not None and session != self.session:
            self.report(
                "migration",
                f"parents reference {shown(ref['entry'])} into session {shown(session)} "
                "kept as written",
                n,
                kind=WARNING,
            )
            return ref
        mapped = self.legacy.get(ref["entry"])
        return ref if mapped is None else {**ref, "entry": mapped}
