"""Where secrets and personal data are in a text: each finder returns ``(start, end, kind)``.

Keys and tokens are found by the shapes their providers document (fixed prefixes, lengths),
never by entropy alone: session files are full of hashes, ids and base64 images that an
entropy test would destroy. Phone numbers are found by Google's libphonenumber (the
``phonenumbers`` package): a pattern cannot tell a phone number from a date, an id or a
timestamp, libphonenumber checks each candidate against every country's numbering plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

from asf_core.redaction.home_paths import HOME_USER_PATTERNS

__all__ = ["KINDS", "Span", "find_secrets", "home_users", "phone_finder"]

#: A found secret: where it starts and ends in the text, and what kind it is.
Span = tuple[int, int, str]

#: Not in the middle of a word: after no word character, or after an escaped line break or
#: tab (``\\n``: JSON text kept inside a string), but never its letter.
_B = r"(?:(?<![A-Za-z0-9_\\])|(?<=\\[nrt])|(?<=\\)(?![nrt]))"
_E = r"(?![A-Za-z0-9_])"

#: What ``(?i:x)`` matches for the first letter of each case-blind word below: to the engine
#: the long s (U+017F) is an ``s`` and the Kelvin sign (U+212A) a ``k``.
_CASES: Final = {
    "a": "Aa",
    "b": "Bb",
    "c": "Cc",
    "k": "Kk\u212a",
    "p": "Pp",
    "s": "Ss\u017f",
    "t": "Tt",
}


def _case_blind(*words: str) -> str:
    """``(?i:word|word...)`` spelt as an alternation whose every branch opens with a literal
    (``A(?i:pi_key)|a(?i:pi_key)|...``): the engine then scans for the first letters, where
    a case-blind group first makes it try the whole alternation at every place of the text
    (seven times slower for the ``secret`` pattern over a conversation's text). Branches
    keep the words' order, so at any place the same word matches first."""
    return "|".join(f"{case}(?i:{word[1:]})" for word in words for case in _CASES[word[0]])


def _opening(word: str) -> str:
    """One case-blind word that opens a pattern, ``[Bb](?i:earer)``: a class of its first
    letters, which the engine scans for, where ``(?i:bearer)`` is tried at every place."""
    return f"[{_CASES[word[0]]}](?i:{word[1:]})"


#: The run of characters an e-mail address's local part and a URL's scheme are made of, and
#: where each may start: shared by the patterns and by :class:`_RunFinder`.
_EMAIL_RUN = r"[A-Za-z0-9._%+\-]"
_EMAIL_START = _B + _EMAIL_RUN
#: The local part of an address whose ``@`` is percent-encoded (``jane%40example.org`` in a
#: URL's query): no ``%`` in it, so that the run ends where its ``%40`` begins.
_ENCODED_RUN = r"[A-Za-z0-9._+\-]"
_DOMAIN = (
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}"
)
#: Where ``git@host`` is the account every Git host serves SSH as, not an e-mail address: a
#: remote's ``git@host:path`` (scp's syntax: a path right after the colon) and a URL's
#: ``ssh://git@host/path`` (also ``:\/\/``, the slashes escaped in JSON text). In prose,
#: ``mail git@example.org`` or ``git@example.org: ...``, it is one; so is any other user's
#: ``jane@host:path`` (a login, which may be a person's). Tried where the address would
#: start: :class:`_RunFinder` stays exact, since no place after the ``g`` of ``git@`` may
#: start one (they are inside a word).
_GIT_REMOTE = r"(?:(?<=://)|(?<=:\\/\\/))git@|git@" + _DOMAIN + r":[A-Za-z0-9_~/.\-]"
#: From "curl" to a whitespace before one of its options, on curl's own command line: within
#: 400 characters, to a line break (but one a backslash continues) or to ; | & and &&.
_ON_CURL_LINE = _B + r"curl(?:\.exe)?(?=\s)(?:\\\r?\n|(?![;|&]\s|&&)[^\r\n]){0,400}?\s"
#: A cookie's name: an HTTP token (RFC 6265, RFC 9110).
_COOKIE_NAME = r"[!#$%&*+.^_`|~0-9A-Za-z\-]+"
_SCHEME_RUN = r"(?i:[a-z0-9+.\-])"
_SCHEME_START = r"(?i:\b[a-z])"

