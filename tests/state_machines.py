"""Running the state machines (slow tests: ``ASF_TEST_SLOW=1``, as CI runs them):
``ASF_STATE_EXAMPLES`` examples of ``ASF_STATE_STEPS`` steps each (10 and 30 by default);
``ASF_STATE_NO_SHRINK=1`` reports a failure as found, without shrinking it (to try breakages
of what a machine checks)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

EXAMPLES = int(os.environ.get("ASF_STATE_EXAMPLES", "10"))
STEPS = int(os.environ.get("ASF_STATE_STEPS", "30"))


def run_machine(machine: type[RuleBasedStateMachine]) -> None:
    """Run ``machine`` as a test, as long as the environment says."""
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            phases=[Phase.generate] if os.environ.get("ASF_STATE_NO_SHRINK") else list(Phase),
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
