"""Agent trust level.

Protects against proposers that have not earned automatic writes: every operation of a
low-trust agent goes to a person, whatever the other checks say.
"""

from __future__ import annotations

from memorypr.agents.models import Agent
from reviewer.rules.base import OperationView, Outcome, PullView, escalate, passed

NAME = "trust"


def check(pull: PullView, op: OperationView) -> Outcome:
    if pull.agent_trust == Agent.Trust.LOW:
        return escalate(f"agent '{pull.agent_name}' has low trust: its changes need a person")
    return passed(f"agent '{pull.agent_name}' has {pull.agent_trust} trust")
