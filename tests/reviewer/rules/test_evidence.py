from __future__ import annotations

import pytest

from reviewer.rules import evidence
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view

TRANSCRIPT = (
    "user: Hi!\nuser: I moved to  Shenzhen last month.\nassistant: 恭喜！\nuser：上个月我举家搬迁到了深圳。"
)


@pytest.mark.parametrize("quote", [None, "", "   "])
def test_missing_evidence_is_rejected(quote):
    outcome = evidence.check(pull_view(), op_view(quote=quote))
    assert outcome.verdict == Verdict.REJECT
    assert outcome.reason.startswith("no evidence")


def test_unknown_transcript_passes_unverified():
    outcome = evidence.check(pull_view(transcript=None), op_view())
    assert outcome.verdict == Verdict.PASS
    assert "not verified" in outcome.reason


@pytest.mark.parametrize(
    "quote",
    ["I moved to Shenzhen last month", "i moved to shenzhen LAST MONTH", "“I moved to Shenzhen last month”",
     "上个月我举家搬迁到了深圳", "上个月我举家搬迁到了深圳。"],
)  # fmt: skip
def test_verbatim_quotes_are_found(quote):
    outcome = evidence.check(pull_view(transcript=TRANSCRIPT), op_view(quote=quote))
    assert outcome.verdict == Verdict.PASS
    assert outcome.reason == "quote found verbatim in the transcript of session 'session-1'"


@pytest.mark.parametrize(
    "quote", ["I moved to Guangzhou last month", "上个月我搬到了深圳", "I moved to Shenzhen last year"]
)
def test_quotes_not_in_the_transcript_escalate(quote):
    outcome = evidence.check(pull_view(transcript=TRANSCRIPT), op_view(quote=quote))
    assert outcome.verdict == Verdict.ESCALATE
    assert "possible hallucination" in outcome.reason
