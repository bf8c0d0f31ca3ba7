"""The property the injection defence rests on: whatever the LLM reviewer answers, a verdict is
never less severe than the rules' verdict. A model that obeys an injection can therefore add
nothing but its approval, and only a rule can stop the injection."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reviewer.llm import _opinions
from reviewer.policy import LlmOpinion, OperationDecision, operation_decide, pull_verdict
from reviewer.rules.base import SEVERITY, Verdict
from tests.reviewer.builders import policy

verdicts = st.sampled_from(list(Verdict))
opinions = st.none() | st.builds(LlmOpinion, verdict=verdicts, reason=st.just("r"), failed=st.booleans())
modes = st.sampled_from(["rules_only", "rules_and_llm", "llm_required"])


@given(mode=modes, rules=verdicts, opinion=opinions, human=st.booleans())
def test_the_llm_never_lowers_an_operation_below_the_rules(mode, rules, opinion, human):
    view = policy(mode=mode, human_categories=frozenset({"user_profile"} if human else set()))
    decided, _ = operation_decide(
        policy=view, category="user_profile", rules_verdict=rules, rules_reasons=[], noop=False, llm=opinion
    )
    assert SEVERITY[decided] >= SEVERITY[rules]
    # and an approving model changes nothing at all
    without, _ = operation_decide(
        policy=view, category="user_profile", rules_verdict=rules, rules_reasons=[], noop=False, llm=None
    )
    if opinion is not None and opinion.verdict == Verdict.PASS and not opinion.failed:
        assert decided == without


@given(rules=st.lists(verdicts, min_size=1, max_size=5), data=st.data())
def test_the_kpr_is_never_less_severe_than_its_most_severe_rule(rules, data):
    decisions = []
    for position, rule_verdict in enumerate(rules):
        opinion = data.draw(opinions)
        decided, reasons = operation_decide(
            policy=policy(), category="user_profile", rules_verdict=rule_verdict, rules_reasons=[],
            noop=False, llm=opinion,
        )  # fmt: skip
        decisions.append(OperationDecision(position=position, verdict=decided, noop=False, reasons=reasons))
    assert SEVERITY[pull_verdict(decisions)] >= max(SEVERITY[v] for v in rules)


@given(
    verdict=st.sampled_from(["approve", "escalate", "reject"]),
    risk=st.sampled_from(["low", "medium", "high"]),
)
def test_the_models_own_words_only_ever_add_severity(verdict, risk):
    # An approval the model calls high-risk counts as an escalation, never the other way round.
    opinion = _opinions({0: (verdict, "because", risk)})[0]
    expected = {"approve": Verdict.PASS, "escalate": Verdict.ESCALATE, "reject": Verdict.REJECT}[verdict]
    assert SEVERITY[opinion.verdict] >= SEVERITY[expected]
    assert (opinion.verdict == Verdict.ESCALATE) == (
        verdict == "escalate" or (verdict == "approve" and risk == "high")
    )
