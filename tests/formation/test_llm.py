"""Extraction by a model behind an OpenAI-compatible endpoint (a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memorypr.formation.extract import Turn, extract_facts
from memorypr.formation.llm import LlmExtractor
from tests.reviewer.llm_server import Reply, running_llm_server

_DOCUMENT = re.compile(r"<<<CONVERSATION (\w+)>>>\n(.*)\n<<<END CONVERSATION \1>>>", re.DOTALL)


def _answers(*facts: dict[str, Any]):  # type: ignore[no-untyped-def]
    def scenario(request: dict[str, Any]) -> Reply:
        return Reply(content=json.dumps({"facts": list(facts)}, ensure_ascii=False))

    return scenario


def _fact(**fields: Any) -> dict[str, Any]:
    return {"category": "user_profile", "importance": 0.8, "confidence": 0.85, "polarity": "set", **fields}


TURNS = [Turn("user", "I live in Beijing. My daughter started school, she's in grade 3 now.", 1732000000000)]


def test_model_facts_join_the_rules_where_the_rules_found_nothing():
    with running_llm_server() as server:
        # given
        server.scenario = _answers(
            _fact(key="home_city", value="Peking", quote="I live in Beijing."),
            _fact(key="child_grade", value="grade 3", quote="she's in grade 3 now"),
        )
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m")
        # when
        extraction = extract_facts(TURNS, llm=llm, known_keys=["name"])
    # then: the rules' home_city stands; the model adds what they cannot read
    assert [(f.key, f.value, f.source) for f in extraction.facts] == [
        ("home_city", "Beijing", "rules"),
        ("child_grade", "grade 3", "llm"),
    ]
    child = extraction.facts[1]
    assert (child.confidence, child.timestamp_ms) == (0.85, 1732000000000)
    # the conversation went in as delimited data, with the keys memory already uses
    sent = server.requests[0]["messages"][-1]["content"]
    document = json.loads(_DOCUMENT.search(sent).group(2))  # type: ignore[union-attr]
    assert document["turns"][0]["content"] == TURNS[0].content
    assert set(document["knownKeys"]) == {"name", "home_city"}


def test_a_quote_the_user_never_said_and_a_joke_are_dropped():
    with running_llm_server() as server:
        # given
        server.scenario = _answers(
            _fact(key="employer", value="Google", quote="I work at Google"),
            _fact(key="pet", value="a dragon", quote="lol my pet dragon"),
        )
        turns = [Turn("user", "Meet my new pet: lol my pet dragon")]
        # when
        extraction = extract_facts(turns, llm=LlmExtractor(base_url=server.base_url, api_key="k", model="m"))
    # then
    assert extraction.facts == []
    reasons = {f.key: f.reasons for f in extraction.dropped}
    assert reasons["employer"] == ("the quote is not in any user turn",)
    assert any("a joke" in r for r in reasons["pet"])


@pytest.mark.parametrize("reply", [Reply(status=500), Reply(content="I think the user lives in Beijing.")])
def test_a_failing_model_leaves_the_rules_facts(reply):
    with running_llm_server() as server:
        # given
        server.scenario = lambda request: reply
        llm = LlmExtractor(base_url=server.base_url, api_key="k", model="m", timeout=5)
        # when
        extraction = extract_facts(TURNS, llm=llm)
    # then
    assert [(f.key, f.value) for f in extraction.facts] == [("home_city", "Beijing")]
    assert extraction.llm_error


def test_the_model_is_configured_from_the_environment(monkeypatch):
    # given
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMORYPR_FORMATION_MODEL", "extractor-1")
    # when
    llm = LlmExtractor.from_env()
    # then
    assert llm is not None and (llm.base_url, llm.model) == ("http://127.0.0.1:9/v1", "extractor-1")
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert LlmExtractor.from_env() is None


def test_the_models_facts_meet_the_rules_bar_for_quotes_and_values():
    with running_llm_server() as server:
        # given: a quote from the assistant's turn, and values that lean on a pronoun or are empty
        server.scenario = _answers(
            _fact(key="home_city", value="Paris", quote="You live in Paris"),
            _fact(key="likes_it", value="likes it", quote="I love it"),
            _fact(key="likes_their_energy", value="their energy", quote="I love it"),
            _fact(key="favorite_food", value=" ", quote="I love it"),
            _fact(key="favorite_music", value="jazz", quote="I love it, and jazz"),
        )
        turns = [Turn("assistant", "You live in Paris, right?"), Turn("user", "Yes. I love it, and jazz.")]
        # when
        extraction = extract_facts(turns, llm=LlmExtractor(base_url=server.base_url, api_key="k", model="m"))
    # then: of the model's facts, only the one whose quote is the user's and whose value means something passes
    assert [(f.key, f.value) for f in extraction.facts if f.source == "llm"] == [("favorite_music", "jazz")]
    reasons = {f.key: f.reasons for f in extraction.dropped}
    assert reasons["home_city"] == ("the quote is not in any user turn",)
    for key in ("likes_it", "likes_their_energy", "favorite_food"):
        assert reasons[key] == ("the value is empty or leans on a pronoun",)
