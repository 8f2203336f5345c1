"""Shared test configuration: where ../shared lives, hypothesis profiles."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from fixture_paths import SHARED
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (the state machines, the fuzzer over damaged databases, a live
    Hermes writer: a minute and more together) run where ``ASF_TEST_SLOW=1`` asks for them, as
    CI does (``.ci/run``), so that the README's test command stays a few minutes long."""
    if os.environ.get("ASF_TEST_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set ASF_TEST_SLOW=1 (CI runs these)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def pytest_configure(config: pytest.Config) -> None:
    """SIGINT delivered to the processes the tests start, however the suite was started. A
    shell ignores it for what it starts with ``&`` (no job control), children inherit that,
    and asf rightly keeps a signal it was started ignoring (``asf_core.cli.signals``): the
    tests that interrupt a run would see every SIGINT lost. A handler here becomes the
    default in each child at ``exec``; a test that wants it ignored says so in its child."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite the golden files under tests/golden from the current output",
    )


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"../shared not found at {SHARED} (set ASF_SHARED)")
    return SHARED


@pytest.fixture(scope="session")
def converted_homes(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every Hermes fixture release and the example home, converted with ``asf convert``.

    Each home is copied first (SQLite leaves ``-wal``/``-shm`` files beside a database it
    opens, and the sources must stay as they are); one output directory each, shared by the
    export tests.
    """
    import shutil

    from fixture_paths import RELEASES, ROOT

    from asf_core.cli.main import main

    work = tmp_path_factory.mktemp("converted")
    homes = [*RELEASES, ROOT / "examples" / "hermes-home"]
    dirs = []
    for n, home in enumerate(homes):
        copy = work / "homes" / f"{n:02d}-{home.name}"
        shutil.copytree(home, copy, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm"))
        target = work / f"{n:02d}-{home.name}"
        code = main(["convert", str(copy), "-o", str(target), "--quiet"])
        assert code == 0, f"asf convert {home} exited {code}"
        dirs.append(target)
    return dirs
