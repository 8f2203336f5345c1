"""``--redact`` on a real Hermes database written by Hermes' own ``SessionDB``, with a secret of
every kind planted in messages, tool calls, tool outputs, reasoning, the system prompt, a title
and the identity columns: none survives in any output byte (files, report, stdout), the files
verify, and the report counts exactly what was planted, by kind."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asf_core.cli.main import ExitCode, main
from asf_core.reader import parse_session, read_session
from asf_core.redaction import placeholder_pattern
from asf_core.verify.session import verify_path

hermes_state = pytest.importorskip("hermes_state")

PEM = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7xq\n"
    "-----END PRIVATE KEY-----"
)
ORIGIN = json.dumps(
    {"platform": "telegram", "user_name": "ada_l_1815", "chat_name": "Analytical Engine Club"}
)
#: Every planted value and the kind the report names it by.
PLANTED: dict[str, str] = {
    "sk-proj-Zq3xW8vB2nM5kL7jH4gF1dS9aP0oI6uY3tR5eW2qA8zX": "openai_key",
    "sk-ant-api03-Qw9Er8Ty7Ui6Op5As4Df3Gh2Jk1Lz0Xc9Vb8Nm7Qw6Er5Ty4Ui3Op2As1DfGh-AA": (
        "anthropic_key"
    ),
    "AKIAQ3EXAMPLE7TESTKY": "aws_access_key",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "aws_secret_key",
    "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R": "github_token",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q": "google_api_key",
    "xoxb-2468135790-1357924680-AbCdEfGhIjKlMnOpQrStUvWx": "slack_token",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc9Qz": "stripe_key",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789": "huggingface_token",
    "tok3n_Xy9Zw8Vu7Ts6Rq5Po4": "bearer_token",
    "sessionid=7d9f3a1c5e2b4d6f8a0c": "cookie",
    PEM: "private_key",
    "S3cr3tPassw0rd!x": "url_password",
    "ada.lovelace@example.org": "email",
    "+1 415-555-0132": "phone",
    "u-77821-ada": "user_id",
    "chat-99881234": "chat_id",
    "thr-5521": "thread_id",
    "agent:main:telegram:dm:owner-4471": "session_key",
    "Ada Lovelace": "display_name",
    ORIGIN: "origin_json",
    "https://billing.example-corp.net/v1/acct-31337": "billing_base_url",
    # the CLI session's working directory names its account: the path, then the name
    "/home/ada": "home_user",
}
#: Pieces that must not survive either (the body of the key, the members of origin_json).
PIECES = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7xq", "ada_l_1815")


def _peer(db: Any, session: str, **who: str) -> None:
    """Hermes' gateway recording who a Telegram direct chat's session talks with."""
    db.record_gateway_session_peer(session, source="telegram", chat_type="dm", **who)


def _gateway_chat(db: Any, **more: str) -> None:
    """Ada's Telegram chat ``gw-1``, as the gateway opens it (``more``: further peer values)."""
    db.create_session("gw-1", "telegram", model="anthropic/claude-sonnet-4")
    user = {"user_id": "u-77821-ada", "chat_id": "chat-99881234"}
    _peer(db, "gw-1", session_key="agent:main:telegram:dm:owner-4471", **user, **more)


