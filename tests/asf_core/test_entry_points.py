"""The host's entry-point scan finds what ``importlib.metadata`` finds, as it lists them.

``importlib.metadata`` is the oracle throughout: on this environment, on ``sys.path`` trees
built here with every layout it reads, and, with hypothesis, on arbitrary ``entry_points.txt``
and ``METADATA`` texts.
"""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from asf_core import entry_points, plugins
from asf_core.entry_points import Declared

GROUP = "asf.formats"


def oracle(group: str) -> list[Declared]:
    """What the host found before: every distribution importlib lists, in its order."""
    return [
        Declared(ep.name, ep.value, dist.name, dist.version)
        for dist in importlib.metadata.distributions()
        for ep in dist.entry_points
        if ep.group == group
    ]


@pytest.mark.parametrize("group", [GROUP, "console_scripts", "pytest11", "no.such.group"])
def test_this_environment_as_importlib_lists_it(group: str) -> None:
    found = entry_points.declared(group)
    assert found.problems == []
    assert found.points == oracle(group)


def test_this_environment_holds_our_plugins() -> None:
    names = {(p.name, p.value) for p in entry_points.declared(GROUP).points}
    assert {("hermes", "hermes_plugin.plugin"), ("claude-code", "claude_code_plugin.plugin")} <= (
        names
    )


def _dist(
    where: Path, dirname: str, points: str | None, *, name: str, version: str = "1.0"
) -> Path:
    info = where / dirname
    info.mkdir(parents=True)
    metadata = "METADATA" if dirname.lower().endswith(".dist-info") else "PKG-INFO"
    (info / metadata).write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nx\n")
    if points is not None:
        (info / "entry_points.txt").write_text(points)
    return info


def _ours(*lines: str) -> str:
    return f"[{GROUP}]\n" + "".join(f"{line}\n" for line in lines)


@pytest.fixture
def path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """``sys.path`` as the test builds it (importlib reads it too)."""
    entries: list[str] = []
    monkeypatch.setattr(sys, "path", entries)
    monkeypatch.chdir(tmp_path)
    return entries


def test_every_layout_importlib_reads(path: list[str], tmp_path: Path) -> None:
    one, two, egg = tmp_path / "one", tmp_path / "two", tmp_path / "legacy-3.0-py3.11.egg"
    _dist(one, "zeta-1.0.dist-info", _ours("z = zeta.plugin"), name="Zeta")
    _dist(one, "a_b-1.0.dist-info", _ours("ab = a_b:PLUGIN"), name="a-b")
    _dist(one, "A.B-2.0.dist-info", _ours("ab2 = a_b.two : Thing.attr [extra]"), name="A.B")
    _dist(one, "other-1.0.dist-info", "[console_scripts]\nother = other:main\n", name="other")
    _dist(one, "bare-1.0.dist-info", None, name="bare")
    _dist(one, "Old-1.0.EGG-INFO", _ours("# a comment", "", "  old =  old.plugin  "), name="Old")
    (one / "flat-1.0.egg-info").write_text("Metadata-Version: 1.0\nName: flat\n")
    _dist(two, "zeta-0.9.dist-info", _ours("z = zeta.older"), name="Zeta", version="0.9")
    _dist(egg, "EGG-INFO", _ours("legacy = legacy.plugin"), name="legacy", version="3.0")
    _dist(tmp_path, "here-1.0.dist-info", _ours("here = here.plugin"), name="here")
    path.extend(["", str(one), str(tmp_path / "missing"), str(two), str(egg)])
    found = entry_points.declared(GROUP)
    assert found.problems == []
    assert found.points == oracle(GROUP)
    assert {p.name for p in found.points} == {"z", "ab", "ab2", "old", "legacy", "here"}
    assert [p.version for p in found.points if p.name == "z"] == ["1.0", "0.9"]


def test_a_zip_on_the_path_is_left_to_importlib(path: list[str], tmp_path: Path) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        zf.writestr("zipped-1.0.dist-info/entry_points.txt", _ours("zipped = zipped.plugin"))
    _dist(tmp_path / "dir", "plain-1.0.dist-info", _ours("plain = plain.plugin"), name="plain")
    path.extend([str(tmp_path / "dir"), str(archive)])
    found = entry_points.declared(GROUP)
    assert [(p.name, p.distribution) for p in found.points] == [
        ("plain", "plain"),
        ("zipped", "zipped"),
    ]


