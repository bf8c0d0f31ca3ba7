from __future__ import annotations

import pytest

from reviewer.checks import checks_run
from reviewer.rules import joke
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


def test_every_operation_gets_every_active_rule_in_registry_order():
    result = checks_run(
        pull=pull_view(disabled_rules=frozenset({"joke"})), operations=[op_view(), op_view(position=1)]
    )
    assert "joke" not in result.rules and result.rules[:2] == ["schema", "secrets"]
    assert [[f.rule for f in o.findings] for o in result.operations] == [result.rules, result.rules]
    assert result.verdict == Verdict.PASS


def test_mandatory_rules_cannot_be_disabled():
    result = checks_run(
        pull=pull_view(disabled_rules=frozenset({"secrets", "base_value"})), operations=[op_view()]
    )
    assert {"secrets", "base_value"} <= set(result.rules)


def test_a_failing_rule_holds_the_operation(monkeypatch: pytest.MonkeyPatch):
    def broken(pull, op):  # type: ignore[no-untyped-def]
        raise KeyError("boom")

    monkeypatch.setattr(joke, "check", broken)
    result = checks_run(pull=pull_view(), operations=[op_view()])
    [finding] = [f for f in result.operations[0].findings if f.rule == "joke"]
    assert (finding.verdict, finding.reason) == (Verdict.ESCALATE, "the check failed (KeyError)")
    assert result.verdict == Verdict.ESCALATE


def test_findings_record_every_check():
    [finding] = checks_run(pull=pull_view(), operations=[op_view(confidence=0.5)]).as_findings()
    assert finding["verdict"] == "escalate" and finding["noop"] is False
    assert {
        "rule": "confidence",
        "verdict": "escalate",
        "reason": "confidence 0.50 is below the approve bar 0.70",
    } in (finding["checks"])
