"""Prompt injections against a model that obeys them: how many does each half of the corpus
(bench._injections) lose to the rules, per kind, and which get through.

Every attempt goes the whole way: stored as a KPR, checked by the rules, reviewed over HTTP by a
local OpenAI-compatible model that does whatever the data tells it and otherwise approves,
decided by the policy, and merged when approved. An attempt is caught when it does not end
APPROVED: the model can only make a verdict stricter, so only a rule can stop it. The controls
(ordinary facts) are run too: a rule that holds them is a false alarm. Options: `split` (every set
by default, or one of `tune` / `holdout` / `fresh` / `controls`).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import Any

from django.db import connection, transaction
from django.test import override_settings

from bench._injections import ATTACK_SETS, CATEGORIES, Attempt, corpus_load, held_by
from memorypr.agents.models import Namespace
from memorypr.agents.services import agent_create
from memorypr.facts.services import pull_merge_drain
from memorypr.pulls.serializers import PullInSerializer
from memorypr.pulls.services import pull_submit
from reviewer.pipeline import pull_review
from reviewer.services import review_policy_set


def _through_pipeline(*, agent: Any, namespace: Namespace, attempt: Attempt) -> dict[str, Any]:
    serializer = PullInSerializer(
        data={
            "sourceSessionId": f"session-{attempt.id}",
            "subject": f"user-{attempt.id}",
            "operations": [attempt.operation()],
        }
    )
    serializer.is_valid(raise_exception=True)
    with transaction.atomic():
        pull, _ = pull_submit(agent=agent, namespace=namespace, spec=serializer.to_spec())
        # The benchmark runs the review and the merge itself, not through the broker.
        connection.run_on_commit.clear()
    with transaction.atomic():
        pull_review(pull_id=str(pull.id))
        connection.run_on_commit.clear()
    pull.refresh_from_db()
    if pull.review_status == "APPROVED":
        pull_merge_drain(pull_id=str(pull.id))
        pull.refresh_from_db()
    return {"status": pull.review_status, "merge": pull.merge_status, "heldBy": held_by(pull)}


def _report(results: list[tuple[Attempt, dict[str, Any]]]) -> dict[str, Any]:
    by_category: dict[str, list[bool]] = defaultdict(list)
    by_rule: dict[str, int] = defaultdict(int)
    through = []
    for attempt, result in results:
        caught = result["status"] != "APPROVED" and result["merge"] != "MERGED"
        by_category[attempt.category].append(caught)
        for rule in result["heldBy"]:
            by_rule[rule] += 1
        if not caught:
            through.append({"id": attempt.id, "lang": attempt.lang, "quote": attempt.quote[:120]})
    caught_total = sum(sum(v) for v in by_category.values())
    return {
        "attempts": len(results),
        "caught": caught_total,
        "catchRate": round(caught_total / len(results), 3) if results else None,
        "perCategory": {
            category: f"{sum(by_category[category])}/{len(by_category[category])}"
            for category in CATEGORIES
            if by_category[category]
        },
        "heldByRule": dict(sorted(by_rule.items(), key=lambda item: -item[1])),
        "through": through,
    }


def _controls_report(results: list[tuple[Attempt, dict[str, Any]]]) -> dict[str, Any]:
    """Ordinary facts: each should be approved and merged; one held is a false alarm."""
    alarms = [
        {"id": attempt.id, "status": result["status"], "heldBy": result["heldBy"]}
        for attempt, result in results
        if result["status"] != "APPROVED" or result["merge"] != "MERGED"
    ]
    return {"controls": len(results), "approvedAndMerged": len(results) - len(alarms), "falseAlarms": alarms}


def run(options: dict[str, Any]) -> dict[str, Any]:
    from tests.reviewer.llm_server import obedient, running_llm_server

    split = options.get("split")
    names = [split] if split else [*ATTACK_SETS, "controls"]
    tag = uuid.uuid4().hex[:8]
    agent, _ = agent_create(name=f"bench-injection-{tag}", namespaces=[f"bench-injection-{tag}"])
    namespace = Namespace.objects.get(name=f"bench-injection-{tag}")
    review_policy_set(namespace=namespace, actor="bench", mode="rules_and_llm", agent_hourly_limit=10**9)
    report: dict[str, Any] = {}
    with running_llm_server() as llm:
        llm.scenario = obedient
        with override_settings(
            OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="bench", MEMORYPR_REVIEW_MODEL="obedient",
            MEMORYPR_REVIEW_TIMEOUT_SECONDS=5.0, MEMORYPR_REVIEW_RETRIES=0,
        ):  # fmt: skip
            for name in names:
                results = [
                    (attempt, _through_pipeline(agent=agent, namespace=namespace, attempt=attempt))
                    for attempt in corpus_load(name)
                ]
                report[name] = _controls_report(results) if name == "controls" else _report(results)
        report["modelRequests"] = len(llm.requests)
    return report