def test_a_finder_that_lists_distributions_is_left_to_importlib(
    path: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Lister:
        def find_spec(self, *_: object) -> None:
            return None

        def find_distributions(self, *_: object) -> list[importlib.metadata.Distribution]:
            info = _dist(tmp_path / "own", "own-1.0.dist-info", _ours("own = own.x"), name="own")
            return [importlib.metadata.PathDistribution(info)]

    monkeypatch.setattr(sys, "meta_path", [Lister(), *sys.meta_path])
    assert [(p.name, p.distribution) for p in entry_points.declared(GROUP).points] == [
        ("own", "own")
    ]


def test_an_unreadable_list_is_a_problem_and_the_others_are_found(
    path: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    bad = _dist(site, "bad-1.0.dist-info", None, name="bad")
    (bad / "entry_points.txt").write_bytes(b"[asf.formats]\nbad = bad\xff\n")
    _dist(site, "nokey-1.0.dist-info", _ours("just a line"), name="nokey")
    _dist(site, "good-1.0.dist-info", _ours("good = good_module_not_installed"), name="good")
    path.append(str(site))
    found = entry_points.declared(GROUP)
    assert [p.name for p in found.points] == ["good"]
    assert len(found.problems) == 2
    assert any("bad-1.0.dist-info" in p and "utf-8" in p for p in found.problems)
    assert any("nokey-1.0.dist-info" in p and "'just a line'" in p for p in found.problems)
    pm = plugins.make_plugin_manager()
    assert [r.name for r in pm.broken] == ["good"]  # found, and it cannot be imported
    err = capsys.readouterr().err
    assert "asf: warning: cannot read the entry points in" in err
    assert err.count("bad-1.0.dist-info") == 1


@pytest.mark.parametrize("zipped", [False, True], ids=["scanned", "by-importlib"])
def test_a_broken_distribution_is_a_problem_with_a_zip_on_the_path_too(
    path: list[str], tmp_path: Path, zipped: bool
) -> None:
    site = tmp_path / "site"
    bad = _dist(site, "bad-1.0.dist-info", None, name="bad")
    (bad / "entry_points.txt").write_bytes(b"[asf.formats]\nbad = bad\xff\n")
    _dist(site, "nokey-1.0.dist-info", _ours("just a line"), name="nokey")
    latin = _dist(site, "latin-1.0.dist-info", _ours("latin = latin.plugin"), name="latin")
    (latin / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: caf\xe9\nVersion: 1.0\n")
    _dist(site, "good-1.0.dist-info", _ours("good = good.plugin"), name="good")
    # A read that fails (a symlink loop here; an I/O error alike) is no absent file.
    loop = _dist(site, "loop-1.0.dist-info", None, name="loop")
    (loop / "entry_points.txt").symlink_to("entry_points.txt")
    blind = _dist(site, "blind-1.0.dist-info", _ours("blind = blind.plugin"), name="blind")
    (blind / "METADATA").unlink()
    (blind / "METADATA").symlink_to("METADATA")
    if zipped:  # first, so that both the scan and the version are importlib's
        archive = tmp_path / "empty.zip"
        zipfile.ZipFile(archive, "w").close()
        path.append(str(archive))
    path.append(str(site))
    found = entry_points.declared(GROUP)
    assert sorted(found.points) == [
        Declared("blind", "blind.plugin", None, None),  # its METADATA cannot be read
        Declared("good", "good.plugin", "good", "1.0"),
        Declared("latin", "latin.plugin", None, None),  # its METADATA is not UTF-8
    ]
    assert sorted(p.partition(".dist-info")[0].rpartition("/")[2] for p in found.problems) == [
        "bad-1.0",
        "loop-1.0",
        "nokey-1.0",
    ]
    assert entry_points.installed_version("latin") is None
    assert entry_points.installed_version("blind") is None
    assert entry_points.installed_version("good") == "1.0"


def test_load_follows_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Declared("x", "asf_core.entry_points", None, None).load() is entry_points
    assert Declared("x", "asf_core.entry_points:Declared.load", None, None).load() is (
        Declared.load
    )
    assert Declared("x", "asf_core : plugins [extra]", None, None).load() is plugins
    with pytest.raises(ValueError, match="is not 'module:attribute'"):
        Declared("x", "not a value!", None, None).load()
    with pytest.raises(AttributeError):
        Declared("x", "asf_core:no_such_thing", None, None).load()


_LINE = st.one_of(
    st.sampled_from([f"[{GROUP}]", "[other]", "[ asf.formats ]", "#c", "", " ", "[]"]),
    st.builds(
        "{}{}={}{}".format,
        st.sampled_from(["", " ", "\t"]),
        st.text("ab_.-", min_size=1, max_size=4),
        st.text("ab:_. []", max_size=6),
        st.sampled_from(["", " "]),
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, max_size=8), newline=st.sampled_from(["\n", "\r\n"]))
def test_any_list_reads_as_importlib_reads_it(
    tmp_path: Path, lines: list[str], newline: str
) -> None:
    info = tmp_path / "x-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "entry_points.txt").write_bytes(newline.join(lines).encode())
    expected = [
        (ep.name, ep.value)
        for ep in importlib.metadata.PathDistribution(info).entry_points
        if ep.group == GROUP
    ]
    assert list(entry_points._section((info / "entry_points.txt").read_text(), GROUP)) == (expected)


#: What ``str.splitlines`` ends a line at and ``email`` does not (it ends them at CR and LF).
_NOT_LINE_ENDS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

_HEADER = st.one_of(
    st.builds(
        "{}:{}{}".format,
        st.sampled_from(["Name", "name", "NAME", "Version", "version", "Summary", ""]),
        st.sampled_from(["", " ", "  "]),
        st.text("abc-_.0123" + _NOT_LINE_ENDS, max_size=6),
    ),
    st.sampled_from([" folded", "\tfolded", "Not a header", "From someone"]),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(headers=st.lists(_HEADER, max_size=6), newline=st.sampled_from(["\n", "\r\n", "\r"]))
@example(headers=["Name: x", "Summary: one\u2028two", "Version: 1.0"], newline="\n")
@example(headers=["Name: x", "Summary: one\x0ctwo", "Version: 1.0"], newline="\n")
@example(headers=["From someone", "Name: x", "Version: 1.0"], newline="\n")
def test_any_metadata_names_as_importlib_names_it(
    tmp_path: Path, headers: list[str], newline: str
) -> None:
    info = tmp_path / "x-1.0.dist-info"
    info.mkdir(exist_ok=True)
    text = newline.join([*headers, "", "Name: body", ""])
    (info / "METADATA").write_bytes(text.encode())
    dist = importlib.metadata.PathDistribution(info)
    name, version = entry_points._name_and_version(info)
    ours = (_plain(name), _plain(version))
    assert ours == (_plain(dist.metadata["Name"]), _plain(dist.metadata["Version"]))


def _plain(value: str | None) -> str | None:
    """A header's value as a person reads it: folded lines joined, the ends trimmed."""
    return None if value is None else " ".join(value.split())


@pytest.mark.parametrize("name", ["asf-sessions", "ASF_Sessions", "pluggy", "attrs", "pytest"])
def test_an_installed_version_as_importlib_finds_it(name: str) -> None:
    assert entry_points.installed_version(name) == importlib.metadata.version(name)


def test_the_first_version_on_the_path_counts(path: list[str], tmp_path: Path) -> None:
    _dist(tmp_path / "one", "Some.Thing-2.0.dist-info", None, name="Some.Thing", version="2.0")
    _dist(tmp_path / "two", "some_thing-1.0.dist-info", None, name="some_thing", version="1.0")
    _dist(tmp_path / "two", "other-3.0.dist-info", None, name="other", version="3.0")
    path.extend([str(tmp_path / "missing"), str(tmp_path / "one"), str(tmp_path / "two")])
    for name in ("some-thing", "Some_Thing", "other"):
        assert entry_points.installed_version(name) == importlib.metadata.version(name)
    assert entry_points.installed_version("some-thing") == "2.0"
    assert entry_points.installed_version("absent") is None
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("absent")


def _importlib_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_an_installed_version_in_the_old_layouts_as_importlib_finds_it(
    path: list[str], tmp_path: Path
) -> None:
    site, egg = tmp_path / "site", tmp_path / "Some_Egg-3.0-py3.11.egg"
    site.mkdir()
    flat = site / "Flat-1.0-py3.11.egg-info"  # distutils': a file, PKG-INFO itself
    flat.write_text("Metadata-Version: 1.0\nName: Flat\nVersion: 1.0\n")
    _dist(egg, "EGG-INFO", None, name="Some-Egg", version="3.0")  # easy_install's, unzipped
    path.extend([str(site), str(egg)])
    names = ("flat", "FLAT", "some-egg", "Some_Egg", "some.egg", "some")
    assert [entry_points.installed_version(n) for n in names] == [
        _importlib_version(n) for n in names
    ]
    assert entry_points.installed_version("flat") == "1.0"
    assert entry_points.installed_version("some-egg") == "3.0"
