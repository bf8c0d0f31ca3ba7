"""The review of one KPR: rule checks, then the LLM reviewer, then the policy, then the record.

The checks and the LLM call run outside any transaction (the LLM may take seconds); the
decision is recorded under the KPR's row lock, after re-checking that nobody decided first.
Each reviewer leaves one ReviewEvent (rules, then llm when it ran), and a final `policy`
event moves the status. No-op operations (duplicates of the current value) are listed in the
final event's excluded_operations, so the merge skips them. An approval reaches the merge
through the `pull_approved` signal that recording the final event announces after commit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction

from memorypr.audit.services import audit_batch, audit_record
from memorypr.common.locks import lock_pull
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus, ReviewEvent, ReviewStatus
from memorypr.pulls.services import pull_record_review
from reviewer.checks import ChecksResult, checks_run
from reviewer.context import review_context
from reviewer.llm import LlmReview, llm_config, llm_review
from reviewer.policy import (
    EVENT_VERDICT,
    STATUS_FOR,
    LlmPlan,
    OperationDecision,
    feedback_compose,
    llm_plan,
    operation_decide,
    pull_verdict,
)
from reviewer.rules.base import OperationView, PullView, Verdict, most_severe

logger = logging.getLogger(__name__)


class RereviewNotAllowed(Exception):
    """The KPR cannot be reviewed again (it is merged: revert it with a new KPR instead)."""


@dataclass(frozen=True)
class ReviewOutcome:
    pull_id: str
    status: str
    feedback: str
    events: list[ReviewEvent]


def pull_review(*, pull_id: str) -> ReviewOutcome | None:
    """Review a PENDING KPR. Idempotent: a KPR that is no longer PENDING is left alone (None)."""
    return review_run(pull_id=pull_id, rereview_by=None)


def review_run(*, pull_id: str, rereview_by: str | None) -> ReviewOutcome | None:
    """Run the whole review; `rereview_by` (an audit actor) reviews a decided KPR again."""
    context = review_context(pull_id=pull_id)
    if context is None:
        logger.warning("review of unknown KPR %s skipped", pull_id)
        return None
    if rereview_by is None and context.review_status != ReviewStatus.PENDING:
        return None
    view, operations = context.pull, context.operations
    checks = checks_run(pull=view, operations=operations)
    llm = _llm_step(view=view, checks=checks)
    decisions = _decide(view=view, checks=checks, llm=llm)
    verdict = pull_verdict(decisions)
    status = STATUS_FOR[verdict]
    reviewed_by = f"rules and the LLM reviewer ({llm.model})" if llm is not None and llm.ok else "rules"
    feedback = feedback_compose(
        status=status, decisions=decisions, operations=operations, reviewed_by=reviewed_by
    )

    with transaction.atomic():
        locked = lock_pull(pull_id=pull_id)
        if rereview_by is None and locked.review_status != ReviewStatus.PENDING:
            return None  # another worker decided while this one was checking
        # every audit event of this review is appended at the end, under one chain lock
        with audit_batch():
            if rereview_by is not None:
                if locked.merge_status == MergeStatus.MERGED:
                    raise RereviewNotAllowed(f"KPR {pull_id} is merged; revert it with a new KPR instead")
                audit_record(
                    event_type="pull.rereview_requested",
                    actor=rereview_by,
                    namespace=locked.namespace.name,
                    pull_id=locked.id,
                    subject=locked.subject,
                    payload={"from": locked.review_status},
                )
            events = [_record_rules(pull=locked, checks=checks)]
            if llm is not None:
                events.append(_record_llm(pull=locked, llm=llm))
            events.append(
                pull_record_review(
                    pull=locked,
                    reviewer_kind=ReviewEvent.ReviewerKind.SYSTEM,
                    reviewer="policy",
                    verdict=EVENT_VERDICT[verdict],
                    status_after=status,
                    reasons=feedback,
                    findings=[
                        {
                            "operation": d.position,
                            "verdict": "noop" if d.noop else str(d.verdict),
                            "reasons": d.reasons,
                        }
                        for d in decisions
                    ],
                    excluded_operations=[d.position for d in decisions if d.noop],
                )
            )
    return ReviewOutcome(pull_id=str(pull_id), status=status, feedback=feedback, events=events)


def _llm_step(*, view: PullView, checks: ChecksResult) -> LlmReview | None:
    changing: list[OperationView] = [o.op for o in checks.operations if not o.noop]
    config = llm_config()
    plan = llm_plan(
        mode=view.policy.mode,
        rules_verdict=checks.verdict,
        changing=len(changing),
        configured=config is not None,
    )
    if plan == LlmPlan.ASK and config is not None:
        return llm_review(pull=view, operations=changing, config=config)
    if plan == LlmPlan.UNAVAILABLE:
        return LlmReview(
            ok=False, model="", error="required by the namespace's policy, but no LLM reviewer is configured"
        )
    return None


def _decide(*, view: PullView, checks: ChecksResult, llm: LlmReview | None) -> list[OperationDecision]:
    decisions = []
    for result in checks.operations:
        opinion = llm.opinion(result.op.position) if llm is not None and not result.noop else None
        verdict, reasons = operation_decide(
            policy=view.policy,
            category=result.op.category,
            rules_verdict=result.verdict,
            rules_reasons=result.reasons,
            noop=result.noop,
            llm=opinion,
        )
        decisions.append(
            OperationDecision(
                position=result.op.position,
                verdict=verdict,
                noop=result.noop,
                reasons=reasons,
                redacted=result.secret,
            )
        )
    return decisions


def _record_rules(*, pull: KnowledgePullRequest, checks: ChecksResult) -> ReviewEvent:
    held = [o for o in checks.operations if o.verdict != Verdict.PASS]
    summary = f"{len(checks.rules)} checks on {len(checks.operations)} operation(s): {checks.verdict}"
    lines = [summary] + [f"#{o.op.position} {o.op.label}: " + "; ".join(o.reasons) for o in held]
    return pull_record_review(
        pull=pull,
        reviewer_kind=ReviewEvent.ReviewerKind.RULES,
        reviewer="rules",
        verdict=EVENT_VERDICT[checks.verdict],
        status_after=pull.review_status,
        reasons="\n".join(lines),
        findings=checks.as_findings(),
        latency_ms=checks.latency_ms,
        update_status=False,
    )


def _record_llm(*, pull: KnowledgePullRequest, llm: LlmReview) -> ReviewEvent:
    if llm.ok:
        verdict = most_severe(o.verdict for o in llm.opinions.values())
        lines = [f"{llm.model}: {verdict}"] + [
            f"#{position} {reply[0]} (risk {reply[2]}): {reply[1]}"
            for position, reply in sorted(llm.replies.items())
        ]
        reasons = "\n".join(lines)
    elif llm.attempts:
        verdict = Verdict.ESCALATE
        reasons = f"LLM review failed after {llm.attempts} attempt(s): {llm.error}; a person decides"
    else:
        verdict = Verdict.ESCALATE
        reasons = f"LLM review not run: {llm.error}; a person decides"
    return pull_record_review(
        pull=pull,
        reviewer_kind=ReviewEvent.ReviewerKind.LLM,
        reviewer="llm",
        verdict=EVENT_VERDICT[verdict],
        status_after=pull.review_status,
        reasons=reasons,
        findings=llm.as_findings() if llm.ok else [{"error": llm.error, "attempts": llm.attempts}],
        model=llm.model,
        latency_ms=llm.latency_ms,
        tokens=llm.tokens,
        update_status=False,
    )
