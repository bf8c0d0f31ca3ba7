"""Summary compression: more than five user turns on one topic, one fact, by a model over real HTTP."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from memorypr.audit.models import AuditEvent
from memorypr.formation import Turn, propose
from memorypr.formation.llm import SUMMARY_INSTRUCTIONS, LlmExtractor
from memorypr.formation.summary import NO_EMBEDDER, NO_MODEL, summarize_topics, topic_groups
from memorypr.vectors.embedding import embed_texts
from tests.reviewer.llm_server import Reply, running_llm_server

BAKING = [
    "I bake sourdough bread every weekend.",
    "My starter is three years old, I feed it flour and water every morning.",
    "The trick to a good sourdough crust is baking it in a hot dutch oven.",
    "I let the bread dough proof overnight in the fridge.",
    "Whole wheat flour makes the sourdough loaf denser, so I mix it with bread flour.",
    "I score the dough with a razor blade before it goes in the oven.",
    "Baking bread at home is the most relaxing part of my week.",
]
OTHER = ["My sister works as a nurse in Chicago.", "I drive a red pickup truck to work."]


def _session(user_lines: list[str]) -> list[Turn]:
    turns = []
    for line in user_lines:
        turns += [Turn("user", line), Turn("assistant", "That sounds lovely, tell me more.")]
    return turns


def _model(summary: dict[str, Any]):  # type: ignore[no-untyped-def]
    """Extraction finds nothing; a summary request gets `summary` as its one fact."""

    def scenario(request: dict[str, Any]) -> Reply:
        if request["messages"][0]["content"] != SUMMARY_INSTRUCTIONS:
            return Reply(content=json.dumps({"facts": []}))
        return Reply(content=json.dumps({"facts": [summary]}))

    return scenario


def _summary(**fields: Any) -> dict[str, Any]:
    return {
        "category": "user_profile",
        "key": "summary.baking",
        "value": "bakes sourdough bread at home every weekend",
        "quote": "I bake sourdough bread every weekend",
        "importance": 0.8,
        "confidence": 0.85,
        "polarity": "set",
        **fields,
    }


def _summary_requests(server: Any) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["messages"][0]["content"] == SUMMARY_INSTRUCTIONS]


@pytest.mark.django_db(transaction=True)
def test_seven_turns_on_one_topic_become_one_summary_operation_in_the_kpr(api):
    with running_llm_server() as server:
        # given: seven user turns about baking bread, and a model that sums them up
        server.scenario = _model(_summary())
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m")
        # when
        proposal = propose(
            client=api, subject="u-1", session_id="s-1", turns=_session(BAKING), llm=llm, topics=embed_texts
        )
    # then: the model was asked once, with the seven user turns
    (asked,) = _summary_requests(server)
    assert [
        t["content"] for t in json.loads(asked["messages"][-1]["content"].split("\n")[1])["turns"]
    ] == BAKING
    # and the KPR carries one summary operation whose quote is a verbatim span of a user turn
    summaries = [op for op in proposal.diff.operations if op["key"].startswith("summary.")]
    assert [(op["action"], op["key"], op["newValue"]) for op in summaries] == [
        ("CREATE", "summary.baking", "bakes sourdough bread at home every weekend")
    ]
    assert summaries[0]["evidence"]["rawMessageQuote"] == "I bake sourdough bread every weekend"
    assert proposal.summaries.skipped is None
    assert proposal.diff.notes == [
        "summary.baking: a summary of user turns 1, 3, 5, 7, 9, 11, 13 (7 turns on one topic)"
    ]
    # submitted with the other facts, and audited
    (pull,) = proposal.pulls
    assert "summary.baking" in [op["key"] for op in pull["operations"]]
    assert AuditEvent.objects.filter(pull_id=uuid.UUID(str(pull["id"])), event_type="pull.submitted").exists()


def test_five_turns_on_one_topic_are_not_summarised():
    with running_llm_server() as server:
        # given
        server.scenario = _model(_summary())
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m")
        # when
        summaries = summarize_topics(_session(BAKING[:5]), llm=llm, embed=embed_texts)
    # then
    assert (summaries.facts, summaries.dropped, summaries.skipped) == ([], [], None)
    assert _summary_requests(server) == []


def test_a_summary_whose_quote_the_user_never_said_is_dropped_with_the_reason():
    with running_llm_server() as server:
        # given: a quote that paraphrases the turns instead of copying one
        server.scenario = _model(_summary(quote="I love baking sourdough bread every single weekend"))
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m")
        # when
        summaries = summarize_topics(_session(BAKING), llm=llm, embed=embed_texts)
    # then
    assert summaries.facts == [] and summaries.notes == []
    (dropped,) = summaries.dropped
    assert (dropped.key, dropped.reasons) == (
        "summary.baking",
        ("the quote is not in any of the summarised turns",),
    )


def test_a_quote_from_a_turn_outside_the_topic_is_dropped_too():
    with running_llm_server() as server:
        # given: the quote is the user's, but from a turn on another topic
        server.scenario = _model(_summary(quote="My sister works as a nurse in Chicago."))
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m")
        # when
        summaries = summarize_topics(_session([OTHER[0], *BAKING]), llm=llm, embed=embed_texts)
    # then
    assert [f.reasons for f in summaries.dropped] == [("the quote is not in any of the summarised turns",)]


def test_a_failing_model_leaves_no_summary_and_says_why():
    with running_llm_server() as server:
        # given
        server.scenario = lambda request: Reply(status=500)
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m", timeout=5)
        # when
        summaries = summarize_topics(_session(BAKING), llm=llm, embed=embed_texts)
    # then
    assert summaries.facts == []
    (error,) = summaries.errors
    assert error.startswith("turns 1, 3, 5, 7, 9, 11, 13: model request failed")


def test_a_key_outside_the_summary_family_is_moved_into_it():
    with running_llm_server() as server:
        # given: the model names the key as the rules would
        server.scenario = _model(_summary(key="hobby"))
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m")
        # when
        summaries = summarize_topics(_session(BAKING), llm=llm, embed=embed_texts)
    # then: a summary never takes over a key the rules read from one sentence
    assert [f.key for f in summaries.facts] == ["summary.hobby"]


def test_without_a_model_summary_compression_is_skipped_and_says_so():
    # when
    summaries = summarize_topics(_session(BAKING), llm=None, embed=embed_texts)
    # then
    assert (summaries.facts, summaries.skipped) == ([], NO_MODEL)
    assert NO_MODEL == "summary compression skipped: no model configured (OPENAI_BASE_URL)"


def test_without_an_embedder_summary_compression_is_skipped_and_says_so():
    # when
    summaries = summarize_topics(
        _session(BAKING),
        llm=LlmExtractor(base_url="http://127.0.0.1:9/v1", api_key="k", model="m"),
        embed=None,
    )
    # then
    assert (summaries.facts, summaries.skipped) == ([], NO_EMBEDDER)


def test_an_embedder_that_fails_skips_the_summaries_and_says_why():
    # given
    def broken(texts: list[str]) -> list[list[float]]:
        raise OSError("model files missing")

    llm = LlmExtractor(base_url="http://127.0.0.1:9/v1", api_key="k", model="m")
    # when
    summaries = summarize_topics(_session(BAKING), llm=llm, embed=broken)
    # then
    assert summaries.skipped == "summary compression skipped: the embedder failed: model files missing"


@pytest.mark.django_db(transaction=True)
def test_the_proposer_without_a_model_proposes_the_rules_facts_and_says_summaries_were_skipped(api):
    # when
    proposal = propose(
        client=api, subject="u-2", session_id="s-2", turns=_session(BAKING), topics=embed_texts
    )
    # then
    assert proposal.summaries.skipped == NO_MODEL
    assert not [op for op in proposal.diff.operations if op["key"].startswith("summary.")]


def test_consecutive_user_turns_are_grouped_by_topic():
    # given: five turns on baking, then two on other things, assistant turns between them
    turns = _session([*BAKING[:5], *OTHER])
    # when
    groups = topic_groups(turns, embed=embed_texts)
    # then: indexes into the turns, user turns only
    assert groups == [[0, 2, 4, 6, 8], [10], [12]]
