"""The review-quality benchmark's LLM pass: the prompt reaches a model over HTTP with the
clause that carries each fact, and the model can only make a decision stricter."""

from __future__ import annotations

import pytest

from bench._careful_reader import judge
from bench._review_corpus import Case
from bench.review_quality import _with_local_reader


def _case(case_id: str, label: str, key: str, value: str, quote: str, session: str = "s-1") -> Case:
    return Case(case_id=case_id, lang="en", label=label, subject="ann", session=session, key=key, value=value,
                quote=quote)  # fmt: skip


@pytest.mark.parametrize(
    ("operation", "verdict"),
    [
        (
            {"newValue": "Lisbon", "evidenceClause": "I live in Lisbon", "governedBy": "I live in Lisbon"},
            "approve",
        ),
        (
            {"newValue": "Lisbon", "evidenceClause": "I live in Lisbon", "governedBy": "if I live in Lisbon"},
            "escalate",
        ),  # fmt: skip
        (
            {"newValue": "Lisbon", "evidenceClause": "I live in Porto", "governedBy": "I live in Porto"},
            "escalate",
        ),
        ({"newValue": "Lisbon"}, "escalate"),
    ],
)
def test_the_reader_approves_only_a_plain_clause_that_states_the_value(operation, verdict):
    assert judge(operation)[0] == verdict


@pytest.mark.django_db(transaction=True)
def test_the_model_sees_every_clause_and_never_loosens_the_rules():
    # given a true fact, a question and the agent's own words, in one session
    sessions = {
        "s-1": ("ann", [("user", "I live in Lisbon and I love it."), ("assistant", "You like sushi, right?"),
                        ("user", "Do you think I would like Porto?")]),
    }  # fmt: skip
    cases = [
        _case("p", "positive", "home_city", "Lisbon", "I live in Lisbon"),
        _case("q", "question", "likes_porto", "Porto", "Do you think I would like Porto?"),
        _case("a", "assistant_echo", "likes_sushi", "sushi", "You like sushi, right?"),
    ]
    report: dict = {}
    # when the cases are reviewed by the rules alone, then with the local reader over HTTP
    results = _with_local_reader(cases=cases, sessions=sessions, report=report)
    # then every operation reached the model with its clause, nothing was loosened,
    statuses = {case.case_id: status for case, status, _, _ in results}
    assert report["llmPrompt"]["operations"] >= 2  # held by a rule before the model, or shown to it
    assert report["llmPrompt"]["operationsWithClausePct"] == 100.0
    assert report["llmPrompt"]["loosenedByLlm"] == 0
    # and the true fact merges while the question and the agent's words are held
    assert statuses == {"p": "APPROVED", "q": "NEEDS_HUMAN_REVIEW", "a": "NEEDS_HUMAN_REVIEW"}
