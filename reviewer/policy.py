"""The verdict policy: how rule findings, the LLM's verdicts and the namespace's policy
combine into one status.

Per operation, the most severe verdict wins (reject > escalate > approve):
- a no-op (duplicate of the current value) decides nothing and is excluded from the merge;
- the rules' verdict is the floor: the LLM can make it stricter, never lift it;
- an LLM that was asked and failed (time-out, HTTP error, refusal, unparseable) escalates;
- mode `llm_required`: an LLM that is not configured counts as failed, and escalates;
- a category the namespace always sends to a person escalates.
The KPR's verdict is the most severe of its operations' verdicts; with every operation a
no-op it is approved, and the merge has nothing to write.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memorypr.pulls.models import ReviewEvent, ReviewStatus
from reviewer.models import ReviewMode, ReviewPolicy
from reviewer.rules.base import OperationView, PolicyView, Verdict, most_severe, show

DEFAULT_POLICY = PolicyView(
    mode=ReviewMode.RULES_AND_LLM,
    human_categories=frozenset(),
    allowed_categories=frozenset(),
    key_patterns=(),
    protected_key_patterns=(),
    protected_importance=0.9,
    confidence_reject_floor=0.3,
    confidence_approve_bar=0.7,
    agent_hourly_limit=600,
    disabled_rules=frozenset(),
)

STATUS_FOR = {
    Verdict.PASS: ReviewStatus.APPROVED,
    Verdict.ESCALATE: ReviewStatus.NEEDS_HUMAN_REVIEW,
    Verdict.REJECT: ReviewStatus.REJECTED,
}
EVENT_VERDICT = {
    Verdict.PASS: ReviewEvent.Verdict.APPROVE,
    Verdict.ESCALATE: ReviewEvent.Verdict.ESCALATE,
    Verdict.REJECT: ReviewEvent.Verdict.REJECT,
}


def policy_view(policy: ReviewPolicy | None) -> PolicyView:
    if policy is None:
        return DEFAULT_POLICY
    return PolicyView(
        mode=policy.mode,
        human_categories=frozenset(policy.human_categories),
        allowed_categories=frozenset(policy.allowed_categories),
        key_patterns=tuple(policy.key_patterns),
        protected_key_patterns=tuple(policy.protected_key_patterns),
        protected_importance=policy.protected_importance,
        confidence_reject_floor=policy.confidence_reject_floor,
        confidence_approve_bar=policy.confidence_approve_bar,
        agent_hourly_limit=policy.agent_hourly_limit,
        disabled_rules=frozenset(policy.disabled_rules),
        suggestion_rules=frozenset(policy.suggestion_rules),
    )


@dataclass(frozen=True)
class LlmOpinion:
    """What the LLM reviewer said about one operation, or why it said nothing usable."""

    verdict: Verdict
    reason: str
    failed: bool = False


@dataclass(frozen=True)
class OperationDecision:
    position: int
    verdict: Verdict
    noop: bool
    reasons: list[str] = field(default_factory=list)
    # Values are not shown (the operation carries a secret).
    redacted: bool = False


class LlmPlan:
    SKIP = "skip"
    ASK = "ask"
    # Required by the policy but not configured: recorded as a failed LLM review.
    UNAVAILABLE = "unavailable"


def llm_plan(*, mode: str, rules_verdict: Verdict, changing: int, configured: bool) -> str:
    """Whether to ask the LLM. Not when the rules already reject (it could change nothing),
    not for a KPR of no-ops, never in `rules_only`."""
    if mode == ReviewMode.RULES_ONLY or changing == 0 or rules_verdict == Verdict.REJECT:
        return LlmPlan.SKIP
    if configured:
        return LlmPlan.ASK
    return LlmPlan.UNAVAILABLE if mode == ReviewMode.LLM_REQUIRED else LlmPlan.SKIP


def operation_decide(
    *,
    policy: PolicyView,
    category: str,
    rules_verdict: Verdict,
    rules_reasons: list[str],
    noop: bool,
    llm: LlmOpinion | None,
) -> tuple[Verdict, list[str]]:
    """One operation's verdict and the reasons that made it (the policy table).

    `llm` is None when the LLM was not asked (see llm_plan).
    """
    if noop:
        return Verdict.PASS, []
    verdicts, reasons = [rules_verdict], list(rules_reasons)
    if category in policy.human_categories:
        verdicts.append(Verdict.ESCALATE)
        reasons.append(f"policy: category '{category}' always goes to a person")
    if llm is not None and policy.mode != ReviewMode.RULES_ONLY:
        # The LLM can only add severity: max() never goes below the rules' verdict.
        verdicts.append(Verdict.ESCALATE if llm.failed else llm.verdict)
        if llm.failed or llm.verdict != Verdict.PASS:
            reasons.append(f"llm: {llm.reason}")
    return most_severe(verdicts), reasons


def pull_verdict(decisions: list[OperationDecision]) -> Verdict:
    return most_severe(d.verdict for d in decisions if not d.noop)


def feedback_compose(
    *, status: str, decisions: list[OperationDecision], operations: list[OperationView], reviewed_by: str
) -> str:
    """reviewerFeedback: the status, then one line per operation with what decided it."""
    ops = {op.position: op for op in operations}
    changing = [d for d in decisions if not d.noop]
    held = [d for d in changing if d.verdict != Verdict.PASS]
    if status == ReviewStatus.APPROVED:
        head = f"Approved by {reviewed_by}: {len(changing)} operation(s) to merge"
    elif status == ReviewStatus.REJECTED:
        head = f"Rejected by {reviewed_by}: {sum(d.verdict == Verdict.REJECT for d in changing)} operation(s) rejected"
    else:
        head = f"Needs human review: {len(held)} of {len(changing)} operation(s) need a person"
    noops = len(decisions) - len(changing)
    if noops:
        head += f"; {noops} no-op(s) already current, excluded from the merge"
    lines = [head + "."]
    order = {Verdict.REJECT: 0, Verdict.ESCALATE: 1, Verdict.PASS: 2}
    for decision in sorted(decisions, key=lambda d: (d.noop, order[d.verdict], d.position)):
        op = ops[decision.position]
        change = (
            "(values withheld)"
            if decision.redacted
            else f"{show(op.old_value, 40)} → {show(op.new_value, 40)}"
        )
        if decision.noop:
            lines.append(f"- #{op.position} {op.label} {change}: no-op, already the current value")
        elif decision.verdict == Verdict.PASS:
            lines.append(f"- #{op.position} {op.label} {change}: approve")
        else:
            lines.append(
                f"- #{op.position} {op.label} {change}: {decision.verdict} — " + "; ".join(decision.reasons)
            )
    return "\n".join(lines)
