"""The secret detectors one shape at a time: every row of the table finds a token of the shape
its provider documents (through the hint filter that skips most text), redacts the part it
should, and leaves ids, hashes and words alone."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asf_core.redaction.detectors import _COMPILED, _RUNS, KINDS, find_secrets, phone_finder

_PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX\n"
    "-----END RSA PRIVATE KEY-----"
)

#: (kind, the text around it, the part that must be found): one or more per table row.
SAMPLES: list[tuple[str, str, str]] = [
    ("private_key", "file:\n{}\nend", _PEM),
    (
        "anthropic_key",
        "value {} set",
        "sk-ant-api03-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
    ),
    ("openai_key", "export {}", "sk-proj-" + "Zq3xW8vB2nM5kL7jH4gF1dS9aP0oI6uY3tR5"),
    ("stripe_key", "value {} ok", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe_key", "value {} ok", "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSfj"),
    ("aws_access_key", "id {} in use", "AKIA" + "IOSFODNN7EXAMPLE"),
    ("aws_secret_key", 'aws_secret_access_key = "{}"', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github_token", "value {} here", "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
    ("github_token", "value {} here", "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop"),
    ("gitlab_token", "value {} here", "glpat-" + "xYz12AbC34dEf56GhI78"),
    ("google_api_key", "value {}.", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("google_oauth_token", "value {} end", "ya29." + "a0AfH6SMBx7Yq2Zr3Ws4Vt5Uu6Ti7Sh8Rg"),
    ("slack_token", "value {} end", "xoxb-" + "2468135790-1357924680-AbCdEfGh"),
    (
        "slack_token",
        "SLACK_APP_TOKEN={} npm start",
        "xapp-1-A0123BCDE45-4567890123456-" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0" * 2,
    ),
    (
        "slack_webhook",
        "post to {} now",
        "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    ("huggingface_token", "value {} end", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    (
        "npm_token",
        "registry value {}",
        "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    ),
    (
        "pypi_token",
        "value {}",
        "pypi-AgE" + "IcHlwaS5vcmcCJDk0ZjQ1YjEzLWI2ZTYtNDVmNy1hMTJiLTA4YzE0MjM2",
    ),
    (
        "sendgrid_key",
        "value {} end",
        "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    ),
    ("telegram_bot_token", "value {} end", "123456789:AA" + "Hdqb0rFRxH5Nc6rp2eqjaGw8PmwUwSq0k"),
    (
        "jwt",
        "value {} end",
        "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("bearer_token", "Authorization: Bearer {}", "tok3n_Xy9Zw8Vu7Ts6Rq5Po4"),
    # ada:S3cr3tPassw0rd in base64
    ("basic_auth", "Authorization: Basic {}", "YWRhOlMzY3IzdFBhc3N3MHJk"),
    ("basic_auth", "curl -sS -u {} https://api.example.org/v1", "ada:S3cr3tPassw0rd"),
    (
        "cookie",
        "curl -H 'Cookie: {}' https://example.org",
        "sessionid=8f1c2e9a7b6d; csrftoken=Zx9Y",
    ),
    ("cookie", '{{"set-cookie": "{}", "n": 1}}', "__cf_bm=Ab3.dE-6; path=/; HttpOnly"),
    ("cookie", "curl -sS -b {} https://example.org/v1", "session=Qm9vbGVhbg"),
    ("url_password", "postgres://ada:{}@db.example.org/main", "S3cr3tPassw0rd"),
    ("secret", "config: api_key={}; next", "q8Zr2Lm4Nt6Vb"),
    ("email", "write to {} today", "ada.lovelace@example.org"),
    # percent-encoded in a URL's query, as it leaked before
    ("email", "GET /users?email={}&page=2", "ada.lovelace%40example.org"),
    ("home_user", '{{"cwd": "/Users/{}/Code/rune"}}', "ada.lovelace"),
    ("home_user", r"type C:\Users\{}\Documents\notes.txt", "Ada Lovelace"),
    ("home_user", "cat ~/.claude/projects/-home-{}-proj/s.jsonl", "ada"),
]


def _samples(kinds: Collection[str]) -> list[Any]:
    """The samples of these kinds as test parameters, named by place and kind."""
    return [pytest.param(*s, id=f"{i}-{s[0]}") for i, s in enumerate(SAMPLES) if s[0] in kinds]


@pytest.mark.parametrize(("kind", "around", "secret"), _samples(KINDS))
def test_each_shape_is_found_and_only_its_secret_part(kind: str, around: str, secret: str) -> None:
    text = around.format(secret)
    start = text.index(secret)
    assert find_secrets(text) == [(start, start + len(secret), kind)]


#: Kinds whose pattern must not start inside a word (an id, a longer name); an e-mail address
#: takes in what is glued before it, a token what follows it (a longer token).
_WORD_BOUNDED = set(KINDS) - {
    "private_key",
    "aws_secret_key",
    "slack_webhook",
    "bearer_token",
    "basic_auth",
    "cookie",
    "url_password",
    "secret",
    "email",
    "phone",
    "home_user",
}


@pytest.mark.parametrize(("kind", "around", "secret"), _samples(_WORD_BOUNDED))
def test_a_shape_inside_a_word_is_not_a_secret(kind: str, around: str, secret: str) -> None:
    assert find_secrets(around.format(f"Q{secret}")) == []


#: Kinds of a fixed length: followed by more of the same characters, it is another token.
_FIXED_LENGTH = {
    "aws_access_key",
    "google_api_key",
    "npm_token",
    "sendgrid_key",
    "telegram_bot_token",
}


@pytest.mark.parametrize(("kind", "around", "secret"), _samples(_FIXED_LENGTH))
def test_a_fixed_length_shape_running_on_is_not_a_secret(
    kind: str, around: str, secret: str
) -> None:
    assert find_secrets(around.format(f"{secret}Q")) == []


def test_the_surroundings_alone_hold_no_secret() -> None:
    for _, around, _ in SAMPLES:
        assert find_secrets(around.format("")) == [], around


def test_every_row_of_the_table_has_a_sample() -> None:
    texts = [around.format(secret) for _, around, secret in SAMPLES]
    for kind, pattern in _COMPILED:
        assert any(pattern.search(t) for t in texts), f"no sample for a {kind} pattern"
    assert {kind for kind, _, _ in SAMPLES} == set(KINDS) - {"phone"}


@pytest.mark.parametrize(
    "text",
    [
        "sha256:9e9a493ff82eb4160aa3a6d34cc14c642b40f46b2881a8e0beb0f6b68600b6d4",
        "session 4537c8a2-63dd-5208-a676-45ea58a4f5e9 resumed",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "the task-runner handles sk-learn models",
        "call_0e3f9a2b7c4d1e8f6a5b; toolu_01SZB3juMsXcXZbHjVubHiga",
        "xsk-ant-api03-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6 glued to a word",
        "npm install xapp-1-cli xapp-server-framework-2024-extensions-v2",
        "Cookie: a recipe with chocolate chips; fortune_cookie: a=b",
        "curl -b cookies.txt https://example.org",
    ],
)
def test_ids_hashes_and_words_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


# --- runs before an anchor: the same matches, in linear time --------------------------------

#: Characters the run-anchored patterns turn on: run characters of both, their anchors, word
#: characters ``_`` and non-ASCII ones that ``\b`` and the case-blind ``[a-z]`` read (U+212A
#: KELVIN SIGN and U+017F LONG S are ``k`` and ``s`` to it), and an escaped line break ``\\n``.
_RUN_ALPHABET = "ab.-+%40_:/@ \u212a\u017fé1\\n"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_RUN_ALPHABET, max_size=40))
def test_run_finders_find_what_the_patterns_find(text: str) -> None:
    for kind, pattern in _COMPILED:
        if kind in _RUNS:
            found = [m.span() for m in _RUNS[kind].finditer(text)]
            assert found == [m.span() for m in pattern.finditer(text)], (kind, text)


#: Pieces of addresses, URLs and Git remotes, for the run finders on whole words: ``git@``
#: where a remote is no address, hosts, the colon and path after them, schemes.
_REMOTE_PIECES = st.sampled_from(
    [
        *("git", "@", "github.com", "e.org", ":", "o/r.git", "~a", "/", "2222"),
        *("ssh", "://", ":\\/\\/", "x", ".", "-", "_", "%40", " ", "\\n", "u:p@"),
    ]
)


#: Pieces of Telegram bot tokens: ids of every length around the pattern's 8 to 10 digits,
#: the ``:AA`` anchor, the secret's alphabet, word characters and escapes before the id.
_BOT_PIECES = st.sampled_from(
    [
        *("1", "1234567", "12345678", "123456789", "0123456789", ":AA", ":A", "A", "_", "-"),
        *("Abc_-Def0" * 3 + "Abc_-D", "Abc_-Def0" * 4, "x", " ", "\\", "\\n", "é"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_BOT_PIECES, max_size=10).map("".join))
def test_the_bot_token_run_finder_finds_what_its_pattern_finds(text: str) -> None:
    """Some texts hold tokens (an id of 8 to 10 digits at a word's start, 33 characters after
    ``:AA``); the run finder, which tries each id once, finds what the pattern finds."""
    pattern = dict(_COMPILED)["telegram_bot_token"]
    found = [m.span() for m in _RUNS["telegram_bot_token"].finditer(text)]
    assert found == [m.span() for m in pattern.finditer(text)], text


@settings(max_examples=400, deadline=None)
@given(st.lists(_REMOTE_PIECES, max_size=12).map("".join))
def test_run_finders_find_what_the_patterns_find_around_git_remotes(text: str) -> None:
    for kind, pattern in _COMPILED:
        if kind in _RUNS:
            found = [m.span() for m in _RUNS[kind].finditer(text)]
            assert found == [m.span() for m in pattern.finditer(text)], (kind, text)


@pytest.mark.parametrize(
    "text",
    [
        "mail ada@example.org, bob.smith+x@mail.example.com and x_y@z.io",
        "postgres://ada:pw1@db.example.org/main then https://bob:pw2@h.example:8080/x",
        "a.b@c.d@e.fg -x@y.com-z@w.org :://u:p@h x://a:b@c://d:e@f",
        "\u212abc://u:p@h \u017f.x@y.zz _a@b.cc ab_c://u:v@w",
        # the 40 of one %40 opens the local part before the next
        "x%40%40%40e.org ab%40%40cd%40e.org%40f.gh",
    ],
)
def test_run_finders_on_addresses_and_urls(text: str) -> None:
    for kind, pattern in _COMPILED:
        if kind in _RUNS:
            assert [m.span() for m in _RUNS[kind].finditer(text)] == [
                m.span() for m in pattern.finditer(text)
            ], kind


class _Counting:
    """A compiled pattern that adds up how much text each call may read: its window, from
    where it starts to its end position (the text's end when none is given)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.read = pattern, 0

    def _count(self, text: str, pos: int, endpos: int | None) -> None:
        self.read += (len(text) if endpos is None else endpos) - pos

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        self._count(text, pos, endpos)
        return self.pattern.match(text, pos, len(text) if endpos is None else endpos)

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        self._count(text, pos, endpos)
        return self.pattern.search(text, pos, len(text) if endpos is None else endpos)


@pytest.mark.parametrize("kind", ["email", "email_encoded", "url_password", "telegram_bot_token"])
@pytest.mark.parametrize(
    "unit",
    [
        *("a.", "-", "ab-", ".", "%", "+a", "a.b@", "a.b://", "a-@", "x-://", "a.@b", "a:"),
        *("a.b:\\/", "a%40", "a.%40b", "%40a.", "a%4", "1", "12:AA", "1:A", "1 :AA"),
    ],
)
def test_a_long_run_is_read_a_bounded_number_of_times(
    kind: str, unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of 20,000 characters, with or without anchors in it: the run finder's windows
    add up to a few times the text (the patterns' own ``finditer`` reads on to the run's end
    from every place in it: about the square of its length)."""
    finder = _RUNS[kind]
    counters = {name: _Counting(getattr(finder, name)) for name in ("run", "start")}
    for name, counter in counters.items():
        monkeypatch.setattr(finder, name, counter)
    text = unit * (20_000 // len(unit)) + " end"
    list(finder.finditer(text))
    assert sum(c.read for c in counters.values()) <= 3 * len(text)


def test_the_secrets_are_looked_for_with_the_run_finders() -> None:
    from asf_core.redaction.detectors import _FINDERS

    used = {kind: finditer for kind, _, finditer in _FINDERS if kind in _RUNS}
    assert used == {kind: finder.finditer for kind, finder in _RUNS.items()}
    assert set(used) == {"email", "email_encoded", "url_password", "telegram_bot_token"}


# --- patterns behind a word boundary: the same matches, found by a fast literal scan -------

#: Word characters, backslashes and the escape letters, and the first characters of shapes
#: (``sk-ant-``, ``AKIA``, ``npm_``, ``eyJ``) with enough of their alphabet to complete some.
_WORD_ALPHABET = st.sampled_from(
    [
        "\\",
        "n",
        "r",
        "t",
        "x",
        "_",
        " ",
        "-",
        ".",
        "sk-ant-",
        "AKIA",
        "npm_",
        "eyJ",
        "ghp_",
        "xapp-1-",
        "A0B1-",
        "Bearer ",
        "bEARER\t",
        "Authorization: ",
        "basic ",
        "YWRh",
        "==",
        "curl ",
        " -u ",
        "a:b",
        "$",
        "\\\n",
        "A1b2C3d4E5f6G7h8I9j0",
        "Zz9",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORD_ALPHABET, max_size=14).map("".join))
def test_word_start_finders_find_what_the_patterns_find(text: str) -> None:
    """Each shape behind the word boundary is searched for without it and the boundary
    checked on each match (five times faster over real text): the matches are the same."""
    from asf_core.redaction.detectors import _B, _FINDERS

    bounded = [(k, p, f) for k, p, f in _FINDERS if p.pattern.startswith(_B) and k not in _RUNS]
    assert len(bounded) >= 15
    for kind, pattern, finditer in bounded:
        assert finditer != pattern.finditer
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in finditer(text)] == expected, (kind, text)


def test_a_case_blind_word_opens_with_every_letter_its_first_letter_matches() -> None:
    """``[Bb](?i:earer)``, spelt so for a fast scan, matches what ``(?i:bearer)`` matches:
    no other character is ``b`` to a case-blind pattern (``s`` would need U+017F LONG S too)."""
    opening = re.compile(r"\[([A-Z])([a-z])\]\(\?i:")
    letters = {m.groups() for _, p in _COMPILED for m in opening.finditer(p.pattern)}
    assert letters
    for upper, lower in letters:
        blind = re.compile(f"(?i:{lower})")
        assert {c for c in map(chr, range(0x110000)) if blind.fullmatch(c)} == {upper, lower}


@pytest.mark.parametrize(
    "text",
    [
        # inside a word: not a key, but the one starting inside it after its dash is
        "xsk-ant-" + "A1b2C3d4E5" * 4 + "-sk-ant-" + "A1b2C3d4E5" * 4,
        "\\nnpm_" + "A1b2C3d4E5f6" * 3 + " \\npm_" + "A1b2C3d4E5f6" * 3,
        "AKIAAKIA" + "IOSFODNN7EXAMPLE" + " _AKIA" + "IOSFODNN7EXAMPLE",
    ],
)
def test_word_start_finders_on_tokens_inside_words_and_after_escapes(text: str) -> None:
    from asf_core.redaction.detectors import _B, _FINDERS

    for kind, pattern, finditer in _FINDERS:
        if pattern.pattern.startswith(_B) and kind not in _RUNS:
            assert [m.span() for m in finditer(text)] == [m.span() for m in pattern.finditer(text)]


# --- a value after its name: names with a prefix, JSON text inside a JSON string -------------


@pytest.mark.parametrize(
    ("around", "value"),
    [
        ("export DB_PASSWORD={} && run", "DbPassw0rdZz"),
        ("PGPASSWORD={} psql", "DbPassw0rdZz"),
        ('{{"client_secret": "{}"}}', "DbPassw0rdZz"),
        ('{{"SecretAccessKey": "{}"}}', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3kLm9Abc"),
        # JSON text inside a JSON string, as tool call arguments are kept: escaped quotes,
        # and an escaped line break right before the name
        ('{{\\"password\\": \\"{}\\"}}', "HunterTwo2024x"),
        ('{{\\"DB_PASSWORD\\": \\"{}\\", \\"x\\": 1}}', "DbPassw0rdZz"),
        ("host=db\\npassword={}\\nport=5432", "HunterTwo2024x"),
    ],
)
def test_a_value_after_its_name_is_found_wherever_the_name_is_spelled(
    around: str, value: str
) -> None:
    text = around.format(value)
    start = text.index(value)
    assert find_secrets(text) == [(start, start + len(value), "secret")]


def test_an_aws_secret_in_json_text_inside_a_json_string() -> None:
    value = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3kLm9Abc"
    text = f'{{\\"aws_secret_access_key\\": \\"{value}\\"}}'
    start = text.index(value)
    assert find_secrets(text) == [(start, start + len(value), "aws_secret_key")]


@pytest.mark.parametrize(("kind", "around", "secret"), _samples(_WORD_BOUNDED | {"email"}))
@pytest.mark.parametrize("escape", ["\\n", "\\r\\n", "\\t"])
def test_a_shape_after_an_escaped_line_break_is_found(
    kind: str, around: str, secret: str, escape: str
) -> None:
    """JSON text kept inside a string (tool call arguments) spells a line break ``\\n``: a
    token starting the next line starts after a letter, yet not inside a word."""
    text = around.format(f"{escape}{secret}")
    start = text.index(secret)
    assert find_secrets(text) == [(start, start + len(secret), kind)]


@pytest.mark.parametrize(
    "around",
    [
        # JSON text kept inside a string: the header on the line after an escaped line break
        '{{\\"headers\\": \\"Accept: */*\\nBearer {}\\"}}',
        "token type\\tbearer {}",
        # glued to a word of a script written without spaces: still a word of its own
        "请求头加上Bearer {}",
    ],
)
def test_a_bearer_token_is_found_after_an_escape_or_any_word(around: str) -> None:
    text = around.format("tok3n_Xy9Zw8Vu7Ts6Rq5Po4")
    start = text.index("tok3n_")
    assert find_secrets(text) == [(start, start + len("tok3n_Xy9Zw8Vu7Ts6Rq5Po4"), "bearer_token")]


# --- git@host: the account Git hosts serve SSH as, or an address ----------------------------


@pytest.mark.parametrize(
    "text",
    [
        "git clone git@github.com:owner/repo.git",
        "remote: git@gitlab.example.org:group/sub/x.git",
        "git@git.sr.ht:~ada/notes",
        "git@ssh.dev.azure.com:v3/org/project/repo",
        "scp-like git@example.org:/srv/git/x.git and git@example.org:x.git",
        "ssh://git@gitlab.example.org/group/x.git",
        "ssh://git@gitlab.example.org:2222/group/x.git",
        '"url": "git+ssh://git@github.com/owner/repo.git"',
        # JSON text: the slashes escaped, a line break escaped before the remote
        '{"url": "ssh:\\/\\/git@github.com\\/owner\\/repo.git"}',
        "origin\\tgit@github.com:owner/repo.git (fetch)\\ngit@github.com:owner/repo.git",
    ],
)
def test_a_git_remote_is_not_an_address(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("mail git@example.org about it", "git@example.org"),
        ("write to git@example.org.", "git@example.org"),
        ("git@example.org: the list", "git@example.org"),
        ("reply-to:git@example.org", "git@example.org"),
        ("From: <git@example.org>", "git@example.org"),
        # another user before a host and a path: a login, which may be a person's
        ("scp notes jane.doe@build.example.org:/tmp/", "jane.doe@build.example.org"),
        ("ssh://jane@build.example.org/srv", "jane@build.example.org"),
        # a longer user that ends in git
        ("push to mygit@example.org:x.git", "mygit@example.org"),
        ("push to my.git@example.org:x.git", "my.git@example.org"),
    ],
)
def test_git_at_a_host_in_prose_is_an_address(text: str, address: str) -> None:
    start = text.index(address)
    assert find_secrets(text) == [(start, start + len(address), "email")]


# --- HTTP Basic credentials: after an Authorization header's name, or curl's -u ---------------

#: ada:S3cr3tPassw0rd in base64
_BASIC = "YWRhOlMzY3IzdFBhc3N3MHJk"


@pytest.mark.parametrize(
    "around",
    [
        "authorization: basic {}",  # HTTP/2 spells header names in lower case
        "AUTHORIZATION=BASIC {}",
        '{{"Authorization": "Basic {}"}}',
        "{{'authorization':'Basic {}'}}",
        '{{\\"Authorization\\": \\"Basic {}\\"}}',
        "curl -H 'Authorization: Basic {}' https://api.example.org",
        'curl --header "Authorization: Basic {}" https://api.example.org',
        'req.Header.Set("Authorization", "Basic {}")',
        "Proxy-Authorization: Basic {}\r\n",
        # a raw request in JSON text kept inside a string: the header after \r\n
        "GET / HTTP/1.1\\r\\nHost: api\\r\\nAuthorization: Basic {}\\r\\n",
        "Authorization: Basic {}.",
    ],
)
def test_basic_credentials_after_an_authorization_header_are_found(around: str) -> None:
    text = around.format(_BASIC)
    start = text.index(_BASIC)
    assert find_secrets(text) == [(start, start + len(_BASIC), "basic_auth")]


@pytest.mark.parametrize("credentials", ["YWRhOnB3", "YWRhOnB3ZA==", "YWRhOnB3ZDE="])
def test_basic_credentials_are_base64_padded_to_fours(credentials: str) -> None:
    text = f"Authorization: Basic {credentials}"
    assert find_secrets(text) == [(21, 21 + len(credentials), "basic_auth")]


@pytest.mark.parametrize(
    "text",
    [
        # words: "Basic" is one, and base64 spells any other; only a padded multiple of four
        # characters, eight or more, is taken for credentials
        "Authorization: Basic authentication with a user name and a password",
        "Authorization: Basic username:password",
        "Authorization: Basic <credentials>",
        "Authorization: Basic $(printf ada:pw | base64)",
        "authorization, basic settings and roles",
        "Authorization: Basic YWRh",
        "Authorization: Basic YWRhOlMzY3IzdFBhc3N3MHJkMQ",  # not padded
        # no Authorization header: "Basic" and base64 alone are too common to redact
        f"Basic {_BASIC}",
        'WWW-Authenticate: Basic realm="api"',
    ],
)
def test_words_after_basic_are_not_credentials(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("around", "credentials"),
    [
        ("curl -u {} https://api.example.org", "ada:S3cr3t"),
        ("curl -sSu '{}' https://api.example.org", "ada:S3cr3t"),
        ('curl --user "{}" https://api.example.org', "ada:S3cr3t"),
        ("curl --user={} https://api.example.org", "ada:S3cr3t"),
        ("curl -u{} https://api.example.org", "ada:S3cr3t"),
        ("/usr/bin/curl -U {} -x proxy:3128 https://api.example.org", "ada:S3cr3t"),
        ("curl.exe --proxy-user {} https://api.example.org", "ada:S3cr3t"),
        # an ampersand in the URL, the option far from "curl", a line a backslash continues
        ("curl 'https://api.example.org/?a=1&b=2' -X POST -d @body.json -u {}", "ada:S3cr3t"),
        ("curl -X POST https://api.example.org \\\n  -H 'Accept: */*' \\\n  -u {}", "ada:S3cr3t"),
        ('{{"command": "cd /srv\\ncurl -u {} https://api.example.org"}}', "ada:S3cr3t"),
        # the password may hold a colon; an API key as the user, the password empty
        ("curl -u {} https://api.example.org", "ada:pa:ss"),
        ("curl -u {}: https://api.example.org", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
        ('curl -u "{}:" https://api.example.org', "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    ],
)
def test_curl_user_credentials_are_found(around: str, credentials: str) -> None:
    text = around.format(credentials)
    start = text.index(credentials)
    assert find_secrets(text) == [(start, start + len(credentials), "basic_auth")]


@pytest.mark.parametrize(
    "text",
    [
        # uid:gid, user:group of other commands, on a command line of their own
        "docker run -u 1000:1000 image",
        "curl -fsS https://api.example.org && docker exec -u root:root app ls",
        "curl -fsS https://api.example.org; docker exec -u root:root app ls",
        "curl -fsS https://api.example.org | sudo -u postgres:x psql",
        "curl -fsS https://api.example.org\ndocker exec -u root:root app ls",
        # shell variables, no password, no value, a word ending in curl
        'curl -u "$API_USER:$API_PASSWORD" https://api.example.org',
        'curl -u "ada:${API_PASSWORD}" https://api.example.org',
        "curl -u $(cat creds) https://api.example.org",
        "curl -u ada https://api.example.org",
        "curl --negotiate -u : https://api.example.org",
        "curl -u https://api.example.org",
        "libcurl -u ada:S3cr3t",
        "curl --user-agent ada:S3cr3t https://api.example.org",
    ],
)
def test_what_curl_does_not_send_as_credentials_is_left_alone(text: str) -> None:
    assert find_secrets(text) == []


def test_the_same_credentials_in_a_header_and_after_u_are_two_values() -> None:
    """The header's base64 and curl's plain user:password are different text: each gets a
    placeholder of its own (the base64 is not decoded)."""
    text = f"curl -u ada:S3cr3tPassw0rd -H 'Authorization: Basic {_BASIC}' https://x.example"
    kinds = [kind for _, _, kind in find_secrets(text)]
    assert kinds == ["basic_auth", "basic_auth"]


@pytest.mark.parametrize(
    "around",
    ["redis://:{}@cache.internal:6379/0", "REDIS_URL=rediss://:{}@10.0.0.7:6380"],
)
def test_a_url_password_without_a_user_name_is_found(around: str) -> None:
    text = around.format("S3cr3tPassw0rd")
    start = text.index("S3cr3tPassw0rd")
    assert find_secrets(text) == [(start, start + len("S3cr3tPassw0rd"), "url_password")]


def test_a_url_password_behind_escaped_slashes_is_found() -> None:
    """JSON that escapes ``/`` (PHP's ``json_encode``, JSON text kept inside a string) spells
    a URL ``postgres:\\/\\/user:password@host\\/db``: still a URL with a password."""
    text = '{"dsn": "postgres:\\/\\/ada:S3cr3tPassw0rd@localhost:5432\\/main"}'
    start = text.index("S3cr3tPassw0rd")
    assert find_secrets(text) == [(start, start + len("S3cr3tPassw0rd"), "url_password")]


# --- phone numbers: libphonenumber's, less the decimal numbers ------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "elapsed: 27.29327182",
        '"created_at":"2026-02-10T22:40:13.297848579+01:00"',
        "lat 17.723950503 ok",
    ],
)
def test_a_decimal_number_is_not_a_phone_number(text: str) -> None:
    """A duration or the seconds of a timestamp with nanoseconds: digits, one dot, digits. It
    may read as a valid national number, but redacting it destroys the data."""
    phones = phone_finder()
    assert phones is not None
    assert find_secrets(text, phones) == []


@pytest.mark.parametrize(
    "number", ["+44 20 7946 0958", "+1 650.253.0000", "650.253.0000", "+16502530000"]
)
def test_phone_numbers_are_found(number: str) -> None:
    phones = phone_finder()
    assert phones is not None
    text = f"call {number} today"
    start = text.index(number)
    assert find_secrets(text, phones) == [(start, start + len(number), "phone")]


@pytest.mark.parametrize(
    "text",
    [
        "aws-secret-rotation 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "AWS private key fingerprint: 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    ],
)
def test_a_git_hash_after_an_aws_secret_name_is_not_a_key(text: str) -> None:
    """40 lowercase hex digits are a SHA-1 (a git commit); an AWS secret key is base64."""
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        # after a backslash that escapes no line break: a Windows account, an escaped one
        ("logged in as CORP\\jane.doe@example.org", "jane.doe@example.org"),
        ('"user": "CORP\\\\jane.doe@example.org"', "jane.doe@example.org"),
        # percent-encoded: the address only, not the encoded text before it
        ("open mailto%3Ajane%40example.org now", "jane%40example.org"),
    ],
)
def test_an_address_after_a_backslash_or_an_escape_is_found_alone(text: str, address: str) -> None:
    [(start, end, kind)] = find_secrets(text)
    assert kind == "email"
    assert text[start:end].endswith(address)
    assert "\\" not in text[start:end]
    assert "mailto" not in text[start:end]


# --- case-blind words spelt for a fast scan ------------------------------------------------

#: The spellings the detectors had before ``_case_blind``: one case-blind group each.
_VALUE_AFTER_NAME_BEFORE = (
    r"(?i:(?:api[_\-]?key|secret(?:[_\-]?(?:access[_\-]?)?key)?|access[_\-]?token"
    r"|auth[_\-]?token|password|passwd))(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
    r"(?P<s>(?:[^\s\"',;&\\]|\\(?![\"'nrt])){8,})"
)
_HINTS_BEFORE = (
    r"-----BEGIN|sk-|sk_|rk_|whsec_|A[KSBCRI][IBCOD]A|ghp_|gho_|ghu_|ghs_|ghr_"
    r"|github_pat_|glpat-|AIza|ya29\.|x(?:ox|app-)|hooks\.slack|hf_|npm_|pypi-|SG\.|:AA"
    r"|eyJ|(?i:bearer)|://|@|%40|(?i:key|secret|token|passw)|(?i:aws|authorization)|curl"
)


def test_each_first_letter_is_spelt_in_every_case_the_engine_gives_it() -> None:
    """``_CASES`` lists every character ``(?i:x)`` matches for each first letter (all of them
    in the BMP): U+017F LONG S for ``s``, the Kelvin sign for ``k``."""
    from asf_core.redaction.detectors import _CASES

    for letter, cases in _CASES.items():
        blind = re.compile(f"(?i:{letter})")
        assert {c for c in map(chr, range(0x10000)) if blind.fullmatch(c)} == set(cases)


_BLIND_ALPHABET = st.sampled_from(
    [
        *"aAsSpPkKtTbB_-=:\"' \\x1@",
        "\u017f", "\u212a", "\u0130", "\u0131", "sk-", "eyJ", "curl",
        "pi_key", "PI-KEY", "ecret", "ECRET_ACCESS_KEY", "ccess_token", "uth-token",
        "assword", "ASSWD", "earer", "oken", "ws", "uthorization", "ey", "Hunter2024xyz",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_BLIND_ALPHABET, max_size=12).map("".join))
def test_case_blind_words_match_as_their_one_group_spelling_did(text: str) -> None:
    """The ``secret`` pattern and the hint filter, spelt with a literal opening each branch
    (six and two times faster over a conversation's text), find what the case-blind groups
    found: the same values at the same places, the same texts passed on."""
    from asf_core.redaction.detectors import _HINTS

    now = dict(_COMPILED)["secret"]
    before = re.compile(_VALUE_AFTER_NAME_BEFORE)
    assert [m.span("s") for m in now.finditer(text)] == [m.span("s") for m in before.finditer(text)]
    assert bool(_HINTS.search(text)) == bool(re.search(_HINTS_BEFORE, text))


# --- account names in home directories' paths ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("/Users/ada/Code/x", "ada"),
        ("cd /home/bob.smith/proj.", "bob.smith"),  # the sentence's dot is not the name's
        ("open file:///Users/ada/notes.md", "ada"),
        ("/var/home/carol/.config", "carol"),  # Fedora Silverblue
        ("/mnt/c/Users/dave/x", "dave"),  # WSL
        ('"cwd":"/home/erin"', "erin"),
        ("/Users/ivan_k-9/", "ivan_k-9"),
        (r"C:\Users\Ada Lovelace\Documents", "Ada Lovelace"),
        (r"path C:\Users\Ada is here", "Ada"),  # a space ends it where no backslash follows
        (r"{\"cwd\": \"C:\\Users\\eve\\x\"}", "eve"),  # JSON text in a string
        ("D:/Users/frank/x", "frank"),
        ("~/.claude/projects/-Users-gina-proj/s.jsonl", "gina"),
        ("C--Users-hank-proj", "hank"),
        ("/home/josé/x", "josé"),
        ("the notes are in /home/ada.", "ada"),  # the sentence's dot ends the name
        ("/Users/Guest-2/x", "Guest-2"),  # not Guest's folder
        ("/home/Publicist", "Publicist"),  # nor Public's
        (r"C:\Users\ada.lovelace\x", "ada.lovelace"),
        (r"c:\Users\ada\x", "ada"),  # a drive letter in lower case
        (r"C:\Users\Ada King Lovelace\Documents", "Ada King Lovelace"),
        (r"see C:\Users\ada.", "ada"),
        (r"C:\Users\ada, C:\Temp", "ada"),
        (r"(C:\Users\ada)", "ada"),
        (r"'C:\Users\ada'", "ada"),
        (r'"C:\Users\ada"', "ada"),
        (r"[C:\Users\ada]", "ada"),
        (r"{C:\Users\ada}", "ada"),
        ("-Users-ada2-proj", "ada2"),
    ],
)
def test_a_home_directory_names_its_account(text: str, name: str) -> None:
    start = text.index(name)
    assert find_secrets(text) == [(start, start + len(name), "home_user")]


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/home/about",  # a page of a site, after its host
        "see docs/home/index.md and my.home/x",
        "/Users/Shared/build",  # no one's: macOS's and Windows' common folders
        r"C:\Users\Public\Desktop and C:\Users\Default User\x and C:\Users\All Users",
        "/home/$USER/x and /home/${USER} and /home/*/x and /home/",
        "pass --home-dir /srv and take-home-pay",
        r"XC:\Users\x",  # no drive letter: a longer word before the colon
        "XC--Users-x",  # nor in Claude Code's spelling of it
        "/Users/Guest/x and C:\\Users\\Default\\x",
        "./home/index.html",  # a folder of the working directory's
        "/home/.snapshots/x",  # a name starts with a letter or digit
    ],
)
def test_paths_that_name_no_account_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


def test_home_users_are_where_find_secrets_finds_them() -> None:
    from asf_core.redaction.detectors import home_users

    text = "mail ada@example.org from /home/ada/x, C--Users-bob-p and /Users/carol"
    spans = [(a, b) for a, b, kind in find_secrets(text) if kind == "home_user"]
    assert home_users(text) == spans
    assert [text[a:b] for a, b in spans] == ["ada", "bob", "carol"]
