from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import agent_create, reviewer_create
from memorypr.celery import app as celery_app
from memorypr.pulls.models import KnowledgePullRequest, ReviewStatus
from memorypr.pulls.serializers import PullInSerializer
from memorypr.pulls.services import pull_human_decide, pull_submit
from memorypr.working_memory.services import turn_append

DEFAULT_FIXTURE = Path(settings.BASE_DIR) / "fixtures" / "demo.json"


def _record_turns(*, agent: Agent, namespace: Namespace, body: dict[str, Any]) -> None:
    """What the user said, in the session's working memory: the transcript the evidence rule reads."""
    quotes = dict.fromkeys(
        op["evidence"]["rawMessageQuote"] for op in body["operations"] if op.get("evidence")
    )
    for quote in quotes:
        turn_append(
            namespace=namespace, session_id=body["sourceSessionId"], role="user", content=quote, agent=agent
        )


class Command(BaseCommand):
    help = "Load the demo namespace, agent, reviewer, admin and the seed's KPRs (idempotent: safe on every start)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--fixture", default=str(DEFAULT_FIXTURE))

    def handle(self, *args: Any, **options: Any) -> None:
        demo = json.loads(Path(options["fixture"]).read_text())
        namespace = demo["namespace"]
        agent_spec = demo["agent"]
        agent, token = agent_create(
            name=agent_spec["name"],
            namespaces=[namespace],
            trust=agent_spec["trust"],
            token=agent_spec["token"],
        )
        # A namespace reviewer who sees only the demo namespace, and a separate admin.
        reviewer, admin = demo["reviewer"], demo["admin"]
        for person in (reviewer, admin):
            reviewer_create(
                username=person["username"], password=person["password"], namespaces=[namespace],
                is_admin=person.get("admin", False),
            )  # fmt: skip
        space = agent.namespaces.get(name=namespace)
        # Review (and merge) each KPR in order, in this process, so the demo story is deterministic:
        # later KPRs build on what the earlier ones merged.
        eager = celery_app.conf.task_always_eager
        celery_app.conf.task_always_eager = True
        created = 0
        try:
            for body in demo["pulls"]:
                decision = body.pop("demoHumanDecision", None)
                if not KnowledgePullRequest.objects.filter(
                    agent=agent, idempotency_key=body["idempotencyKey"]
                ).exists():
                    _record_turns(agent=agent, namespace=space, body=body)
                serializer = PullInSerializer(
                    data={**body, "subject": demo["subject"], "namespace": namespace}
                )
                serializer.is_valid(raise_exception=True)
                pull, was_created = pull_submit(agent=agent, namespace=space, spec=serializer.to_spec())
                created += was_created
                pull.refresh_from_db()
                if decision and was_created and pull.review_status == ReviewStatus.NEEDS_HUMAN_REVIEW:
                    pull_human_decide(
                        pull_id=str(pull.id), reviewer=reviewer["username"], verdict=decision["verdict"],
                        reason=decision["reason"],
                    )  # fmt: skip
        finally:
            celery_app.conf.task_always_eager = eager
        statuses = KnowledgePullRequest.objects.filter(namespace=space).values_list(
            "review_status", flat=True
        )
        summary = {status: list(statuses).count(status) for status in sorted(set(statuses))}
        self.stdout.write(f"demo loaded: {created} new KPRs; review status counts {summary}")
        self.stdout.write(f"demo admin login: {admin['username']} / {admin['password']}")
        self.stdout.write(f"demo reviewer login: {reviewer['username']} / {reviewer['password']}")
        self.stdout.write(f"demo agent token: {token}")