#: kind -> pattern; a pattern with a group ``s`` redacts that group alone (the key after
#: "Bearer", the password in a URL), else the whole match. A case-blind word opens with its
#: first letter in every case, ``[Bb](?i:earer)`` (:func:`_opening`): the engine scans for a
#: class of letters fast but tries a case-blind one at every place.
_PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    (
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    ("anthropic_key", _B + r"sk-ant-[A-Za-z0-9][A-Za-z0-9_\-]{30,}" + _E),
    ("openai_key", _B + r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9][A-Za-z0-9_\-]{30,}" + _E),
    ("stripe_key", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _E),
    ("stripe_key", _B + r"whsec_[A-Za-z0-9]{24,}" + _E),
    ("aws_access_key", _B + r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}" + _E),
    (
        "aws_secret_key",
        r"(?i:aws.{0,20}?(?:secret|private).{0,20}?)[\"'=:\s]{1,6}"
        # 40 lowercase hex digits are a SHA-1 (a git commit), not a key (base64)
        + r"(?![0-9a-f]{40}(?![A-Za-z0-9/+]))(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    ("github_token", _B + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}" + _E),
    ("github_token", _B + r"github_pat_[A-Za-z0-9_]{22,255}" + _E),
    ("gitlab_token", _B + r"glpat-[A-Za-z0-9_\-]{20,}" + _E),
    ("google_api_key", _B + r"AIza[0-9A-Za-z_\-]{35}" + _E),
    ("google_oauth_token", _B + r"ya29\.[0-9A-Za-z_\-]{20,}" + _E),
    ("slack_token", _B + r"xox[abposre]-[A-Za-z0-9\-]{10,}" + _E),
    # an app-level token: xapp-, its version, the app's id, a number, a secret in hex
    ("slack_token", _B + r"xapp-\d+-[A-Z0-9]+-\d+-[A-Za-z0-9]{20,}" + _E),
    (
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,}",
    ),
    ("huggingface_token", _B + r"hf_[A-Za-z0-9]{30,}" + _E),
    ("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    ("pypi_token", _B + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _E),
    ("sendgrid_key", _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E),
    ("telegram_bot_token", _B + r"\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _E),
    ("jwt", _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _E),
    ("bearer_token", _B + _opening("bearer") + r"\s+(?P<s>[A-Za-z0-9\-._~+/]{16,}=*)"),
    (
        # HTTP Basic credentials, base64 of user:password as RFC 7617 sends them (padded,
        # 8 characters or more), after an Authorization header's name: in a header line, in
        # JSON text, as a call passes them (``"Authorization", "Basic ..."``). Not after
        # "Basic" alone (as a token after "Bearer"): "basic" is an English word, and base64
        # spells every word.
        "basic_auth",
        _B
        + _opening("authorization")
        + r"(?:(?:\\?[\"'])?\s*[:=]|\\?[\"']\s*,)\s*(?:\\?[\"'])?"
        + _opening("basic")
        + r"\s+(?P<s>(?=[A-Za-z0-9+/=]{8})(?:[A-Za-z0-9+/]{4})+"
        r"(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)(?![A-Za-z0-9+/=_\-:])",
    ),
    (
        # The user:password curl sends as Basic credentials (-u, --user; -U, --proxy-user),
        # the whole of it as the header's base64 holds it, or the user alone when the
        # password is empty (an API key: -u KEY:). Only after "curl" on its command line,
        # within 400 characters (to a line break, but one a backslash continues, or to ; |
        # & and &&): docker's -u and others take a uid:gid. A shell variable is no secret
        # ($PASS, ${PASS}, $(cmd)), nor a URL (-u lacking its value).
        "basic_auth",
        _ON_CURL_LINE + r"(?:-[A-Za-z]*[uU]|--(?:proxy-)?user[=\s])\s*(?:\\?[\"'])?"
        r"(?P<s>(?!\$)(?:[^\s:\"'\\]*:(?!\$|//)(?:[^\s\"'\\]|\\(?![\"'nrt]))+"
        r"|[^\s:\"'\\]+(?=:(?:[\s\"'\\]|$))))",
    ),
    (
        # A cookie header's value, as a request sends it (``Cookie: a=b; c=d``) and a response
        # sets it (``Set-Cookie: a=b; Path=/``): in a header line, in JSON text, curl's
        # ``-H``; from its first name=value pair to the end of the line or of the quoted
        # string. It must open with name=value, so prose after "Cookie:" keeps its words.
        "cookie",
        _B
        + _opening("cookie")
        + r"(?:\\?[\"'])?\s*:\s*(?:\\?[\"'])?"
        + r"(?P<s>"
        + _COOKIE_NAME
        + r"=(?:[^\r\n\"'\\]|\\(?![\"'nrt]))*)",
    ),
    (
        # curl's -b/--cookie name=value (not a cookie jar's file name, which has no "="), on
        # curl's own command line as for -u above.
        "cookie",
        _ON_CURL_LINE + r"(?:-b|--cookie)[=\s]\s*(?:\\?[\"'])?"
        r"(?P<s>" + _COOKIE_NAME + r"=(?:[^\s\"'\\;]|;\s?(?=[^\s\"'\\]))*)",
    ),
    (
        "url_password",
        # ``:\/\/``: the slashes escaped in JSON text (PHP's json_encode, a string in a string)
        _SCHEME_START + _SCHEME_RUN + r"*:(?:\\?/){2}[^\s:/@\"'<>]*:(?P<s>[^\s@/\"'<>]+)@",
    ),
    (
        # The name may carry a prefix (DB_PASSWORD, PGPASSWORD, client_secret) and follow an
        # escaped line break (``\npassword=`` in JSON text kept inside a string); its quotes
        # may be escaped (``\"password\": \"...\"``), and an escaped quote or line break ends
        # the value.
        "secret",
        "(?:"
        + _case_blind(
            r"api[_\-]?key",
            r"secret(?:[_\-]?(?:access[_\-]?)?key)?",
            r"access[_\-]?token",
            r"auth[_\-]?token",
            "password",
            "passwd",
        )
        + r")(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
        r"(?P<s>(?:[^\s\"',;&\\]|\\(?![\"'nrt])){8,})",
    ),
    (
        "email",
        _B + f"(?!{_GIT_REMOTE})" + _EMAIL_RUN + _EMAIL_RUN + r"*@" + _DOMAIN + _E,
    ),
    ("email_encoded", _B + _ENCODED_RUN + _ENCODED_RUN + r"*%40" + _DOMAIN + _E),
    *HOME_USER_PATTERNS,
)
#: Patterns reported under another kind's name.
_REPORTED_AS: Final = {"email_encoded": "email"}

#: kind -> (a character of the run, the anchor ending it, where a match may start in it), for
#: the patterns whose matches all start in such a run (see :class:`_RunFinder`).
_RUN_SHAPES: Final[dict[str, tuple[str, str, str]]] = {
    "url_password": (_SCHEME_RUN, ":", _SCHEME_START),
    "email": (_EMAIL_RUN, "@", _EMAIL_START),
    "email_encoded": (_ENCODED_RUN, "%40", _B + _ENCODED_RUN),
    # a bot's id before ":AA": its digits, tried at every digit of a text by the pattern
    "telegram_bot_token": (r"\d", ":AA", _B + r"\d"),
}

_COMPILED: Final = tuple((kind, re.compile(pattern)) for kind, pattern in _PATTERNS)


class _RunFinder:
    """``finditer`` of a pattern whose every match starts in a run of ``run`` characters that
    ends at ``anchor`` (which opens with no such character), in time linear in the text.

    The pattern's own search would try every place in a long run (``a.a.a...``, a line of
    dashes) and read on to the run's end from each: quadratic. But every place of one run
    shares the run's end, and what follows the anchor does not depend on where the match
    started, so the first place ``start`` allows either matches or no place of that run does.
    Here each anchor's run is read once, backwards, and the pattern is tried once, at that
    first place: the matches, and the order, are the pattern's own.
    """

    def __init__(self, pattern: re.Pattern[str], run: str, anchor: str, start: str) -> None:
        self.pattern = pattern
        self.run = re.compile(f"{run}*")  # matched in the reversed text: the run, backwards
        self.anchor = anchor
        self.start = re.compile(start)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        at = text.find(self.anchor)
        if at < 0:
            return
        backwards = text[::-1]
        size, low = len(text), 0
        while at >= 0:
            # The run ends at the anchor and begins no earlier than the last match's end or
            # the last anchor's second character (its first is no run character, the rest may
            # be: the 40 of %40 may open the next local part): each place is read at most
            # twice.
            run = self.run.match(backwards, size - at, size - low)
            assert run is not None  # noqa: S101 - `*` matches everywhere, if only emptily
            begin = at - (run.end() - (size - at))
            first = self.start.search(text, begin, at)
            match = self.pattern.match(text, first.start()) if first is not None else None
            if match is not None:
                yield match
                low = match.end()
                at = text.find(self.anchor, low)
            else:
                low = at + 1
                at = text.find(self.anchor, low)


#: The patterns a run of characters before an anchor would make quadratic, by kind: the
#: e-mail address's local part before ``@``, the URL's scheme before ``://`` (or ``:\/\/``);
#: and a Telegram bot's digits before ``:AA``, which the pattern tried at every digit.
_RUNS: Final[dict[str, _RunFinder]] = {
    kind: _RunFinder(pattern, *_RUN_SHAPES[kind])
    for kind, pattern in _COMPILED
    if kind in _RUN_SHAPES
}

_WORD: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _word_start(text: str, at: int) -> bool:
    """Whether :data:`_B` holds at ``at``: not in the middle of a word, but right after an
    escaped line break or tab (``\\n``), or after another backslash."""
    if at == 0:
        return True
    before = text[at - 1]
    if before == "\\":
        return text[at] not in "nrt"
    if before in _WORD:
        return before in "nrt" and at >= 2 and text[at - 2] == "\\"
    return True


class _WordStartFinder:
    """``finditer`` of a pattern that begins with :data:`_B`, its boundary checked here: the
    rest of the pattern starts with a literal (``sk-ant-``, ``AKIA``) or a class of letters
    (``[Bb]``), which the regular expression engine finds by a fast scan, unless a lookbehind
    or ``\\b`` comes first (then it tries every place: two to five times slower over a
    conversation's text). The matches are the whole pattern's, in its order."""

    def __init__(self, rest: re.Pattern[str]) -> None:
        self.rest = rest

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        search, at = self.rest.search, 0
        while (match := search(text, at)) is not None:
            if _word_start(text, match.start()):
                yield match
                at = match.end() if match.end() > match.start() else match.start() + 1
            else:  # a later place, even inside this match, may still start one
                at = match.start() + 1


def _finditer(kind: str, pattern: re.Pattern[str]) -> Callable[[str], Iterator[re.Match[str]]]:
    if kind in _RUNS:
        return _RUNS[kind].finditer
    if pattern.pattern.startswith(_B):
        return _WordStartFinder(re.compile(pattern.pattern[len(_B) :])).finditer
    return pattern.finditer


#: Each pattern's ``finditer``, in the table's order.
_FINDERS: Final = tuple((kind, pattern, _finditer(kind, pattern)) for kind, pattern in _COMPILED)

#: Every kind the detectors report (``phone`` when phone numbers are looked for).
KINDS: Final[tuple[str, ...]] = (
    *dict.fromkeys(_REPORTED_AS.get(kind, kind) for kind, _ in _PATTERNS),
    "phone",
)

#: Characters one of the patterns needs, to skip most text without running them.
_HINTS = re.compile(
    r"-----BEGIN|sk-|sk_|rk_|whsec_|A[KSBCRI][IBCOD]A|ghp_|gho_|ghu_|ghs_|ghr_"
    r"|github_pat_|glpat-|AIza|ya29\.|x(?:ox|app-)|hooks\.slack|hf_|npm_|pypi-|SG\.|:AA"
    r"|eyJ|://|@|%40|curl|/Users/|/home/|Users\\|-Users-|-home-|"
    + _case_blind("bearer", "key", "secret", "token", "passw", "aws", "authorization", "cookie")
)


def _spans(text: str) -> Iterator[tuple[int, int, Span]]:
    """(start, rank, span) of every match; the rank is the pattern's place in the table."""
    if not _HINTS.search(text):
        return
    for rank, (kind, pattern, finditer) in enumerate(_FINDERS):
        for match in finditer(text):
            start, end = match.span("s") if "s" in pattern.groupindex else match.span()
            if end > start:
                yield (start, rank, (start, end, _REPORTED_AS.get(kind, kind)))


def find_secrets(text: str, phones: Callable[[str], list[Span]] | None = None) -> list[Span]:
    """The secrets in ``text``, earliest first, none overlapping: of two that overlap, the
    one starting first wins, then the one whose pattern comes first in the table (the
    password of ``scheme://user:password@host`` rather than an e-mail address)."""
    found = list(_spans(text))
    if phones is not None:
        found.extend((span[0], len(_COMPILED), span) for span in phones(text))
    found.sort(key=lambda f: (f[0], f[1]))
    kept: list[Span] = []
    for _, _, span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def home_users(text: str) -> list[tuple[int, int]]:
    """Where ``text`` spells a home directory's account name (``home_user``), earliest
    first: what a redacted run leaves out of the names it gives folders."""
    found = [
        match.span("s")
        for kind, _, finditer in _FINDERS
        if kind == "home_user"
        for match in finditer(text)
    ]
    found.sort()
    kept: list[tuple[int, int]] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


_DIGITS = re.compile(r"\d[\d\s().\-/]{5,}\d")
#: Digits, one dot, digits: a decimal number (a duration, the seconds of a timestamp with
#: nanoseconds), which libphonenumber may read as a national number; no one writes a phone
#: number so.
_DECIMAL = re.compile(r"\d+\.\d+")


def phone_finder(regions: tuple[str, ...] = ("US",)) -> Callable[[str], list[Span]] | None:
    """A finder of phone numbers, or None when the ``phonenumbers`` package is missing.

    Numbers written with a ``+`` and country code are found anywhere; national numbers as
    dialled in ``regions``. Only numbers valid in their country's plan count, and never a
    decimal number.
    """
    try:
        import phonenumbers
    except ImportError:
        return None
    leniency: Any = phonenumbers.Leniency.VALID

    def find(text: str) -> list[Span]:
        if not _DIGITS.search(text):
            return []
        spans: dict[tuple[int, int], Span] = {}
        for region in regions:
            for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency):
                if not _DECIMAL.fullmatch(match.raw_string):
                    spans[(match.start, match.end)] = (match.start, match.end, "phone")
        return list(spans.values())

    return find
