"""The plugin host: entry-point loading, broken plugins, typed hook calls, choosing claims."""

from __future__ import annotations

import ast
import importlib.metadata
import sys
import types
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import ROOT
from hypothesis import given
from hypothesis import strategies as st
from plugin_stubs import FakeDist, installed_only

from asf_core import hookimpl, plugins
from asf_core.errors import AmbiguousFormat, PluginError
from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreError,
    Unit,
)
from asf_core.model import Entry, Header, Item
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.plugins import AsfPluginManager, make_plugin_manager
from asf_core.walk import unsearchable
from asf_core.writer import SessionBuilder

# --- fakes -------------------------------------------------------------------------------


class ToyStore:
    """A store handle that remembers which plugin opened it and whether it was closed."""

    def __init__(self, owner: str, path: Path) -> None:
        self.owner = owner
        self.path = path
        self.closed = 0

    def info(self) -> dict[str, Any]:
        return {"owner": self.owner}

    def close(self) -> None:
        self.closed += 1


class Toy:
    """A format plugin claiming ``*.toy`` files; each line ``id text`` is one session."""

    def __init__(self, fmt: str = "toy", confidence: float = 1.0, fail: str = "") -> None:
        self.fmt = fmt
        self.confidence = confidence
        self.fail = fail
        self.calls: list[str] = []

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        self.calls.append("discover")
        if self.fail == "discover":
            raise RuntimeError("discover exploded")
        if path is None or path.suffix != ".toy":
            return None
        return [Claim(format=self.fmt, path=path, confidence=self.confidence)]

    @hookimpl
    def open_store(self, claim: Claim) -> ToyStore | None:
        self.calls.append("open_store")
        if self.fail == "open_store":
            raise OSError("cannot open")
        return ToyStore(self.fmt, claim.path) if claim.format == self.fmt else None

    @hookimpl
    def read(self, store: ToyStore) -> Iterator[NativeSession | Finding] | None:
        self.calls.append("read")
        if store.owner != self.fmt:
            return None
        return self._read(store)

    def _read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        for number, line in enumerate(store.path.read_text().splitlines(), 1):
            if self.fail == "read" and number == 2:
                raise ValueError("line 2 is cursed")
            ident, _, text = line.partition(" ")
            if not text:
                yield Finding(kind="stray", message="no text", unit=f"line {number}")
                continue
            yield NativeSession(id=ident, title=text, counts={"lines": 1}, native=text)

    @hookimpl
    def convert(
        self, store: ToyStore, sessions: Iterable[NativeSession]
    ) -> Iterator[ConvertedSession | Finding] | None:
        self.calls.append("convert")
        if store.owner != self.fmt:
            return None
        return self._convert(sessions)

    def _convert(self, sessions: Iterable[NativeSession]) -> Iterator[ConvertedSession | Finding]:
        for n, native in enumerate(sessions):
            if self.fail == "convert" and n == 1:
                raise KeyError("second session")
            if self.fail == "interrupt" and n == 1:
                raise KeyboardInterrupt
            builder = SessionBuilder(
                Header(id=f"toy-{native.id}", created_at="2026-01-01T00:00:00Z")
            )
            text = str(native.native)
            item = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            }
            builder.append(Item(ts="2026-01-01T00:00:01Z", item=item))
            yield ConvertedSession(
                header=builder.header,
                entries=builder.entries,
                name=native.id,
                counts={"sessions": 1},
            )


