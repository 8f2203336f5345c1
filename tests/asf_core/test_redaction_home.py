"""Account names in home directories' paths (``--redact``'s ``home_user``, docs/cli.md): found
in paths, then wherever the name stands as a word, kept out of the folder names a redacted
run gives, on the shared homes' real account names (a Claude Code project of ``marco``'s, a
Codex thread run from ``/Users/macmini``)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from fixture_paths import CLAUDE_HOME, CODEX_HOME

from asf_core.cli.main import main
from asf_core.layout import redacted_folder, store_label
from asf_core.redaction import Redactor, placeholder_pattern

#: The shared homes' account names, and where they are.
NAMES = (b"marco", b"macmini")
PROJECT = CLAUDE_HOME / ".claude" / "projects" / "-home-marco-projects-spotter"
#: A project whose sessions have sub-agents (its account name redacted upstream).
AGENTS = CLAUDE_HOME / ".claude" / "projects" / "-home-USER-projects-spotter-worktrees-spotter-a0y"


def _digest(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()[:10]


@pytest.mark.parametrize(
    ("path", "plain", "redacted"),
    [
        ("/home/adalovelace/.codex", "adalovelace-.codex", "USER-.codex"),
        ("/Users/ada/.claude/projects/-Users-ada-proj", "projects--Users-ada-proj", None),
        ("/srv/agents/-Users-ada-x", "agents--Users-ada-x", "agents--Users-USER-x"),
        ("/srv/hermes/state.db", "hermes-state.db", "hermes-state.db"),
    ],
)
def test_a_redacted_store_folder_spells_the_account_user(
    path: str, plain: str, redacted: str | None
) -> None:
    """The readable part loses the name; the hash stays the path's, so the folder is the same
    on every run (a numbered placeholder would depend on what the run met first)."""
    redacted = redacted or "projects--Users-USER-proj"
    assert store_label(Path(path)) == f"{plain}-{_digest(path)}"
    assert store_label(Path(path), redact=True) == f"{redacted}-{_digest(path)}"


@pytest.mark.parametrize(
    ("folder", "redacted"),
    [
        ("claude-code/projects--home-ada-proj-0123456789/home-ada-proj", None),
        ("codex/USER-.codex-0123456789/Users-ada-x", "codex/USER-.codex-0123456789/Users-USER-x"),
        ("c/projects--C--Users-ada-p-0123456789/C--Users-ada-p", None),
        ("c/projects--mnt-c-Users-ada-p-0123456789/mnt-c-Users-ada-p", None),
        ("c/var-home-ada-p", "c/var-home-USER-p"),
        ("c/home-ada.l-p/C--Users-Ada Lovelace-p", "c/home-USER-p/C--Users-USER-p"),
        ("c/home-Shared-p/Users-Public/C--Users-All Users-x", None),
        ("c/my-home-page/ada-notes", None),
        ("c/projects--home-USER-p-0123456789/home-[REDACTED-home_user-1]-p", None),
    ],
)
def test_a_redacted_export_spells_the_account_in_a_mirrored_folder_user(
    folder: str, redacted: str | None
) -> None:
    """The folders of a converted directory spell a home's account name as its project keys
    and store labels do (dashes for separators): ``USER`` takes its place; a shared folder,
    a ``home`` inside a word's run, a name spelled no such way, or the placeholder of a
    redacted conversion stays."""
    expected = redacted or folder.replace("-ada-", "-USER-")
    assert redacted_folder(Path(folder)) == Path(expected)


def test_an_account_found_in_a_path_is_replaced_wherever_it_stands_as_a_word() -> None:
    r = Redactor(phones=False)
    first = r.text("cd /home/marco/projects/spotter")
    assert first == "cd /home/[REDACTED:home_user:1]/projects/spotter"
    listing = r.text("drwxrwxr-x 13 marco marco 4096 Feb 10 .\nmarco@box:~$ ls marcopolo")
    assert "marco " not in listing
    assert (
        placeholder_pattern().sub("P", listing)
        == "drwxrwxr-x 13 P P 4096 Feb 10 .\nP@box:~$ ls marcopolo"
    )
    assert r.take_counts() == {"home_user": 4}


def test_an_account_in_a_text_is_replaced_there_too_before_and_after_the_path() -> None:
    r = Redactor(phones=False)
    out = r.text("marco wrote /Users/marco/notes.md; ask marco")
    assert placeholder_pattern().sub("P", out) == "P wrote /Users/P/notes.md; ask P"


def test_an_account_is_replaced_in_any_case_under_one_placeholder() -> None:
    """An account is one name in any case (Windows and macOS file systems ignore it): the
    ``Hardel`` of ``C:\\Users\\Hardel`` is the ``hardel`` of the Java package the session
    reads there, and both are the one placeholder; a longer word is not the name."""
    r = Redactor(phones=False)
    first = r.text("C:\\Users\\Hardel\\IdeaProjects\\twichplay")
    assert first == "C:\\Users\\[REDACTED:home_user:1]\\IdeaProjects\\twichplay"
    assert r.text("package fr.hardel.twichplay; HARDEL wrote it; hardelx") == (
        "package fr.[REDACTED:home_user:1].twichplay; [REDACTED:home_user:1] wrote it; hardelx"
    )
    assert r.text("hardel") == "[REDACTED:home_user:1]"
    assert r.take_counts() == {"home_user": 4}


def test_a_generic_account_is_replaced_in_paths_only() -> None:
    r = Redactor(phones=False)
    assert r.text("/home/ubuntu/app and /home/runner/work") == (
        "/home/[REDACTED:home_user:1]/app and /home/[REDACTED:home_user:2]/work"
    )
    assert r.text("sudo apt install ubuntu-desktop; the runner ran") == (
        "sudo apt install ubuntu-desktop; the runner ran"
    )


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_no_account_name_is_left_in_a_redacted_conversion_of_real_homes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Claude Code project named after ``/home/marco/...`` (``ls -l`` listings name its
    owner) and a Codex home with a thread from ``/Users/macmini``: unredacted, the names are
    in the files and their folders' names; redacted, in no byte and no name, and every file
    verifies."""
    projects = tmp_path / "projects"
    shutil.copytree(PROJECT, projects / PROJECT.name)
    plain, redacted = tmp_path / "plain", tmp_path / "redacted"
    sources = [str(projects / PROJECT.name), str(CODEX_HOME / ".codex")]
    assert main(["convert", *sources, "-o", str(plain), "--quiet"]) == 0
    seen = _files(plain)
    for name in NAMES:
        assert any(name in data for data in seen.values()), name
    assert any("marco" in path for path in seen), "the store folder names the account"
    assert main(["convert", *sources, "-o", str(redacted), "--redact", "--quiet"]) == 0
    written = _files(redacted)
    assert len([p for p in written if p.endswith(".jsonl")]) == len(
        [p for p in seen if p.endswith(".jsonl")]
    )
    for path, data in written.items():
        for name in NAMES:
            assert name not in path.encode(), path
            assert name not in data, (path, name)
    reports = [json.loads(data) for path, data in written.items() if path.endswith("report.json")]
    assert sum(c.get("home_user", 0) for r in reports for c in r["redactions"].values()) > 0
    capsys.readouterr()
    assert main(["verify", str(redacted)]) == 0


