"""The code digests that stamps and fingerprints carry: any edit of the code that writes a
store's files makes its records untrusted, and nothing else does."""

from __future__ import annotations

import shutil
from pathlib import Path

from asf_core.code_digest import code_digest, source_digest

ROOT = Path(__file__).resolve().parents[2] / "hermes_plugin"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "plugin"
    (root / "convert" / "__pycache__").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "plugin.py").write_text("X = 1\n")
    (root / "convert" / "rows.py").write_text("Y = 2\n")
    (root / "convert" / "__pycache__" / "rows.cpython-311.pyc").write_bytes(b"\0")
    (root / "notes.txt").write_text("not code")
    return root


def test_the_same_code_gives_the_same_digest_wherever_it_lies(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    copy = tmp_path / "elsewhere" / "plugin"
    shutil.copytree(root, copy)
    assert source_digest(root) == source_digest(copy)
    files = sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix())
    assert source_digest(root) == code_digest(root, files)


def test_an_edit_a_new_module_or_a_rename_changes_it(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = source_digest(root)
    (root / "convert" / "rows.py").write_text("Y = 3\n")
    edited = source_digest(root)
    (root / "convert" / "more.py").write_text("")
    added = source_digest(root)
    (root / "convert" / "more.py").rename(root / "convert" / "other.py")
    renamed = source_digest(root)
    assert len({before, edited, added, renamed}) == 4


def test_what_is_not_source_changes_nothing(tmp_path: Path) -> None:
    """Bytecode, other files, and with ``recursive=False`` the folders below."""
    root = _tree(tmp_path)
    flat = source_digest(root, recursive=False)
    whole = source_digest(root)
    (root / "convert" / "__pycache__" / "rows.cpython-311.pyc").write_bytes(b"\1")
    (root / "notes.txt").write_text("other notes")
    (root / "convert" / "rows.py").write_text("Y = 4\n")
    assert source_digest(root, recursive=False) == flat
    assert source_digest(root) != whole
    assert source_digest(root, ("", "convert"), recursive=False) != flat


def test_the_plugins_digest_is_their_package() -> None:
    from hermes_plugin.version import converter_version

    assert converter_version() == source_digest(ROOT)