class Greedy:
    """Answers every hook for any input: it must never be reached through a subset caller."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def open_store(self, claim: Claim) -> ToyStore:
        self.calls.append("open_store")
        return ToyStore("greedy", claim.path)

    @hookimpl
    def read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        self.calls.append("read")
        return iter([NativeSession(id="greedy")])

    @hookimpl
    def convert(self, store: ToyStore, sessions: Iterable[NativeSession]) -> Iterator[Finding]:
        self.calls.append("convert")
        return iter([Finding(kind="info", message="greedy")])


@pytest.fixture
def dists(monkeypatch: pytest.MonkeyPatch) -> list[FakeDist]:
    """The installed distributions the host sees: only the ones a test adds."""
    installed: list[FakeDist] = []
    installed_only(monkeypatch, installed)
    return installed


def fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: object) -> str:
    """Put a module in ``sys.modules`` so an entry point can name it."""
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return name


@pytest.fixture
def pm() -> AsfPluginManager:
    """A fresh manager with no entry points: each test registers what it needs."""
    return make_plugin_manager(autoload=False)


def _toy_file(tmp_path: Path, text: str = "a hello\nb world\n") -> Path:
    path = tmp_path / "log.toy"
    path.write_text(text)
    return path


# --- the four hooks ----------------------------------------------------------------------


def test_hook_discover(tmp_path: Path) -> None:
    toy, other = Toy("toy", 0.9), Toy("other", 0.4)
    pm = make_plugin_manager(plugins=[("toy", toy), ("other", other)], autoload=False)
    path = _toy_file(tmp_path)

    found = host.discover(pm, path)

    assert found.failures == ()
    assert sorted((c.plugin, c.claim.format, c.claim.confidence) for c in found.candidates) == [
        ("other", "other", 0.4),
        ("toy", "toy", 0.9),
    ]
    assert host.discover(pm, tmp_path / "x.txt").candidates == ()
    assert host.discover(pm, None).candidates == ()  # no default locations
    assert toy.calls == ["discover"] * 3


def test_hook_discover_failure_names_plugin_and_spares_others(tmp_path: Path) -> None:
    pm = make_plugin_manager(
        plugins=[("bad", Toy("bad", fail="discover")), ("toy", Toy())], autoload=False
    )
    found = host.discover(pm, _toy_file(tmp_path))
    assert [c.plugin for c in found.candidates] == ["toy"]
    (failure,) = found.failures
    assert failure.plugin == "bad"
    assert "plugin 'bad' failed in discover: RuntimeError: discover exploded" in str(failure)


def test_a_hook_calling_sys_exit_is_the_plugins_failure(tmp_path: Path) -> None:
    """``SystemExit`` is no ``Exception``: from a hook it ended the whole run, the other
    plugins' stores unconverted, with exit code 1. It is a plugin failure like any other."""

    class Quitter(Toy):
        @hookimpl
        def discover(self, path: Path | None) -> list[Claim] | None:
            raise SystemExit("usage: quitter PATH")

    pm = make_plugin_manager(plugins=[("quit", Quitter()), ("toy", Toy())], autoload=False)
    found = host.discover(pm, _toy_file(tmp_path))
    assert [c.plugin for c in found.candidates] == ["toy"]
    (failure,) = found.failures
    assert str(failure) == "plugin 'quit' failed in discover: SystemExit: usage: quitter PATH"
    with (
        pytest.raises(PluginError, match=r"'quit' failed in read: SystemExit: 2"),
        host.blame("quit", "read"),
    ):
        raise SystemExit(2)


def test_hook_discover_rejects_a_non_claim(pm: AsfPluginManager, tmp_path: Path) -> None:
    class Wrong:
        @hookimpl
        def discover(self, path: Path | None) -> list[str]:
            return ["not a claim"]

    pm.add_plugin("wrong", lambda: Wrong())
    (failure,) = host.discover(pm, tmp_path).failures
    assert "returned str, not Claim" in str(failure)


@pytest.mark.parametrize(
    "finding",
    [
        Finding(kind="stray", message="odd line"),
        Finding(kind="warning", code="slow-disk", message="slow", path="/x"),
        Finding(kind="warning", code="unsearchable", message="cannot search"),
    ],
)
def test_hook_discover_rejects_a_finding_other_than_an_unsearchable_folder(
    pm: AsfPluginManager, tmp_path: Path, finding: Finding
) -> None:
    """Only ``unsearchable`` warnings naming a folder may come with claims: anything else
    was printed bare (no plugin named, no path) and turned the exit code to 3 unexplained."""

    class Chatty:
        @hookimpl
        def discover(self, path: Path | None) -> list[Claim | Finding]:
            return [finding]

    pm.add_plugin("chatty", lambda: Chatty())
    found = host.discover(pm, tmp_path)
    assert found.skipped == ()
    (failure,) = found.failures
    assert str(failure).startswith("plugin 'chatty' failed in discover: yielded a ")
    assert str(failure).endswith(", not an unsearchable folder")


