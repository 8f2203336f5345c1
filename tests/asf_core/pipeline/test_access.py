"""A store's output directory is no more open than the store (asf_core/pipeline/access.py)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import CLAUDE_HOME, ROOT

from asf_core.cli.main import main
from asf_core.pipeline.access import reach

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")

EXAMPLE = ROOT / "examples" / "hermes-home"
#: A Claude Code project whose session has sub-agents (a folder below the project).
PROJECT = CLAUDE_HOME / ".claude" / "projects" / "-home-USER-projects-spotter-worktrees-spotter-a0y"


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory everyone may enter, under ``/tmp`` (pytest's own are owner-only), with the
    umask most systems set."""
    old = os.umask(0o022)
    path = Path(tempfile.mkdtemp(prefix="asf-access-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        os.umask(old)
        shutil.rmtree(path)


def _home(where: Path, home_mode: int, db_mode: int = 0o644) -> Path:
    home = where / "home"
    shutil.copytree(EXAMPLE, home, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm"))
    for db in home.rglob("state.db"):
        db.chmod(db_mode)
    home.chmod(home_mode)
    return home


def _store_dirs(out: Path) -> list[Path]:
    dirs = [d for d in (out / "hermes").iterdir() if d.is_dir()]
    assert len(dirs) == 2  # the home and its profile
    return dirs


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(
    ("home_mode", "db_mode", "expected"),
    [
        (0o700, 0o644, 0o700),  # as Hermes keeps its home: private, whatever the file says
        (0o750, 0o640, 0o750),  # shared with a group (Hermes' managed mode)
        (0o755, 0o644, 0o755),  # open: the umask's directory, as before
        (0o755, 0o600, 0o700),  # the database itself private
    ],
)
def test_the_output_of_a_store_is_as_open_as_the_store(
    open_dir: Path, home_mode: int, db_mode: int, expected: int
) -> None:
    home = _home(open_dir, home_mode, db_mode)
    out = open_dir / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    for store in _store_dirs(out):
        assert _mode(store) == expected, store
        assert list(store.rglob("*.jsonl"))  # the sessions are inside it


def test_a_new_output_is_open_to_no_one_until_its_group_is_known(
    open_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store shared with its group gives its new output directory the group bits once that
    directory's group is known to be the store's: never before, even for a moment (whoever
    opened the directory then could list every file written in it later)."""
    home = _home(open_dir, 0o750, 0o640)
    out = open_dir / "out"
    made: dict[Path, int] = {}
    mkdir = Path.mkdir

    def watched(path: Path, *args: Any, **kwargs: Any) -> None:
        mkdir(path, *args, **kwargs)
        made.setdefault(path, _mode(path))  # as made, not as met again later

    monkeypatch.setattr(Path, "mkdir", watched)
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    stores = _store_dirs(out)
    assert {made[store] for store in stores} == {0o700}
    assert {_mode(store) for store in stores} == {0o750}


def test_an_open_output_is_closed_when_the_store_is_and_never_opened(open_dir: Path) -> None:
    """Written while the home was open; the home closed since: even a run that finds
    everything unchanged takes from the output what the store no longer grants. Opening the
    home again opens nothing: asf never widens what the owner may have narrowed."""
    home = _home(open_dir, 0o755)
    out = open_dir / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert {_mode(d) for d in _store_dirs(out)} == {0o755}
    home.chmod(0o700)
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert {_mode(d) for d in _store_dirs(out)} == {0o700}
    home.chmod(0o755)
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert {_mode(d) for d in _store_dirs(out)} == {0o700}


def _project(where: Path) -> Path:
    project = where / "projects" / PROJECT.name
    shutil.copytree(PROJECT, project)
    for path in [where / "projects", *project.rglob("*"), project]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return project


@pytest.mark.parametrize(
    "private",
    ["fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl", "fa812bfe-b295-4cca-9c2f-fdf01028cb46"],
    ids=["a session file", "a session's folder of sub-agents"],
)
def test_a_private_file_in_an_open_directory_store_keeps_its_output_private(
    open_dir: Path, private: str
) -> None:
    """A Claude Code store is a project directory: one of its transcripts (or a folder of
    them) closed to others keeps its output closed, as a private database in an open Hermes
    home does, though the project directory itself is open."""
    project = _project(open_dir)
    out = open_dir / "out"
    assert main(["convert", str(project), "-o", str(out), "--quiet"]) == 0
    (store,) = [d for d in (out / "claude-code").iterdir() if d.is_dir()]
    assert _mode(store) == 0o755  # all of it open: the umask's directory
    (project / private).chmod(0o700 if (project / private).is_dir() else 0o600)
    assert main(["convert", str(project), "-o", str(out), "--quiet"]) == 0
    assert _mode(store) == 0o700
    assert reach(project) == 0
    shutil.rmtree(out)
    assert main(["convert", str(project), "-o", str(out), "--quiet"]) == 0
    assert _mode(store) == 0o700  # made so
    assert list(store.rglob("*.jsonl"))


def test_a_folder_store_reaches_through_its_links_and_its_group_s_own_files(
    open_dir: Path,
) -> None:
    """A project directory shared with its group (folders ``0750``, files ``0640``, all of
    its group) is open to that group; a transcript in it that is a link to a private file
    (``0600``) closes it, as the file itself would: a link's own bits say nothing."""
    project = _project(open_dir)
    for path in [open_dir / "projects", *project.rglob("*"), project]:
        path.chmod(0o750 if path.is_dir() else 0o640)
    assert reach(project) == 0o050
    private = open_dir / "private.jsonl"
    transcript = next(project.glob("*.jsonl"))
    private.write_bytes(transcript.read_bytes())
    private.chmod(0o600)
    transcript.unlink()
    transcript.symlink_to(private)
    assert reach(project) == 0
    private.chmod(0o640)
    assert reach(project) == 0o050


def test_reach_reads_every_directory_above(open_dir: Path, tmp_path: Path) -> None:
    db = _home(open_dir, 0o755) / "state.db"
    assert reach(db) == 0o055
    db.parent.chmod(0o751)  # others may pass through but not list: still enough for a file
    assert reach(db) == 0o055
    db.parent.chmod(0o710)
    assert reach(db) == 0o050
    assert reach(db.parent) == 0  # a directory must be listed too: the group may not
    db.parent.chmod(0o750)
    assert reach(db.parent) == 0o050
    assert reach(open_dir / "nowhere") == 0
    assert reach(tmp_path) == 0  # pytest's own directories are owner-only


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="changes groups (root)")
def test_a_group_is_granted_only_the_store_s_own(open_dir: Path) -> None:
    """The group bits go to the store's group alone: a store shared with another group
    leaves the output's group (the user's) out, and a directory above that lets only its own
    group through lets no other group reach the store."""
    home = _home(open_dir, 0o750, 0o640)
    other = os.getgid() + 4242  # a group no one here is in
    for path in [home, *home.rglob("*")]:
        os.chown(path, -1, other)
    out = open_dir / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert {_mode(d) for d in _store_dirs(out)} == {0o700}  # the output is the user's group's
    db = home / "state.db"
    assert reach(db, other) == 0o050  # for a directory of the store's own group
    assert reach(db, os.getgid()) == 0
    middle = open_dir / "middle"
    middle.mkdir(mode=0o750)
    os.chown(middle, -1, other + 1)  # lets its own group through, not the store's
    inner = middle / "db"
    inner.write_bytes(b"")
    os.chown(inner, -1, other)
    inner.chmod(0o640)
    assert reach(inner, other) == 0
    middle.chmod(0o751)  # others may pass: the store's group passes as others
    assert reach(inner, other) == 0o050


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="gives a directory away (root)")
def test_another_user_s_open_directory_is_refused(
    open_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store directory that belongs to another user and is open to everyone (made there
    before the run, say under a shared ``-o``) cannot be closed by this user, who may write
    in it only as one of the others: the private home's sessions are not written there."""
    home = _home(open_dir, 0o700)
    out = open_dir / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    dest = next(d for d in _store_dirs(out) if d.name.startswith("home-"))
    shutil.rmtree(dest)
    dest.mkdir()
    dest.chmod(0o777)
    os.chown(dest, 65534, -1)  # nobody's
    chmod = Path.chmod

    def refused(path: Path, mode: int, **kwargs: bool) -> None:
        if path == dest:  # as for anyone but its owner (and root)
            raise PermissionError(1, "Operation not permitted", str(path))
        chmod(path, mode, **kwargs)

    monkeypatch.setattr(Path, "chmod", refused)
    monkeypatch.setattr(os, "geteuid", lambda: 4242)
    capsys.readouterr()
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{dest}: another user's directory (uid 65534), more open than the store" in err
    assert list(dest.iterdir()) == []
    assert _mode(dest) == 0o777


def test_exports_are_no_more_open_than_what_they_come_from(open_dir: Path) -> None:
    """Documents exported from a private store's sessions are private wherever they go (a
    directory ``asf export`` makes is too; one the user named is left as it is); from an open
    store, the umask's files, as any other."""
    out = open_dir / "out"
    assert main(["convert", str(_home(open_dir, 0o700)), "-o", str(out), "--quiet"]) == 0
    (private, _) = sorted(_store_dirs(out))
    docs = open_dir / "docs"
    assert main(["export", str(private), "--to", "markdown", "-o", str(docs)]) == 0
    assert _mode(docs) == 0o700
    written = list(docs.rglob("*.md"))
    assert written
    assert {_mode(p) for p in written} == {0o600}
    mine = open_dir / "mine"
    mine.mkdir(mode=0o755)
    session = next(private.rglob("*.jsonl"))
    assert main(["export", str(session), "--to", "atif", "-o", str(mine / "one.json")]) == 0
    assert (_mode(mine), _mode(mine / "one.json")) == (0o755, 0o600)
    shutil.rmtree(out)
    shutil.rmtree(docs)
    home = open_dir / "home"
    home.chmod(0o755)
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    (public, _) = sorted(_store_dirs(out))
    assert main(["export", str(public), "--to", "markdown", "-o", str(docs)]) == 0
    assert _mode(docs) == 0o755
    assert {_mode(p) for p in docs.rglob("*.md")} == {0o644}