def _write(path: Path) -> None:
    """Two sessions through Hermes' own SessionDB: a gateway chat and a CLI session with tools."""
    db = hermes_state.SessionDB(db_path=path)
    try:
        _gateway_chat(db, thread_id="thr-5521", display_name="Ada Lovelace", origin_json=ORIGIN)
        db.update_session_billing_route(
            "gw-1", provider="corp", base_url="https://billing.example-corp.net/v1/acct-31337"
        )
        db.set_session_title("gw-1", "Mail ada.lovelace@example.org the deploy plan")
        # after the gateway's own writes, which reset the prompt snapshot
        db.update_system_prompt(
            "gw-1",
            "You help Ada. Her key for the lab is "
            "sk-proj-Zq3xW8vB2nM5kL7jH4gF1dS9aP0oI6uY3tR5eW2qA8zX.",
        )

        db.append_message(
            "gw-1",
            "user",
            "Call me on +1 415-555-0132. My Anthropic key is "
            "sk-ant-api03-Qw9Er8Ty7Ui6Op5As4Df3Gh2Jk1Lz0Xc9Vb8Nm7Qw6Er5Ty4Ui3Op2As1DfGh-AA",
        )
        db.append_message(
            "gw-1",
            "assistant",
            "Noted.",
            reasoning="The user pasted AKIAQ3EXAMPLE7TESTKY; I must not repeat it.",
            finish_reason="stop",
        )
        db.create_session("cli-1", "cli", model="openai/gpt-5", cwd="/home/ada/engine")
        db.append_message(
            "cli-1",
            "user",
            "Deploy with aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY please",
        )
        calls = [
            {
                "id": "call_1",
                "call_id": "call_1",
                "type": "function",
                "function": {
                    "name": "terminal",
                    "arguments": json.dumps(
                        {
                            "command": "curl -H 'Authorization: Bearer tok3n_Xy9Zw8Vu7Ts6Rq5Po4' "
                            "-H 'Cookie: sessionid=7d9f3a1c5e2b4d6f8a0c' "
                            "postgres://deploy:S3cr3tPassw0rd!x@db.internal:5432/app",
                            "env": {"GITHUB_TOKEN": "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"},
                        }
                    ),
                },
            }
        ]
        db.append_message("cli-1", "assistant", "", tool_calls=calls, finish_reason="tool_calls")
        db.append_message(
            "cli-1",
            "tool",
            "GOOGLE_API_KEY=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q\n"
            "SLACK=xoxb-2468135790-1357924680-AbCdEfGhIjKlMnOpQrStUvWx\n"
            "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc9Qz\nHF=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n"
            + PEM,
            tool_call_id="call_1",
            tool_name="terminal",
        )
        db.append_message("cli-1", "assistant", "Done, mail ada.lovelace@example.org.")
        db.end_session("cli-1", "cli_close")
    finally:
        db.close()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _occurrences(text: str) -> Counter[str]:
    """How often each planted value occurs in a string, longest values first (a value inside
    a longer one, as a chat id inside a routing key, counts once, as the longer)."""
    found: Counter[str] = Counter()
    for value in sorted(PLANTED, key=len, reverse=True):
        for form in {value, json.dumps(value)[1:-1]}:
            n = text.count(form)
            if n:
                found[PLANTED[value]] += n
                text = text.replace(form, "\x00")
    return found


def _planted_in(out: Path) -> Counter[str]:
    """Occurrences of planted values in every session file of an unredacted conversion."""
    found: Counter[str] = Counter()
    for path in out.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for text in _strings(json.loads(line)):
                found += _occurrences(text)
    return found


def _assert_clean(data: bytes, where: str) -> None:
    for value in [*PLANTED, *PIECES]:
        for form in {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}:
            assert form.encode() not in data, (where, value[:30])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    _write(home / "state.db")
    return home


def test_redact_leaves_no_planted_secret_and_counts_each(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    assert main(["convert", str(home), "-o", str(plain), "--quiet"]) == ExitCode.OK
    planted = _planted_in(plain)
    assert set(planted) == set(PLANTED.values())  # every kind is in the unredacted output

    out = tmp_path / "redacted"
    code = main(["convert", str(home), "-o", str(out), "--redact", "--json"])
    got = capsys.readouterr()
    assert code == ExitCode.OK, got.err
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        _assert_clean(path.read_bytes(), str(path))
    _assert_clean(got.out.encode(), "stdout")
    _assert_clean(got.err.encode(), "stderr")
    assert verify_path(out) == [] or all(f.severity != "error" for f in verify_path(out))
    (report,) = json.loads(got.out)["stores"]
    assert report["redacted"] is True
    counted: Counter[str] = Counter()
    for kinds in report["redactions"].values():
        counted.update(kinds)
    assert counted == planted
    placeholders = placeholder_pattern()
    for path in out.rglob("*.jsonl"):
        session = read_session(path)
        assert session.header.redacted is True
        assert session.problems == []
        text = path.read_text(encoding="utf-8")
        assert placeholders.search(text)
    # the same value, the same placeholder, across sessions and files
    texts = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*.jsonl"))
    assert texts.count("[REDACTED:email:1]") == planted["email"]
    assert "[REDACTED:email:2]" not in texts


def test_redact_on_stdout_and_show(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code = main(["convert", str(home), "--session", "cli-1", "-o", "-", "--redact"])
    got = capsys.readouterr()
    assert code == ExitCode.OK, got.err
    _assert_clean(got.out.encode(), "convert -o -")
    session = parse_session(got.out.encode())
    assert session.header.redacted is True
    assert session.problems == []
    for form in ("markdown", "text", "tree"):
        code = main(["show", str(home), "--session", "gw", "--redact", "--format", form])
        shown = capsys.readouterr()
        assert code == ExitCode.OK, shown.err
        _assert_clean(shown.out.encode(), f"show --format {form}")
        assert "[REDACTED:" in shown.out
    # an ASF file already written, redacted on the way to the screen
    code = main(["convert", str(home), "--session", "gw-1", "-o", "-"])
    raw = capsys.readouterr().out
    assert "ada.lovelace@example.org" in raw
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw.encode())))
    code = main(["show", "-", "--redact", "--full"])
    shown = capsys.readouterr()
    assert code == ExitCode.OK, shown.err
    _assert_clean(shown.out.encode(), "show - --redact")