def test_an_address_that_opens_with_the_account_name_is_replaced_whole() -> None:
    """At one place the longer span wins: the learned name alone would leave the rest of the
    address (``[REDACTED:home_user:1].lovelace@example.org``)."""
    r = Redactor(phones=False)
    r.text("/home/ada/x")
    assert r.text("mail ada.lovelace@example.org, ada") == (
        "mail [REDACTED:email:1], [REDACTED:home_user:1]"
    )


@pytest.mark.parametrize("target", ["html", "atif"])
def test_no_account_name_is_left_in_a_redacted_export_of_a_plain_conversion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """``asf export --redact`` of a directory converted without ``--redact`` mirrors its
    layout, whose store and project folders spell ``/home/marco``: the folders it writes
    spell the account ``USER`` as ``convert --redact`` does, in no document's path is the
    name, and the links between the documents (a session to its sub-agents') still lead to
    documents written."""
    projects = tmp_path / "projects"
    for project in (PROJECT, AGENTS):
        shutil.copytree(project, projects / project.name)
    plain, out = tmp_path / "plain", tmp_path / "out"
    assert main(["convert", str(projects), "-o", str(plain), "--quiet"]) == 0
    assert any("marco" in path for path in _files(plain))
    assert main(["export", str(plain), "--to", target, "-o", str(out), "--redact"]) == 0
    written = _files(out)
    assert len(written) == len([p for p in _files(plain) if p.endswith(".jsonl")])
    for path, data in written.items():
        assert b"marco" not in path.encode(), path
        assert b"marco" not in data, path
    assert any("home-USER-projects-spotter" in path for path in written)
    links = 0
    for path, data in written.items():
        if target != "html":
            break
        for href in re.findall(r'href="([^"#:]+\.html)', data.decode()):
            links += 1
            assert (out / path).parent.joinpath(href).resolve().is_file(), (path, href)
    assert links > 0 or target != "html"
    capsys.readouterr()


def test_a_generic_account_is_known_in_any_case() -> None:
    """Windows' ``Administrator`` (spelled so in ``C:\\Users``) is a word of its own: the
    prompt that runs a shell "as Administrator" keeps it."""
    r = Redactor(phones=False)
    assert r.text(r"C:\Users\Administrator\Desktop") == r"C:\Users\[REDACTED:home_user:1]\Desktop"
    assert r.text("Run the shell as Administrator") == "Run the shell as Administrator"


def test_a_value_a_plugin_names_keeps_its_kind_over_a_secret_at_the_same_place() -> None:
    """A Hermes ``user_id`` that is an e-mail address is replaced as the ``user_id`` it is."""
    r = Redactor(phones=False)
    r.learn({"user_id": ["ada@example.org"]})
    assert r.text("from ada@example.org today") == "from [REDACTED:user_id:1] today"


def test_an_account_met_again_in_another_case_keeps_its_placeholder() -> None:
    """``C:\\Users\\Hardel`` then ``/home/hardel``: one account, so the second path teaches
    nothing new, and ``hardel`` alone is the first placeholder (it was a second one: the
    lower-case spelling was learnt as a value of its own)."""
    r = Redactor(phones=False)
    r.text(r"C:\Users\Hardel\x")
    assert r.text("/home/hardel/y") == "/home/[REDACTED:home_user:1]/y"
    assert r.text("hardel") == "[REDACTED:home_user:1]"
