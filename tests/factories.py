from __future__ import annotations

from typing import Any

import factory

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import agent_create


class NamespaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Namespace
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"ns-{n}")


def agent_with_token(
    *, name: str = "proposer", namespaces: list[str] | None = None, trust: str = "normal"
) -> tuple[Agent, str]:
    return agent_create(name=name, namespaces=namespaces or ["demo"], trust=trust)


def operation_payload(**overrides: Any) -> dict[str, Any]:
    op: dict[str, Any] = {
        "action": "CREATE",
        "category": "user_profile",
        "key": "home_city",
        "oldValue": None,
        "newValue": "Beijing",
        "confidence": 0.95,
        "evidence": {"rawMessageQuote": "I live in Beijing.", "timestamp": 1732000000000},
    }
    op.update(overrides)
    return op


def pull_payload(*operations: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "sourceSessionId": "session-1",
        "proposedBy": "proposer_agent_v1",
        "subject": "user-1",
        "operations": list(operations) or [operation_payload()],
    }
    body.update(overrides)
    return body
