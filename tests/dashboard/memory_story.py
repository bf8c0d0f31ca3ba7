"""A subject's memory written through real merges: a fact, a policy derived from it, another
fact; then an update that supersedes the fact and turns the policy stale."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from memorypr.agents.models import Agent, Namespace
from memorypr.pulls.models import KnowledgePullRequest
from tests.facts.kprs import create, merged, update


@dataclass
class Story:
    first: KnowledgePullRequest
    second: KnowledgePullRequest
    between: datetime  # after the first merge, before the second


def coffee_story(agent: Agent, namespace: Namespace, *, subject: str = "user-1") -> Story:
    first = merged(
        agent,
        namespace,
        create("likes_coffee", "user likes coffee"),
        create(
            "offer_coffee_when_tired",
            "offer coffee when tired",
            category="derived",
            derived_from=["likes_coffee"],
        ),
        create("home_city", "Beijing"),
        subject=subject,
    )
    between = timezone.now()
    second = merged(
        agent, namespace, update("likes_coffee", "user likes coffee", "drinks tea now"), subject=subject
    )
    return Story(first=first, second=second, between=between)
