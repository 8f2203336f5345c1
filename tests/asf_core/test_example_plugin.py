"""The example third-party plugin (examples/asf-format-example): its hooks, and the real install.

Unit tests load it from its source tree through a fake distribution, so they run whether or
not it is installed; the last test needs it installed (``pip install -e``) and uses the real
entry point, as a user's ``asf`` would.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from fixture_paths import ROOT, VECTORS
from plugin_stubs import FakeDist, installed_only

from asf_core import plugins
from asf_core.cli.main import ExitCode, main
from asf_core.formats import ConvertedSession, Finding, NativeSession
from asf_core.layout import store_label
from asf_core.model import Config, Item, Response
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.plugins import AsfPluginManager, make_plugin_manager
from asf_core.reader import parse_session
from asf_core.verify.session import verify_path
from asf_core.writer import entry_line, header_line

EXAMPLE = ROOT / "examples" / "asf-format-example"
SAMPLE = EXAMPLE / "samples" / "sample.chat.jsonl"
INSTALL = "pip install --no-deps --no-build-isolation -e examples/asf-format-example"


@pytest.fixture
def pm(monkeypatch: pytest.MonkeyPatch) -> AsfPluginManager:
    """A manager whose only plugin is the example, loaded from source by its entry point."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    installed_only(
        monkeypatch, [FakeDist("asf-format-example", {"chatlog": "asf_format_example.plugin"})]
    )
    return make_plugin_manager()


def _log(tmp_path: Path, *lines: dict[str, object] | str, name: str = "t.chat.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _convert(
    pm: AsfPluginManager, path: Path
) -> tuple[list[NativeSession], list[ConvertedSession], list[Finding]]:
    (candidate,) = host.discover(pm, path).candidates
    store = host.open_store(pm, candidate)
    natives: list[NativeSession] = []
    findings: list[Finding] = []
    for item in host.read(pm, candidate.plugin, store):
        (natives if isinstance(item, NativeSession) else findings).append(item)  # type: ignore[arg-type]
    converted: list[ConvertedSession] = []
    for out in host.convert(pm, candidate.plugin, store, natives):
        (converted if isinstance(out, ConvertedSession) else findings).append(out)  # type: ignore[arg-type]
    host.close_store(candidate.plugin, store)
    findings.extend(f for c in converted for f in c.findings)
    return natives, converted, findings


def test_discover_claims_chat_logs_only(pm: AsfPluginManager, tmp_path: Path) -> None:
    assert pm.plugin_names() == ["chatlog"]
    (claim,) = [c.claim for c in host.discover(pm, SAMPLE).candidates]
    assert (claim.format, claim.path, claim.confidence) == ("chatlog", SAMPLE, 0.9)
    unnamed = _log(tmp_path, {"role": "user", "content": "hi", "ts": 1}, name="x.jsonl")
    assert [c.claim.confidence for c in host.discover(pm, unnamed).candidates] == [0.6]
    asf_file = VECTORS / "sessions" / "basic.jsonl"
    garbage = tmp_path / "g.bin"
    garbage.write_bytes(bytes(range(256)))
    for path in (asf_file, garbage, tmp_path / "missing.chat.jsonl"):
        assert host.discover(pm, path).candidates == (), path
    found = host.discover(pm, SAMPLE.parent)
    assert [c.claim.path for c in found.candidates] == [SAMPLE]


def test_sample_converts_to_sessions_that_read_back_clean(pm: AsfPluginManager) -> None:
    natives, converted, findings = _convert(pm, SAMPLE)
    assert [n.id for n in natives] == ["trip", "math"]
    assert sorted((f.kind, f.unit) for f in findings) == [
        ("dropped", "sample.chat.jsonl:4"),
        ("stray", "sample.chat.jsonl:8"),
        ("stray", "sample.chat.jsonl:9"),
    ]
    trip = converted[0]
    assert [type(e) for e in trip.entries] == [Config, Item, Item, Response, Item, Item, Response]
    data = header_line(trip.header) + b"".join(entry_line(e) for e in trip.entries)
    session = parse_session(data)
    assert session.problems == []
    assert [e.id for e in session.entries] == [e.id for e in trip.entries]
    assert [e.ts for e in converted[1].entries][:2] == [
        "2026-10-01T09:00:00Z",
        "2026-10-01T09:00:01.5Z",
    ]
    assert trip.entries[2].ts == "2026-10-01T09:00:09.25Z"  # respelled: no trailing zero