def test_hook_discover_passes_on_unsearchable_folders(pm: AsfPluginManager, tmp_path: Path) -> None:
    class Closed:
        @hookimpl
        def discover(self, path: Path | None) -> list[Claim | Finding]:
            return [unsearchable(tmp_path / "closed", "permission denied")]

    pm.add_plugin("closed", lambda: Closed())
    found = host.discover(pm, tmp_path)
    assert (found.failures, [f.path for f in found.skipped]) == ((), [str(tmp_path / "closed")])


def test_hook_open_store(pm: AsfPluginManager, tmp_path: Path) -> None:
    toy, greedy = Toy(), Greedy()
    pm.add_plugin("toy", lambda: toy)
    pm.add_plugin("greedy", lambda: greedy)
    claim = Claim(format="toy", path=_toy_file(tmp_path), confidence=1)

    store = host.open_store(pm, Candidate(claim=claim, plugin="toy"))

    assert isinstance(store, ToyStore)
    assert store.owner == "toy"
    assert greedy.calls == []  # only the claiming plugin answers
    with pytest.raises(PluginError, match="plugin 'toy' failed in open_store: could not open"):
        host.open_store(
            pm, Candidate(claim=Claim(format="x", path=claim.path, confidence=1), plugin="toy")
        )


def test_hook_open_store_exception_names_plugin(pm: AsfPluginManager, tmp_path: Path) -> None:
    pm.add_plugin("flaky", lambda: Toy("flaky", fail="open_store"))
    claim = Claim(format="flaky", path=tmp_path, confidence=1)
    with pytest.raises(PluginError, match=r"'flaky' failed in open_store: OSError: cannot open"):
        host.open_store(pm, Candidate(claim=claim, plugin="flaky"))


class Damaged(Toy):
    """Says its stores are damaged: at opening, or part way through reading (``fail``)."""

    @hookimpl
    def open_store(self, claim: Claim) -> ToyStore | None:
        if self.fail == "open_store":
            raise StoreError("truncated: 10 of 4096 bytes")
        return ToyStore(self.fmt, claim.path)

    def _read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        yield NativeSession(id="first")
        raise StoreError("page 3 is unreadable")


