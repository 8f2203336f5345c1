"""Replacing secrets with stable placeholders: the same value, the same placeholder, all run.

A :class:`Redactor` replaces what the detectors find and the *personal* values plugins name
(a user id, a chat id: values only the source knows are personal) with ``[REDACTED:<kind>:<n>]``,
``n`` counting the distinct values of that kind in the order they are first met. It counts
what it replaced, by kind, for the report; values are never kept anywhere but in its memory.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from asf_core.redaction.detectors import Span, find_secrets, phone_finder
from asf_core.redaction.home_paths import GENERIC_ACCOUNTS

__all__ = ["MissingDetector", "Redactor", "placeholder_pattern"]

#: Strings left alone: entry ids and content hashes, session UUIDs (no secret has these
#: shapes, and a redacted id would break the file).
_IDENTIFIERS: Final = re.compile(
    r"sha256:[0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
#: The kind of personal value found in any case: a home directory's account name.
_ANY_CASE: Final = "home_user"
#: A personal value shorter than this is replaced only where it is a whole string: "42"
#: inside a text is more often a number than a chat.
_MIN_INSIDE = 3


def placeholder_pattern() -> re.Pattern[str]:
    """What a placeholder looks like (for tests and readers of redacted files)."""
    return re.compile(r"\[REDACTED:[a-z0-9_]+:\d+\]")


class MissingDetector(Exception):
    """Redaction was asked for but a detector it needs is not installed."""


class Redactor:
    """Finds and replaces secrets in text and JSON values, keeping placeholders stable.

    ``phones`` looks for phone numbers (which needs the ``phonenumbers`` package: without
    it, :class:`MissingDetector` is raised rather than a redaction that silently misses
    them).
    """

    def __init__(self, *, phones: bool = True) -> None:
        self._phones = phone_finder() if phones else None
        if phones and self._phones is None:
            raise MissingDetector(
                "redacting phone numbers needs the phonenumbers package: "
                "pip install 'asf-sessions[redact]'"
            )
        #: value -> (its kind, its placeholder): a value found again as another kind (a
        #: URL's password after ``password=``) keeps the placeholder it was given first.
        self._placeholders: dict[str, tuple[str, str]] = {}
        self._numbers: Counter[str] = Counter()
        self._personal: dict[str, str] = {}
        #: The account names of home directories, by their case-folded spelling: an
        #: account is one name in any case (Windows' and macOS' file systems ignore case;
        #: ``C:\Users\Ada`` shows as ``ada`` in a package or an address), so it is
        #: found in any case, under the placeholder of the spelling learnt first.
        self._anycase: dict[str, str] = {}
        self._personal_re: re.Pattern[str] | None = None
        #: What was replaced since :meth:`take_counts`, by kind.
        self.counts: Counter[str] = Counter()

    # -- personal values -------------------------------------------------------------

    def learn(self, personal: Mapping[str, Iterable[str]]) -> None:
        """Add values a plugin says name people or accounts (kind -> values)."""
        added = False
        for kind, values in personal.items():
            for value in values:
                text = str(value)
                if text.strip() and text not in self._personal:
                    self._personal[text] = _kind(kind)
                    if self._personal[text] == _ANY_CASE:
                        self._anycase.setdefault(text.casefold(), text)
                    added = True
        if added:
            inside = sorted((v for v in self._personal if len(v) >= _MIN_INSIDE), key=len)
            alternatives = "|".join(
                f"(?i:{re.escape(v)})" if self._personal[v] == _ANY_CASE else re.escape(v)
                for v in reversed(inside)
            )
            self._personal_re = (
                re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")
                if alternatives
                else None
            )

    # -- replacing -------------------------------------------------------------------

    def placeholder(self, kind: str, value: str) -> str:
        """The placeholder of a value (a new one of ``kind`` the first time it is met, of
        whatever kind it was met as first after that), counted under its kind."""
        found = self._placeholders.get(value)
        if found is None:
            self._numbers[kind] += 1
            found = self._placeholders[value] = (kind, f"[REDACTED:{kind}:{self._numbers[kind]}]")
        self.counts[found[0]] += 1
        return found[1]

    def text(self, text: str) -> str:
        """``text`` with every secret and personal value replaced."""
        if not text or _IDENTIFIERS.fullmatch(text):
            return text
        whole = self._personal.get(text)
        if whole is not None:
            return self.placeholder(whole, text)
        if self._anycase and text.casefold() in self._anycase:
            return self.placeholder(_ANY_CASE, self._anycase[text.casefold()])
        secrets = find_secrets(text, self._phones)
        if secrets:
            self._learn_accounts(text, secrets)
        spans = self._personal_spans(text) + secrets
        if not spans:
            return text
        # At one place the longer wins (an e-mail address over the account name it opens
        # with: the name alone would leave the rest of the address); of two alike, the
        # personal value (the sort is stable).
        spans.sort(key=lambda s: (s[0], s[0] - s[1]))
        out: list[str] = []
        at = 0
        for start, end, kind in spans:
            if start < at:
                continue  # inside one replaced already
            out.append(text[at:start])
            value = text[start:end]
            if kind == _ANY_CASE:  # one account, one placeholder, in whatever case
                value = self._anycase.get(value.casefold(), value)
            out.append(self.placeholder(kind, value))
            at = end
        out.append(text[at:])
        return "".join(out)

    def _learn_accounts(self, text: str, secrets: list[Span]) -> None:
        """An account name found in a home directory's path names its person wherever else
        it stands as a word (``ls -l``'s owner, a shell prompt's ``ada@host``), from this
        text on; but not a generic account's (``ubuntu``, ``runner``), a common word too."""
        names = set()
        for start, end, kind in secrets:
            folded = text[start:end].casefold()
            # An account known in another case is already found in any case.
            if kind == _ANY_CASE and folded not in self._anycase and folded not in GENERIC_ACCOUNTS:
                names.add(text[start:end])
        if names:
            self.learn({_ANY_CASE: sorted(names)})

    def _personal_spans(self, text: str) -> list[Span]:
        if self._personal_re is None:
            return []
        return [
            (m.start(), m.end(), self._personal.get(m.group(), _ANY_CASE))
            for m in self._personal_re.finditer(text)
        ]

    def value(self, value: Any) -> Any:
        """A JSON value with every string redacted (member names too); a number equal to a
        personal value becomes its placeholder. Walked without recursion, in the order a
        recursive walk takes (placeholders are numbered as values are met): a file may nest
        as deep as the format allows, twice what Python's stack took this way."""
        if not isinstance(value, dict | list | tuple):
            return self._scalar(value)
        root: Any = {} if isinstance(value, dict) else []
        stack: list[tuple[Any, Iterator[tuple[str | None, Any]]]] = [(root, self._members(value))]
        while stack:
            out, members = stack[-1]
            member = next(members, None)
            if member is None:
                stack.pop()
                continue
            key, item = member
            if isinstance(item, dict | list | tuple):
                inner: Any = {} if isinstance(item, dict) else []
                stack.append((inner, self._members(item)))
                item = inner
            else:
                item = self._scalar(item)
            if isinstance(out, dict):
                out[key] = item
            else:
                out.append(item)
        return root

    def _members(self, value: Any) -> Iterator[tuple[str | None, Any]]:
        """A container's members as (redacted name, or None in a list; value), one at a
        time: a name is redacted when it is reached, before its value."""
        if isinstance(value, dict):
            for name, item in value.items():
                yield self.text(name), item
        else:
            for item in value:
                yield None, item

    def _scalar(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            kind = self._personal.get(str(value))
            if kind is not None:
                return self.placeholder(kind, str(value))
        return value

    def take_counts(self) -> dict[str, int]:
        """What was replaced since the last call, by kind; the count starts again."""
        counts = dict(sorted(self.counts.items()))
        self.counts.clear()
        return counts


def _kind(name: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_") or "personal"
