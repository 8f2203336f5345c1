"""A command run as a user files can be closed to: the tests run as root, who reads through
any permission, so root runs it without the capabilities that bypass them (``setpriv``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence

import pytest

__all__ = ["run_unprivileged"]


def run_unprivileged(
    argv: Sequence[str], env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """``argv`` run to its end, its output captured as text; the test is skipped where the
    capabilities cannot be dropped."""
    command = list(argv)
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("needs setpriv to drop root's file capabilities")
        caps = "-dac_override,-dac_read_search"
        command = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", *command]
    done = subprocess.run(command, capture_output=True, text=True, env=dict(env), check=False)
    if "setpriv:" in done.stderr:
        pytest.skip(f"cannot drop capabilities here: {done.stderr.strip()}")
    return done
