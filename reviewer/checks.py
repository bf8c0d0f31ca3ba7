"""Runs the registered rules over a KPR's operations."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from reviewer.rules import MANDATORY, RULES, secrets
from reviewer.rules.base import OperationView, PullView, Rule, Verdict, most_severe

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RuleFinding:
    rule: str
    verdict: Verdict
    reason: str
    noop: bool = False
    clause: str | None = None
    cue: str | None = None


@dataclass(frozen=True)
class OperationChecks:
    op: OperationView
    findings: list[RuleFinding]

    @property
    def noop(self) -> bool:
        return any(f.noop for f in self.findings)

    @property
    def verdict(self) -> Verdict:
        """A no-op decides nothing; otherwise the most severe rule wins."""
        return Verdict.PASS if self.noop else most_severe(f.verdict for f in self.findings)

    @property
    def secret(self) -> bool:
        """The operation carries secret or payment data: its values are never repeated."""
        return any(f.rule == secrets.NAME and f.verdict == Verdict.REJECT for f in self.findings)

    @property
    def reasons(self) -> list[str]:
        return [f"{f.rule}: {f.reason}" for f in self.findings if f.verdict != Verdict.PASS]


@dataclass(frozen=True)
class ChecksResult:
    operations: list[OperationChecks]
    rules: list[str]
    latency_ms: int

    @property
    def verdict(self) -> Verdict:
        return most_severe(o.verdict for o in self.operations)

    def as_findings(self) -> list[dict[str, object]]:
        """The rules' ReviewEvent findings: every check on every operation, passes included."""
        return [
            {
                "operation": o.op.position,
                "action": o.op.action,
                "category": o.op.category,
                "key": o.op.key,
                "verdict": str(o.verdict),
                "noop": o.noop,
                "checks": [
                    {
                        "rule": f.rule,
                        "verdict": str(f.verdict),
                        "reason": f.reason,
                        **({"noop": True} if f.noop else {}),
                        **({"clause": f.clause} if f.clause else {}),
                        **({"cue": f.cue} if f.cue else {}),
                    }
                    for f in o.findings
                ],
            }
            for o in self.operations
        ]


def _check(rule: Rule, pull: PullView, op: OperationView) -> RuleFinding:
    try:
        outcome = rule.check(pull, op)
    except Exception as exc:  # noqa: BLE001 - a broken check holds the operation, never approves it
        logger.exception("rule %s failed on KPR %s operation %d", rule.NAME, pull.pull_id, op.position)
        return RuleFinding(
            rule=rule.NAME, verdict=Verdict.ESCALATE, reason=f"the check failed ({type(exc).__name__})"
        )
    return RuleFinding(
        rule=rule.NAME,
        verdict=outcome.verdict,
        reason=outcome.reason,
        noop=outcome.noop,
        clause=outcome.clause,
        cue=outcome.cue,
    )


def _suggest(finding: RuleFinding, pull: PullView) -> RuleFinding:
    """A rule the namespace made a suggestion keeps its finding, shown as such, but holds nothing."""
    if finding.rule not in pull.policy.suggestion_rules or finding.verdict == Verdict.PASS:
        return finding
    return replace(finding, verdict=Verdict.PASS, reason=f"suggestion ({finding.verdict}): {finding.reason}")


WITHHELD = "reason withheld: the operation carries secret or payment data"


def _withhold(checks: OperationChecks) -> OperationChecks:
    # Other rules' reasons quote values and evidence; for a secret they would repeat it in the
    # feedback, the review events and the audit log.
    if not checks.secret:
        return checks
    return OperationChecks(
        op=checks.op,
        findings=[
            f if f.rule == secrets.NAME else replace(f, reason=WITHHELD, clause=None, cue=None)
            for f in checks.findings
        ],
    )


def checks_run(*, pull: PullView, operations: list[OperationView]) -> ChecksResult:
    started = time.perf_counter()
    active = [rule for rule in RULES if rule.NAME in MANDATORY or rule.NAME not in pull.policy.disabled_rules]
    results = [
        _withhold(
            OperationChecks(op=op, findings=[_suggest(_check(rule, pull, op), pull) for rule in active])
        )
        for op in operations
    ]
    return ChecksResult(
        operations=results,
        rules=[rule.NAME for rule in active],
        latency_ms=round((time.perf_counter() - started) * 1000),
    )
