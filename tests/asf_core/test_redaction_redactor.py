"""The :class:`Redactor`'s own rules for personal values and ids (asf_core/redaction/redactor.py):
whole words only, the longest value first, short values only as whole strings, numbers too,
member names too, ids left alone but not what follows them, kinds spelled as placeholders."""

from __future__ import annotations

from typing import Any

import pytest

import asf_core.redaction.redactor as redactor_module
from asf_core.redaction import MissingDetector, Redactor, placeholder_pattern

SESSION = "01995b2a-0000-7000-8000-000000000009"
EMAIL = "ada.lovelace@example.org"


def _redactor() -> Redactor:
    r = Redactor(phones=False)
    r.learn({"display_name": ["Ada", "Ada Lovelace"], "chat_id": ["42", "4471", "  "]})
    return r


def test_the_longest_personal_value_is_replaced_whole() -> None:
    r = _redactor()
    out = r.text("Hi Ada Lovelace, and Ada")
    assert "Lovelace" not in out
    assert placeholder_pattern().sub("P", out) == "Hi P, and P"
    assert out.count("[REDACTED:display_name:") == 2
    assert len(set(placeholder_pattern().findall(out))) == 2  # two values, two placeholders


def test_personal_values_inside_text_are_whole_words_only() -> None:
    r = _redactor()
    assert r.text("Canada and Adam") == "Canada and Adam"
    assert r.text("call 4471 now") != "call 4471 now"
    assert r.text("call x4471 now") == "call x4471 now"


def test_a_short_value_is_replaced_only_as_a_whole_string() -> None:
    """ "42" in a text is more often a number than a chat."""
    r = _redactor()
    assert r.text("room 42") == "room 42"
    assert placeholder_pattern().fullmatch(r.text("42"))


def test_a_blank_value_names_nothing() -> None:
    r = _redactor()
    assert r.text("  ") == "  "
    assert r.take_counts() == {}


def test_numbers_and_member_names_are_redacted_too() -> None:
    r = _redactor()
    value = r.value({EMAIL: 4471, "n": 7})
    assert value == {"[REDACTED:email:1]": r.text("4471"), "n": 7}
    assert placeholder_pattern().fullmatch(value["[REDACTED:email:1]"])


def test_an_id_is_left_alone_but_only_when_it_is_the_whole_string() -> None:
    r = _redactor()
    assert r.text(SESSION) == SESSION
    assert r.text(f"{SESSION} mail {EMAIL}") == f"{SESSION} mail [REDACTED:email:1]"


def test_a_kind_is_spelled_as_a_placeholder_spells_it() -> None:
    r = Redactor(phones=False)
    r.learn({"User ID": ["u-77821-ada"]})
    assert r.text("u-77821-ada") == "[REDACTED:user_id:1]"


def test_a_value_found_as_two_kinds_gets_one_placeholder() -> None:
    """The same password as a URL's and after ``PGPASSWORD=``: one value, one placeholder,
    counted under the kind it was first met as."""
    r = Redactor(phones=False)
    out = r.text("postgres://ada:Sup3rS3cretPw@db.example.org/main PGPASSWORD=Sup3rS3cretPw")
    assert out.count("[REDACTED:url_password:1]") == 2
    assert r.take_counts() == {"url_password": 2}


def test_a_value_nested_as_deep_as_a_file_may_is_redacted_in_the_order_met() -> None:
    """An ASF line may nest 512 levels: redacting one nested 510 deep (a sub-agent's
    ``.meta.json`` kept in its header) was a RecursionError traceback from ``show --redact``,
    ``export --redact`` and ``convert --redact``. Placeholders are numbered as values are met,
    names before their values, depth first."""
    from asf_core.canonical import MAX_DEPTH

    deep: Any = {"mail": EMAIL}
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    out = _redactor().value({"b@example.org": deep})
    inner = out["[REDACTED:email:1]"]
    for _ in range(MAX_DEPTH - 1):
        (inner,) = inner
    assert inner == {"mail": "[REDACTED:email:2]"}

    value = {"x": [EMAIL, {"c@example.org": 4471}], "Ada": ("d@example.org", "Ada Lovelace")}
    assert _redactor().value(value) == {
        "x": ["[REDACTED:email:1]", {"[REDACTED:email:2]": "[REDACTED:chat_id:1]"}],
        "[REDACTED:display_name:1]": ["[REDACTED:email:3]", "[REDACTED:display_name:2]"],
    }


def test_a_secret_before_a_personal_value_is_replaced_too() -> None:
    """Personal values and secrets are found apart and replaced in the order they stand: a key
    earlier in the text than a name is not skipped as if inside the name's replacement."""
    r = _redactor()
    key = "sk-ant-" + "a1B2" * 10
    out = r.text(f"key {key} from Ada Lovelace")
    assert key not in out
    assert "Lovelace" not in out
    assert placeholder_pattern().sub("P", out) == "key P from P"


def test_phones_without_their_detector_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking for phone numbers without the phonenumbers package raises rather than giving a
    redaction that silently leaves every phone number in; not asking for them works."""
    monkeypatch.setattr(redactor_module, "phone_finder", lambda: None)
    with pytest.raises(MissingDetector, match="phonenumbers"):
        Redactor(phones=True)
    assert Redactor(phones=False).text(EMAIL) == "[REDACTED:email:1]"