@pytest.fixture
def plain(home: Path, tmp_path: Path) -> Path:
    """The home converted without redaction: every planted value is in its files."""
    out = tmp_path / "plain"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == ExitCode.OK
    assert set(_planted_in(out)) == set(PLANTED.values())
    return out


@pytest.mark.parametrize("form", ["tree", "markdown", "text", "json"])
def test_show_redact_of_an_asf_file_leaves_no_planted_value(
    plain: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    """An ASF file written unredacted, shown with ``--redact``: the identity columns its
    ``hermes`` members keep (user, chat, display name, origin, billing URL) are replaced as
    ``convert --redact`` replaces them, through the plugin's ``personal`` hook."""
    argv = ["--json"] if form == "json" else ["--format", form, "--full"]
    for path in sorted(plain.rglob("*.jsonl")):
        code = main(["show", str(path), "--redact", *argv])
        shown = capsys.readouterr()
        assert code == ExitCode.OK, shown.err
        _assert_clean(shown.out.encode(), f"show {path.name} {form}")
        _assert_clean(shown.err.encode(), f"show {path.name} {form} (stderr)")


@pytest.mark.parametrize("to", ["atif", "otel", "markdown", "html", "text"])
def test_export_redact_leaves_no_planted_value_on_one_process_or_two(
    plain: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], to: str
) -> None:
    content = ["--content"] if to == "otel" else []
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"{to}-{jobs}"
        code = main(
            ["export", str(plain), "--to", to, "-o", str(out), "--redact", "-j", jobs, *content]
        )
        got = capsys.readouterr()
        assert code == ExitCode.OK, got.err
        files = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        assert len(files) == 2
        for name, data in files.items():
            _assert_clean(data, f"export {to} {name}")
            assert b"[REDACTED:" in data
        outs.append(files)
    assert outs[0] == outs[1]