def test_conversion_is_deterministic(pm: AsfPluginManager) -> None:
    first = _convert(pm, SAMPLE)[1]
    again = _convert(pm, SAMPLE)[1]
    assert [(c.header, c.entries, c.name) for c in first] == [
        (c.header, c.entries, c.name) for c in again
    ]


def test_a_session_name_coming_back_is_a_continuation(pm: AsfPluginManager, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        {"session": "s/1", "role": "user", "content": "a", "ts": 1},
        {"session": "b", "role": "user", "content": "b", "ts": 2},
        {"session": "s/1", "role": "user", "content": "c", "ts": 3},
    )
    natives, converted, _ = _convert(pm, log)
    assert [(n.id, n.relation, n.parent) for n in natives] == [
        ("s/1", None, None),
        ("b", None, None),
        ("s/1~2", "continuation", "s/1"),
    ]
    assert converted[2].header.parent_session == converted[0].header.id
    names = [c.name for c in converted]
    assert len(set(names)) == 3
    assert all("/" not in n and n.endswith(".jsonl") for n in names)


def test_other_plugins_stores_are_not_answered(pm: AsfPluginManager) -> None:
    from asf_format_example import plugin  # the module under test, imported from source

    class Foreign:
        def info(self) -> dict[str, str]:
            return {}

        def close(self) -> None:
            pass

    assert plugin.read(Foreign()) is None
    assert plugin.convert(Foreign(), []) is None
    claim = host.discover(pm, SAMPLE).candidates[0].claim
    from asf_core.formats import Claim

    assert plugin.open_store(Claim(format="hermes", path=claim.path, confidence=1)) is None
    assert Candidate(claim=claim, plugin="chatlog").describe() == "chatlog (0.9)"


def test_installed_example_via_its_real_entry_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    points = importlib.metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)
    if "chatlog" not in points.names:
        pytest.skip(f"example plugin not installed; run: {sys.executable} -m {INSTALL}")
    for var in (plugins.DISABLE_AUTOLOAD_ENV, plugins.ONLY_ENV, plugins.TRACE_ENV):
        monkeypatch.delenv(var, raising=False)
    assert main(["plugins", "--json"]) in (ExitCode.OK, ExitCode.PLUGIN)
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["chatlog"]["distribution"] == "asf-format-example"
    assert rows["chatlog"]["status"] == "ok"
    assert "hermes" in rows
    log = tmp_path / "mine.chat.jsonl"
    shutil.copyfile(SAMPLE, log)
    out = tmp_path / "out"
    assert main(["list", str(log)]) == ExitCode.OK
    assert capsys.readouterr().err.splitlines()[-1] == (
        "asf: mine.chat.jsonl: 2 strays (details: asf convert, report.json)"
    )
    assert main(["convert", str(log), "-o", str(out), "--quiet"]) == ExitCode.OK  # auto-detected
    store_dir = out / "chatlog" / store_label(log)
    files = json.loads((store_dir / "report.json").read_text())["files"]
    assert sorted(files) == ["math.jsonl", "trip.jsonl"]
    assert sorted(
        p.relative_to(store_dir).as_posix() for p in store_dir.rglob("*.jsonl")
    ) == sorted(files.values())
    assert verify_path(out) == []
    assert main(["verify", str(out)]) == ExitCode.OK


def test_json_nested_too_deep_is_not_a_chat_log_nor_a_failure(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """``json.loads`` raises RecursionError, not ValueError, for a line nested thousands
    deep: ``discover`` must still answer None, and ``read`` make the line a stray."""
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    other = tmp_path / "deep.jsonl"
    other.write_bytes(deep)
    found = host.discover(pm, other)
    assert (found.candidates, found.failures) == ((), ())
    log = tmp_path / "deep.chat.jsonl"
    log.write_bytes(deep + SAMPLE.read_bytes())
    natives, _, findings = _convert(pm, log)
    assert [n.id for n in natives] == ["trip", "math"]
    assert ("stray", "deep.chat.jsonl:1") in [(f.kind, f.unit) for f in findings]


def test_the_code_docs_plugins_md_shows_is_the_example_plugins() -> None:
    """Every line of docs/plugins.md's Python blocks is a line of the example plugin's code
    (spacing and a trailing comment aside), so the guide cannot show code the example no
    longer has."""
    source = ROOT / "examples" / "asf-format-example" / "asf_format_example"
    lines = {
        " ".join(line.split("  # ", 1)[0].split())
        for path in sorted(source.glob("*.py"))
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    doc = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    shown = [
        " ".join(line.split())
        for block in re.findall(r"```python\n(.*?)```", doc, re.S)
        for line in block.splitlines()
        if line.strip()
    ]
    assert shown
    assert [line for line in shown if line not in lines] == []