def test_hook_open_store_damaged_store_is_not_a_plugin_failure(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    pm.add_plugin("damaged", lambda: Damaged("damaged", fail="open_store"))
    claim = Claim(format="damaged", path=tmp_path / "x.toy", confidence=1)
    with pytest.raises(StoreError) as caught:
        host.open_store(pm, Candidate(claim=claim, plugin="damaged"))
    assert not isinstance(caught.value, PluginError)
    assert host.store_problem(caught.value) == "truncated: 10 of 4096 bytes"
    assert host.store_problem(StoreError("two\n lines ")) == "two; lines"
    assert host.store_problem(StoreError()) == "cannot be read"


def test_hook_read_damage_found_part_way_goes_up_as_it_is(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    pm.add_plugin("damaged", lambda: Damaged("damaged"))
    store = ToyStore("damaged", _toy_file(tmp_path))
    got: list[object] = []
    with pytest.raises(StoreError, match="page 3 is unreadable"):
        got.extend(host.read(pm, "damaged", store))
    assert [type(i).__name__ for i in got] == ["NativeSession"]
    sessions = (i for i in host.read(pm, "damaged", store) if isinstance(i, NativeSession))
    with pytest.raises(StoreError, match="page 3 is unreadable"):  # through convert as well
        list(host.convert(pm, "damaged", store, sessions))


def test_hook_read(pm: AsfPluginManager, tmp_path: Path) -> None:
    toy, greedy = Toy(), Greedy()
    pm.add_plugin("toy", lambda: toy)
    pm.add_plugin("greedy", lambda: greedy)
    store = ToyStore("toy", _toy_file(tmp_path, "a hello\nlonely\nb world\n"))

    items = list(host.read(pm, "toy", store))

    assert [type(i).__name__ for i in items] == ["NativeSession", "Finding", "NativeSession"]
    assert [i.id for i in items if isinstance(i, NativeSession)] == ["a", "b"]
    assert greedy.calls == []


class Choosy(Toy):
    """Takes the opt-in ``selection`` of ``read`` and ``convert``, and remembers it."""

    def __init__(self) -> None:
        super().__init__()
        self.selections: list[Selection] = []

    @hookimpl
    def read(  # type: ignore[override]
        self, store: ToyStore, selection: Selection
    ) -> Iterator[NativeSession | Finding] | None:
        self.selections.append(selection)
        items = super().read(store)
        if items is None:
            return None
        return (i for i in items if not isinstance(i, NativeSession) or selection.matches(i))

    @hookimpl
    def convert(  # type: ignore[override]
        self, store: ToyStore, sessions: Iterable[NativeSession], selection: Selection
    ) -> Iterator[ConvertedSession | Finding] | None:
        self.selections.append(selection)
        return super().convert(store, sessions)


def test_hook_read_selection_is_an_opt_in_argument(pm: AsfPluginManager, tmp_path: Path) -> None:
    """A plugin declaring ``selection`` gets it; one that does not (Toy) still works, and the
    host narrows what either yields."""
    from asf_core.selecting import filtered

    choosy, plain = Choosy(), Toy(fmt="plain")
    pm.add_plugin("choosy", lambda: choosy)
    pm.add_plugin("plain", lambda: plain)
    path = _toy_file(tmp_path, "apple one\nbanana two\nlonely\napricot three\n")
    wanted = Selection(ids=("ap",))

    mine = list(host.read(pm, "choosy", ToyStore("toy", path), wanted))
    theirs = list(filtered(host.read(pm, "plain", ToyStore("plain", path), wanted), wanted))
    everything = list(host.read(pm, "plain", ToyStore("plain", path)))

    assert choosy.selections == [wanted]
    assert [i.id for i in mine if isinstance(i, NativeSession)] == ["apple", "apricot"]
    assert [i.id for i in theirs if isinstance(i, NativeSession)] == ["apple", "apricot"]
    assert not any(isinstance(i, Finding) for i in theirs)  # the store's other findings go
    assert len(everything) == 4  # unselected: every session and the stray
    natives = [i for i in mine if isinstance(i, NativeSession)]
    converted = list(host.convert(pm, "choosy", ToyStore("toy", path), natives, wanted))
    assert choosy.selections[-1] == wanted
    assert [c.name for c in converted if isinstance(c, ConvertedSession)] == ["apple", "apricot"]


def test_hook_default_locations(pm: AsfPluginManager, tmp_path: Path) -> None:
    class Looks:
        @hookimpl
        def default_locations(self) -> list[Path] | None:
            return [tmp_path / "nowhere", tmp_path / "else"]

    class Silent:
        @hookimpl
        def default_locations(self) -> list[Path] | None:
            return None

    class Broken:
        @hookimpl
        def default_locations(self) -> list[Path] | None:
            raise RuntimeError("no idea")

    pm.add_plugin("looks", Looks)
    pm.add_plugin("silent", Silent)
    pm.add_plugin("broken", Broken)
    pm.add_plugin("toy", Toy)  # implements no default_locations

    assert host.default_locations(pm) == {"looks": [tmp_path / "nowhere", tmp_path / "else"]}


def test_hook_read_failure_mid_way_names_plugin(pm: AsfPluginManager, tmp_path: Path) -> None:
    pm.add_plugin("toy", lambda: Toy(fail="read"))
    store = ToyStore("toy", _toy_file(tmp_path))
    got: list[object] = []
    with pytest.raises(PluginError, match=r"'toy' failed in read: ValueError: line 2 is cursed"):
        got.extend(host.read(pm, "toy", store))
    assert len(got) == 1  # the first session arrived before the failure


def test_hook_convert(pm: AsfPluginManager, tmp_path: Path) -> None:
    toy, greedy = Toy(), Greedy()
    pm.add_plugin("toy", lambda: toy)
    pm.add_plugin("greedy", lambda: greedy)
    store = ToyStore("toy", _toy_file(tmp_path))
    natives = [s for s in host.read(pm, "toy", store) if isinstance(s, NativeSession)]

    converted = list(host.convert(pm, "toy", store, natives))

    assert [c.name for c in converted if isinstance(c, ConvertedSession)] == ["a", "b"]
    first = converted[0]
    assert isinstance(first, ConvertedSession)
    assert first.entries[0].id is not None
    assert greedy.calls == []


def test_hook_convert_failure_names_plugin(pm: AsfPluginManager, tmp_path: Path) -> None:
    pm.add_plugin("toy", lambda: Toy(fail="convert"))
    store = ToyStore("toy", _toy_file(tmp_path))
    natives = [s for s in host.read(pm, "toy", store) if isinstance(s, NativeSession)]
    with pytest.raises(PluginError, match=r"'toy' failed in convert: KeyError"):
        list(host.convert(pm, "toy", store, natives))


def test_convert_of_a_failing_read_keeps_the_reader_named(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    pm.add_plugin("toy", lambda: Toy(fail="read"))
    store = ToyStore("toy", _toy_file(tmp_path))
    with pytest.raises(PluginError, match="failed in read") as caught:
        list(host.convert(pm, "toy", store, host.read(pm, "toy", store)))  # type: ignore[arg-type]
    assert caught.value.hook == "read"


def test_hook_plan(pm: AsfPluginManager, tmp_path: Path) -> None:
    import plan_toy

    pm.add_plugin("ptoy", lambda: plan_toy.PlanToy())
    pm.add_plugin("greedy", lambda: Greedy())
    path = tmp_path / "s.ptoy"
    path.write_text("a one two\nb three\n")
    store = plan_toy.PlanStore(path)
    natives = [s for s in host.read(pm, "ptoy", store) if isinstance(s, NativeSession)]
    items = list(host.plan(pm, "ptoy", store, natives) or ())
    units = [u for u in items if isinstance(u, Unit)]
    assert [u.key for u in units] == ["a", "b"]
    assert all(len(u.fingerprint) == 64 for u in units)
    (session,) = [c for c in units[0].prepare()() if isinstance(c, ConvertedSession)]
    assert session.name == "a"
    # A plugin that does not plan is converted through ``convert``: None.
    pm.add_plugin("toy", lambda: Toy())
    assert host.plan(pm, "toy", ToyStore("toy", _toy_file(tmp_path)), []) is None


def test_hook_finish(pm: AsfPluginManager, tmp_path: Path) -> None:
    import plan_toy

    pm.add_plugin("ptoy", lambda: plan_toy.PlanToy())
    pm.add_plugin("toy", lambda: Toy())
    path = tmp_path / "s.ptoy"
    path.write_text("a one two\n")
    (found,) = host.finish(pm, "ptoy", plan_toy.PlanStore(path), {"words": 7})
    assert isinstance(found, Finding)
    assert found.data == {"words": 7}
    assert list(host.finish(pm, "toy", ToyStore("toy", path), {})) == []


def test_hook_stamp(pm: AsfPluginManager, tmp_path: Path) -> None:
    import plan_toy

    pm.add_plugin("ptoy", lambda: plan_toy.PlanToy())
    pm.add_plugin("toy", lambda: Toy())
    path = tmp_path / "s.ptoy"
    path.write_text("a one\n")
    (ptoy,) = host.discover(pm, path).candidates
    stamped = host.stamp(pm, ptoy)
    assert isinstance(stamped, str)
    assert host.stamp(pm, ptoy) == stamped
    path.write_text("a two\n")
    assert host.stamp(pm, ptoy) != stamped
    path.write_text("- not stamped\n")
    assert host.stamp(pm, ptoy) is None
    # A plugin without the hook gives none, and a stamp that is no string is its error.
    (toy,) = host.discover(pm, _toy_file(tmp_path)).candidates
    assert host.stamp(pm, toy) is None

    class Odd:
        @hookimpl
        def stamp(self, claim: Claim) -> object:
            return 42

    pm.add_plugin("odd", lambda: Odd())
    with pytest.raises(PluginError, match="not a string"):
        host.stamp(pm, Candidate(plugin="odd", claim=toy.claim))


def test_hook_personal(pm: AsfPluginManager) -> None:
    """Every plugin is asked; the answers merge by kind; one that fails or answers what is
    not text values by kind is its error (a redaction without its values could leak)."""
    header = Header(id="s", created_at="2026-01-01T00:00:00Z", unknown={"mine": {}})

    class Mine:
        @hookimpl
        def personal(self, header: Header, entries: Sequence[Entry]) -> Any:
            return {"user_id": ["u-1"], "chat_id": ["c-9"]} if "mine" in header.unknown else None

    class Also:
        @hookimpl
        def personal(self, entries: Sequence[Entry]) -> Any:
            return {"user_id": [f"u-{len(entries)}"]}

    pm.add_plugin("mine", lambda: Mine())
    pm.add_plugin("also", lambda: Also())
    pm.add_plugin("toy", lambda: Toy())  # implements no personal
    found = host.personal(pm, header, [])
    assert sorted(found) == ["chat_id", "user_id"]
    assert sorted(found["user_id"]) == ["u-0", "u-1"]
    assert host.personal(pm, Header(id="t", created_at="2026-01-01T00:00:00Z"), []) == {
        "user_id": ["u-0"]
    }

    class Odd:
        @hookimpl
        def personal(self) -> Any:
            return {"user_id": "u-1"}  # a string, not a list of them

    class Broken:
        @hookimpl
        def personal(self) -> Any:
            raise RuntimeError("cannot tell")

    for name, plugin, why in [
        ("odd", Odd, "returned what is not text values by kind"),
        ("broken", Broken, "RuntimeError: cannot tell"),
    ]:
        other = make_plugin_manager(plugins=[(name, plugin())], autoload=False)
        with pytest.raises(PluginError, match=f"'{name}' failed in personal: {why}"):
            host.personal(other, header, [])


# --- loading -----------------------------------------------------------------------------


def test_entry_point_plugin_is_registered_with_its_distribution(
    dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = fake_module(monkeypatch, "asf_fake_toy", PLUGIN=Toy())
    dists.append(FakeDist("asf-toy", {"toy": f"{module}:PLUGIN"}, version="2.5"))

    pm = make_plugin_manager()

    (record,) = pm.records()
    assert (record.name, record.distribution, record.version, record.status) == (
        "toy",
        "asf-toy",
        "2.5",
        "ok",
    )
    assert record.hooks == ("convert", "discover", "open_store", "read")


def test_a_name_two_distributions_declare_goes_to_the_first_by_distribution_name(
    dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever order the entry points are found in, as docs/plugins.md says: the other
    declaration is a broken row naming the distribution that has the name."""
    late = fake_module(monkeypatch, "asf_fake_late", PLUGIN=Toy("toy"))
    early = fake_module(monkeypatch, "asf_fake_early", PLUGIN=Toy("toy"))
    dists.append(FakeDist("zz-toys", {"toy": f"{late}:PLUGIN"}))
    dists.append(FakeDist("aa-toys", {"toy": f"{early}:PLUGIN"}))

    pm = make_plugin_manager()

    rows = [(r.name, r.distribution, r.status, r.error) for r in pm.records()]
    assert rows == [
        ("toy", "aa-toys", "ok", None),
        ("toy", "zz-toys", "broken", "the name 'toy' is already taken by aa-toys"),
    ]
    assert "plugin 'toy' (distribution zz-toys) not loaded" in capsys.readouterr().err


@pytest.mark.parametrize("error", ["ImportError", "SystemExit"])
def test_plugin_whose_import_fails_is_a_broken_row(
    dists: list[FakeDist],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    error: str,
) -> None:
    """A module that calls ``sys.exit()`` as it loads is broken like one that cannot import,
    not the end of every command."""
    (tmp_path / "asf_fake_broken.py").write_text(f"raise {error}('needs libfoo')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "asf_fake_broken", raising=False)
    good = fake_module(monkeypatch, "asf_fake_good", PLUGIN=Toy())
    dists.append(FakeDist("asf-broken", {"broken": "asf_fake_broken"}))
    dists.append(FakeDist("asf-good", {"toy": f"{good}:PLUGIN"}))

    pm = make_plugin_manager()

    assert pm.plugin_names() == ["toy"]
    broken = [r for r in pm.records() if r.status == "broken"]
    assert [(r.name, r.distribution) for r in broken] == [("broken", "asf-broken")]
    assert f"{error}: needs libfoo" in broken[0].error
    err = capsys.readouterr().err
    assert f"plugin 'broken' (distribution asf-broken) not loaded: {error}: needs libfoo" in err


def test_hookimpl_that_does_not_match_its_spec_is_broken(
    dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    @hookimpl
    def discover(path: Path | None, colour: str) -> None:
        return None

    module = fake_module(monkeypatch, "asf_fake_badarg", discover=discover)
    dists.append(FakeDist("asf-badarg", {"badarg": module}))

    pm = make_plugin_manager()

    assert pm.plugin_names() == []
    (record,) = pm.records()
    assert record.status == "broken"
    assert "colour" in record.error
    assert "asf-badarg" in capsys.readouterr().err


def test_hookimpl_with_a_misspelt_hook_name_is_broken(
    dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch
) -> None:
    @hookimpl
    def discovr(path: Path | None) -> None:
        return None

    module = fake_module(monkeypatch, "asf_fake_typo", discovr=discovr)
    good = fake_module(monkeypatch, "asf_fake_good2", PLUGIN=Toy())
    dists.append(FakeDist("asf-typo", {"typo": module}))
    dists.append(FakeDist("asf-good", {"toy": f"{good}:PLUGIN"}))

    pm = make_plugin_manager()  # check_pending passes: the bad plugin is gone

    assert pm.plugin_names() == ["toy"]
    assert [r.name for r in pm.records() if r.status == "broken"] == ["typo"]
    assert "discovr" in pm.records()[1].error


def test_two_distributions_with_one_name(
    dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = fake_module(monkeypatch, "asf_fake_one", PLUGIN=Toy())
    second = fake_module(monkeypatch, "asf_fake_two", PLUGIN=Toy())
    dists.append(FakeDist("asf-one", {"toy": f"{first}:PLUGIN"}))
    dists.append(FakeDist("asf-two", {"toy": f"{second}:PLUGIN"}))
    pm = make_plugin_manager()
    assert pm.plugin_names() == ["toy"]
    assert [(r.distribution, r.status) for r in pm.records()] == [
        ("asf-one", "ok"),
        ("asf-two", "broken"),
    ]


def test_disable_autoload_env(dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch) -> None:
    module = fake_module(monkeypatch, "asf_fake_toy3", PLUGIN=Toy())
    dists.append(FakeDist("asf-toy", {"toy": f"{module}:PLUGIN"}))
    monkeypatch.setenv(plugins.DISABLE_AUTOLOAD_ENV, "1")
    assert make_plugin_manager().plugin_names() == []
    assert make_plugin_manager(plugins=[("mine", Toy("mine"))]).plugin_names() == ["mine"]


def test_only_env_loads_the_named_plugins(
    dists: list[FakeDist], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a = fake_module(monkeypatch, "asf_fake_a", PLUGIN=Toy("a"))
    b = fake_module(monkeypatch, "asf_fake_b", PLUGIN=Toy("b"))
    dists.append(FakeDist("asf-ab", {"a": f"{a}:PLUGIN", "b": f"{b}:PLUGIN"}))
    monkeypatch.setenv(plugins.ONLY_ENV, "b, nosuch")
    assert make_plugin_manager().plugin_names() == ["b"]
    assert "ASF_PLUGINS names 'nosuch', which is not installed" in capsys.readouterr().err
    monkeypatch.setenv(plugins.DISABLE_AUTOLOAD_ENV, "1")  # explicit names still load
    assert make_plugin_manager().plugin_names() == ["b"]


def test_trace_env_logs_hook_calls(
    dists: list[FakeDist],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(plugins.TRACE_ENV, "1")
    pm = make_plugin_manager(plugins=[("toy", Toy())])
    host.discover(pm, _toy_file(tmp_path))
    err = capsys.readouterr().err
    assert "asf: trace: discover(path=" in err
    assert "[toy]" in err
    assert "returned [[Claim(format='toy'" in err


def test_hermes_is_an_asf_formats_entry_point() -> None:
    points = importlib.metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)
    assert points["hermes"].value == "hermes_plugin.plugin"


def test_asf_core_never_imports_hermes_plugin() -> None:
    for source in sorted((ROOT / "asf_core").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "hermes_plugin" for n in names), source


# --- choosing a claim --------------------------------------------------------------------


def _cand(fmt: str, confidence: float, plugin: str | None = None, path: str = "/s") -> Candidate:
    claim = Claim(format=fmt, path=Path(path), confidence=confidence)
    return Candidate(claim=claim, plugin=plugin or fmt)


def test_highest_confidence_wins() -> None:
    chosen = host.choose([_cand("a", 0.4), _cand("b", 0.9), _cand("c", 0.1)])
    assert chosen is not None
    assert chosen.claim.format == "b"


def test_equal_highest_confidence_is_ambiguous_and_format_resolves_it() -> None:
    candidates = [_cand("a", 0.9), _cand("b", 0.9), _cand("c", 0.2)]
    with pytest.raises(AmbiguousFormat, match=r"a \(0.9\), b \(0.9\); choose one with --format"):
        host.choose(candidates)
    chosen = host.choose(candidates, format="c")
    assert chosen is not None
    assert chosen.claim.format == "c"
    assert host.choose(candidates, format="zzz") is None


def test_one_format_claiming_twice_is_not_ambiguous() -> None:
    chosen = host.choose([_cand("a", 0.9), _cand("a", 0.9)])
    assert chosen is not None
    assert chosen.claim.format == "a"


def test_two_plugins_of_one_format_claiming_alike_are_ambiguous_and_a_name_resolves_it() -> None:
    """Which of two implementations of a format reads a store is the user's choice, never
    the order plugins loaded in; ``--format`` takes a plugin's name as well as a format's."""
    candidates = [_cand("a", 0.9, plugin="a-fast"), _cand("a", 0.9, plugin="a-ref")]
    with pytest.raises(AmbiguousFormat):
        host.choose(candidates)
    with pytest.raises(AmbiguousFormat):
        host.choose(candidates, format="a")
    for name in ("a-fast", "a-ref"):
        chosen = host.choose(candidates, format=name)
        assert chosen is not None
        assert chosen.plugin == name


def test_group_by_path_merges_spellings_of_one_store(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    a = _cand("a", 1, path=str(tmp_path / "d" / ".." / "s"))
    b = _cand("b", 1, path=str(tmp_path / "s"))
    assert list(host.group_by_path([a, b]).values()) == [[a, b]]


@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=6
    ),
    st.randoms(use_true_random=False),
)
def test_choice_never_depends_on_plugin_order(claims: list[tuple[str, float]], rnd: Any) -> None:
    candidates = [_cand(f, c) for f, c in claims]
    shuffled = list(candidates)
    rnd.shuffle(shuffled)

    def outcome(cs: list[Candidate]) -> tuple[str, ...]:
        try:
            chosen = host.choose(cs)
        except AmbiguousFormat as exc:
            return ("ambiguous", *(c.claim.format for c in exc.candidates))
        assert chosen is not None
        return ("chosen", chosen.claim.format)

    assert outcome(candidates) == outcome(shuffled)
    best = max(c for _, c in claims)
    top = sorted({f for f, c in claims if c == best})
    assert outcome(candidates) == (("chosen", top[0]) if len(top) == 1 else ("ambiguous", *top))