def test_leaf_names_an_entry_as_the_unredacted_file_does(
    plain: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Redacting seals changed entries again, so their ids change: ``--leaf`` takes the id
    ``asf show FILE`` shows as well as the one ``asf show FILE --redact`` shows."""
    path = next(p for p in plain.rglob("*.jsonl") if b"415-555-0132" in p.read_bytes())
    session = read_session(path)
    # The user's message: its text holds a phone number and a key, so its id changes.
    user = next(e for e in session.entries if "415-555" in json.dumps(getattr(e, "item", None)))
    assert user.id is not None
    old = user.id.removeprefix("sha256:")[:10]
    assert main(["show", str(path), "--leaf", old, "--format", "markdown"]) == ExitCode.OK
    plain_text = capsys.readouterr().out
    assert "415-555-0132" in plain_text
    assert main(["show", str(path), "--leaf", old, "--redact", "--json"]) == ExitCode.OK
    shown = json.loads(capsys.readouterr().out)
    new = shown["leaf"]
    assert new != user.id
    assert "[REDACTED:phone:1]" in json.dumps(shown["context"]["items"][-1])
    assert main(["show", str(path), "--leaf", new[7:17], "--redact", "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["leaf"] == new
    out = tmp_path / "one.md"
    argv = ["export", str(path), "--to", "markdown", "--leaf", old, "--redact", "-o", str(out)]
    assert main(argv) == ExitCode.OK, capsys.readouterr().err
    text = out.read_text()
    _assert_clean(text.encode(), "export --leaf")
    assert text.rstrip().endswith("[REDACTED:anthropic_key:1]")


def _delegating(path: Path) -> None:
    """A gateway chat whose call delegates to a sub-agent session with identity values of its
    own (a second user, chat and billing account), through Hermes' own SessionDB."""
    db = hermes_state.SessionDB(db_path=path)
    try:
        _gateway_chat(db)
        db.append_message("gw-1", "user", "Ask a helper.")
        call = {"name": "delegate_task", "arguments": json.dumps({"goal": "look"})}
        calls = [{"id": "call_9", "call_id": "call_9", "type": "function", "function": call}]
        db.append_message("gw-1", "assistant", "", tool_calls=calls, finish_reason="tool_calls")
        db.create_session("sub-1", "subagent", parent_session_id="gw-1", model="openai/gpt-5")
        _peer(
            db,
            "sub-1",
            user_id="u-55555-grace",
            session_key="agent:main:telegram:dm:owner-9999",
            chat_id="chat-11112222",
            display_name="Grace Hopper",
        )
        db.update_session_billing_route(
            "sub-1", provider="corp", base_url="https://billing.example-corp.net/v1/acct-42424"
        )
        db.append_message("sub-1", "user", "look")
        db.append_message("sub-1", "assistant", "Looked: all quiet.", finish_reason="stop")
        output = json.dumps({"results": [{"summary": "Looked: all quiet."}]})
        db.append_message("gw-1", "tool", output, tool_call_id="call_9", tool_name="delegate_task")
        db.append_message("gw-1", "assistant", "Done.", finish_reason="stop")
    finally:
        db.close()


def test_export_redact_embeds_the_sub_agent_redacted_as_its_own_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parent names the sub-agent's answering entry by its id in the unredacted file;
    the sub-agent redacted is sealed again under other ids. The ATIF of the parent still
    embeds it (it was left out, silently), with the sub-agent's own identity values replaced,
    on one process or two."""
    home, plain = tmp_path / "home", tmp_path / "plain"
    home.mkdir()
    _delegating(home / "state.db")
    assert main(["convert", str(home), "-o", str(plain), "--quiet"]) == ExitCode.OK
    (parent,) = [p for p in plain.rglob("*.jsonl") if b'"spawned_by"' not in p.read_bytes()]
    unredacted = (
        "u-77821-ada",
        "chat-99881234",
        "u-55555-grace",
        "chat-11112222",
        "Grace Hopper",
        "acct-42424",
    )
    for jobs in ("1", "2"):
        out = tmp_path / f"atif-{jobs}"
        argv = ["export", str(plain), "--to", "atif", "-o", str(out), "--redact", "-j", jobs]
        assert main(argv) == ExitCode.OK, capsys.readouterr().err
        name = parent.name.removesuffix(".jsonl") + ".atif.json"
        doc = json.loads(next(out.rglob(name)).read_text())
        (child,) = doc["subagent_trajectories"]
        messages = [step.get("message") for step in child["steps"]]
        assert "Looked: all quiet." in messages
        text = json.dumps(doc)
        assert "[REDACTED:display_name:1]" in text
        assert not [value for value in unredacted if value in text]


def test_export_redact_names_the_sub_agents_answer_by_its_redacted_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parent joins the sub-agent's answer by the id of its entry, a hash of the entry's
    text. Exported with --redact, the parent names the entry as the redacted sub-agent has
    it (as ``convert --redact`` writes it), never by the unredacted file's id, which would
    name no entry of the embedded sub-agent and let the unredacted text be confirmed."""
    home, plain, red = tmp_path / "home", tmp_path / "plain", tmp_path / "red"
    home.mkdir()
    _delegating(home / "state.db")
    assert main(["convert", str(home), "-o", str(plain), "--quiet"]) == ExitCode.OK
    assert main(["convert", str(home), "-o", str(red), "--quiet", "--redact"]) == ExitCode.OK
    plain_ids = {
        json.loads(line).get("id") for p in plain.rglob("*.jsonl") for line in p.open("rb")
    }
    (joined,) = [
        ref
        for p in red.rglob("*.jsonl")
        for line in p.open("rb")
        for ref in json.loads(line).get("parents") or ()
        if ref.get("session")
    ]
    assert joined["entry"] not in plain_ids
    for jobs in ("1", "2"):
        out = tmp_path / f"atif-{jobs}"
        argv = ["export", str(plain), "--to", "atif", "-o", str(out), "--redact", "-j", jobs]
        assert main(argv) == ExitCode.OK, capsys.readouterr().err
        (parent,) = [
            json.loads(p.read_text())
            for p in out.rglob("*.atif.json")
            if "subagent_trajectories" in json.loads(p.read_text())
        ]
        (child,) = parent["subagent_trajectories"]
        refs = [
            ref
            for step in parent["steps"]
            for result in (step.get("observation") or {}).get("results", ())
            for ref in result.get("subagent_trajectory_ref", ())
        ]
        assert [ref["extra"]["child_leaf"] for ref in refs] == [joined["entry"]]
        assert child["extra"]["agentsession"]["leaf"] == joined["entry"]


def test_show_redact_names_the_sub_agents_answer_by_its_redacted_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``asf show FILE --redact`` of the parent redacts the sub-agent beside it first, so the
    join names the entry as ``convert --redact`` writes it."""
    home, plain, red = tmp_path / "home", tmp_path / "plain", tmp_path / "red"
    home.mkdir()
    _delegating(home / "state.db")
    assert main(["convert", str(home), "-o", str(plain), "--quiet"]) == ExitCode.OK
    assert main(["convert", str(home), "-o", str(red), "--quiet", "--redact"]) == ExitCode.OK

    def joins(lines: list[dict[str, Any]]) -> list[Any]:
        return [ref for line in lines for ref in line.get("parents") or () if ref.get("session")]

    (parent,) = [p for p in plain.rglob("*.jsonl") if joins(_lines(p))]
    (written,) = [ref for p in red.rglob("*.jsonl") for ref in joins(_lines(p))]
    capsys.readouterr()
    assert main(["show", str(parent), "--redact", "--json"]) == ExitCode.OK
    shown = json.loads(capsys.readouterr().out)
    assert joins(shown["entries"]) == [written]
    assert joins(_lines(parent)) != [written]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]
