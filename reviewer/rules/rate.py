"""Agent rate.

Protects against a runaway or compromised proposer flooding memory: when an agent has
submitted more KPRs to the namespace in the past hour than the policy allows (default 600),
its further KPRs go to a person instead of merging automatically.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView, escalate, passed

NAME = "rate"


def check(pull: PullView, op: OperationView) -> Outcome:
    limit, count = pull.policy.agent_hourly_limit, pull.agent_pulls_last_hour
    if count > limit:
        return escalate(f"agent '{pull.agent_name}' submitted {count} KPRs in the past hour (limit {limit})")
    return passed(f"{count} KPRs in the past hour (limit {limit})")
