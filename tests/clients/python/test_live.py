"""The client against a live memorypr server over real HTTP: every agent endpoint, and every
answer checked against the OpenAPI schema the server publishes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from memorypr_client import (
    AsyncMemoryprClient,
    AuthenticationError,
    Conflict,
    MemoryprClient,
    NotFound,
    OperationIn,
    ValidationError,
)
from openapi_schema_validator import OAS30Validator

pytestmark = pytest.mark.django_db(transaction=True)


class Recording(httpx.HTTPTransport):
    """A real transport that keeps every answer, to be checked against the schema."""

    def __init__(self) -> None:
        super().__init__()
        self.exchanges: list[tuple[str, str, int, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        response.read()
        body = json.loads(response.content) if response.content else None
        self.exchanges.append((request.method, request.url.path, response.status_code, body))
        return response


@pytest.fixture
def recording() -> Recording:
    return Recording()


@pytest.fixture
def memory(server_url: str, agent_token: str, recording: Recording) -> Iterator[MemoryprClient]:
    with MemoryprClient(server_url, agent_token, namespace="demo", transport=recording) as client:
        yield client


def _operation(openapi: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    for template, item in sorted(openapi["paths"].items(), key=lambda entry: -len(entry[0])):
        prefix, _, rest = template.partition("{")
        suffix = rest.partition("}")[2]
        if path == template or (rest and path.startswith(prefix) and path.endswith(suffix)):
            return item[method.lower()]  # type: ignore[no-any-return]
    raise AssertionError(f"{method} {path} is in no schema path")


def _check_against_schema(openapi: dict[str, Any], exchanges: list[tuple[str, str, int, Any]]) -> None:
    problems: set[str] = set()
    for method, path, status, body in exchanges:
        responses = _operation(openapi, method, path)["responses"]
        if str(status) not in responses:
            problems.add(f"{method} {path} answered {status}, which the schema does not list")
            continue
        schema = responses[str(status)]["content"]["application/json"]["schema"]
        validator = OAS30Validator({**schema, "components": openapi["components"]})
        for error in validator.iter_errors(body):
            where = ".".join(map(str, error.absolute_path))
            problems.add(f"{method} {path} {status} {where}: {error.message}")
    assert sorted(problems) == []


def _said(memory: MemoryprClient, session: str, text: str) -> str:
    memory.add_turn(session, "user", text)
    return text


def test_every_agent_endpoint_end_to_end_and_every_answer_as_the_schema_says(memory, recording, openapi):
    # given: the user said where they live, and the agent proposed it
    quote = _said(memory, "s-1", "I live in Beijing.")
    op = OperationIn.create("user_profile", "home_city", "Beijing", quote=quote)
    first = memory.propose([op], subject="u1", session_id="s-1", idempotency_key="home-1")
    again = memory.propose([op], subject="u1", session_id="s-1", idempotency_key="home-1")
    assert again.id == first.id and first.idempotency_key == "home-1"
    merged = memory.wait_for_pull(first.id)
    assert (merged.review_status, merged.merge_status, merged.settled) == ("APPROVED", "MERGED", True)
    assert merged.reviews and merged.operations[0].evidence.raw_message_quote == quote
    # when: they moved, and the agent proposed the update with the old value as its base
    quote = _said(memory, "s-2", "I moved to Shenzhen last month.")
    update = OperationIn.update("user_profile", "home_city", "Beijing", "Shenzhen", quote=quote)
    moved = memory.wait_for_pull(memory.propose([update], subject="u1", session_id="s-2").id)
    # then: recall serves Shenzhen and says what it replaced
    assert moved.merged
    recalled = memory.retrieve("Where does the user live?", subject="u1")
    assert recalled.results[0].value == "Shenzhen"
    assert "Beijing" not in [r.value for r in recalled.results]
    assert "Shenzhen" in recalled.context
    # a draft resting on the old fact is flagged
    checked = memory.verify("You live in Beijing, right?", subject="u1")
    assert not checked.ok and checked.flags[0].fact.value == "Beijing"
    assert checked.flags[0].replacement is not None and checked.flags[0].replacement.value == "Shenzhen"
    # feedback moves the confidence
    feedback = memory.feedback(recalled.fact_ids[:1], "success", session_id="s-2")
    assert feedback.facts[0].confidence >= feedback.facts[0].confidence_before
    # working memory and the context block
    session = memory.get_session("s-2")
    assert [t.content for t in session.turns] == ["I moved to Shenzhen last month."]
    context = memory.context("s-2", query="Where does the user live?", subject="u1")
    assert "Shenzhen" in context.context and context.retrieval is not None
    # facts and history
    facts = memory.facts(subject="u1")
    assert [(f.key, f.value, f.status) for f in facts] == [("home_city", "Shenzhen", "active")]
    assert [f.key for f in memory.facts(subject="u1", key=["home_city", "pet"])] == ["home_city"]
    assert [f.key for f in memory.facts(subject="u1", key_prefix="home_")] == ["home_city"]
    assert memory.facts(subject="u1", key_prefix=["pet", "work."]) == []
    history = memory.fact_history("home_city", subject="u1")
    assert [(v.value, v.status) for v in history.versions] == [
        ("Beijing", "superseded"),
        ("Shenzhen", "active"),
    ]
    assert {p.id for p in memory.iter_pulls(subject="u1")} == {first.id, moved.id}
    # revert of the move: Beijing is served again
    revert = memory.wait_for_pull(memory.revert(moved.id, reason="moved back after all").id)
    assert revert.reverts == moved.id and revert.merged
    assert [f.value for f in memory.facts(subject="u1")] == ["Beijing"]
    # and every answer was what the schema says it is
    _check_against_schema(openapi, recording.exchanges)


def test_errors_name_the_field_paths_and_the_status(memory, server_url, recording, openapi):
    # when: an invalid operation
    bad = OperationIn("CREATE", "user_profile", "not a key!", 3.0, None, "x")
    with pytest.raises(ValidationError) as caught:
        memory.propose([OperationIn.create("user_profile", "ok", "x", quote="q"), bad], subject="u1")
    # then
    assert set(caught.value.fields) == {"operations[1].confidence", "operations[1].key"}
    # a KPR that was never merged cannot be reverted; an unknown one is not found
    with pytest.raises(NotFound):
        memory.get_pull("00000000-0000-4000-8000-000000000000")
    with pytest.raises(NotFound):
        memory.fact_history("nothing_here", subject="u1")
    unsure = OperationIn.create("user_profile", "pet", "cat", quote="I have a cat.", confidence=0.1)
    rejected = memory.wait_for_pull(memory.propose([unsure], subject="u1").id)
    assert rejected.review_status == "REJECTED"
    with pytest.raises(Conflict):
        memory.revert(rejected.id)
    with (
        MemoryprClient(server_url, "mpr_not_a_token") as stranger,
        pytest.raises(AuthenticationError) as auth,
    ):
        stranger.get_session("s-1")
    assert auth.value.status == 401
    _check_against_schema(openapi, recording.exchanges)


def test_the_async_client_proposes_and_recalls(server_url, agent_token):
    async def run() -> tuple[str, str]:
        async with AsyncMemoryprClient(server_url, agent_token, namespace="demo") as memory:
            await memory.add_turn("s-9", "user", "My favourite colour is green.")
            op = OperationIn.create(
                "user_profile", "favorite_color", "green", quote="My favourite colour is green."
            )
            pull = await memory.wait_for_pull((await memory.propose([op], subject="u9", session_id="s-9")).id)
            recalled = await memory.retrieve("favourite colour", subject="u9")
            return pull.merge_status, recalled.results[0].value

    assert asyncio.run(run()) == ("MERGED", "green")
