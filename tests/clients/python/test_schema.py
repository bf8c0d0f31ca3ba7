"""The client's models and calls against the OpenAPI schema: a drift on either side fails here."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from memorypr_client import NO_RETRIES, ApiError, MemoryprClient, OperationIn, models

from tests.clients.python.schema_types import covers, model_fields, schema_atoms

REQUESTS = [cls for cls in models.MODELS if cls.__schema__.endswith("Request")]  # type: ignore[attr-defined]
ANSWERS = [cls for cls in models.MODELS if cls not in REQUESTS]


def _component(openapi: dict[str, Any], cls: type) -> dict[str, Any]:
    name = cls.__schema__  # type: ignore[attr-defined]
    components = openapi["components"]["schemas"]
    assert name in components, f"{cls.__name__} follows {name}, which the schema no longer has"
    component: dict[str, Any] = components[name]
    return component


@pytest.mark.parametrize("cls", ANSWERS, ids=lambda cls: cls.__name__)
def test_an_answer_model_has_the_fields_of_its_component_and_takes_every_value_it_allows(openapi, cls):
    # given
    component = _component(openapi, cls)
    components = openapi["components"]["schemas"]
    fields = model_fields(cls)
    # then: the same fields, required alike
    assert set(fields) == set(component["properties"]), cls.__name__
    assert {name for name, (_, required) in fields.items() if required} == set(component.get("required", []))
    # and every value the schema allows decodes
    for name, prop in component["properties"].items():
        wanted = schema_atoms(prop, components)
        assert covers(fields[name][0], wanted), (
            f"{cls.__name__}.{name}: schema {wanted}, client {fields[name][0]}"
        )


@pytest.mark.parametrize("cls", REQUESTS, ids=lambda cls: cls.__name__)
def test_a_request_model_sends_only_what_its_component_takes(openapi, cls):
    # given
    component = _component(openapi, cls)
    components = openapi["components"]["schemas"]
    fields = model_fields(cls)
    # then: the same fields, and those the API requires are required by the client
    assert set(fields) == set(component["properties"]), cls.__name__
    assert {name for name, (_, required) in fields.items() if required} == set(component.get("required", []))
    for name, prop in component["properties"].items():
        allowed = schema_atoms(prop, components)
        # None on an optional field means "not sent", not null
        sent = fields[name][0] - ({None} if not fields[name][1] and None not in allowed else set())
        assert covers(allowed, sent), f"{cls.__name__}.{name}: schema {allowed}, client {sent}"


def test_every_agent_component_has_a_model(openapi):
    # given: the components reachable from the agent API's operations
    mapped = {cls.__schema__ for cls in models.MODELS}  # type: ignore[attr-defined]
    components = openapi["components"]["schemas"]
    # then: every object component is a model, except pages (models.Page) and the error body (ApiError)
    objects = {
        name
        for name, component in components.items()
        if "properties" in component and not name.startswith("Paginated")
    }
    errors = {
        name
        for name in objects
        if set(components[name]["properties"]) <= {"detail", "errors", "field", "message"}
    }
    assert objects - errors - mapped == set()


def _routes(openapi: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, item in openapi["paths"].items()
        if path.startswith("/api/v1/")
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }


def _template(path: str, routes: set[tuple[str, str]], method: str) -> str | None:
    # The longest template first: /sessions/{id}/context before /sessions/{id}.
    for route_method, template in sorted(routes, key=lambda route: -len(route[1])):
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^?]+", re.escape(template)) + "$"
        if route_method == method and re.match(pattern, path):
            return template
    return None


def test_the_client_calls_every_agent_endpoint_of_the_schema(openapi):
    # given: a server that records each request and answers 404
    routes = _routes(openapi)
    seen: set[tuple[str, str]] = set()

    def record(request: httpx.Request) -> httpx.Response:
        template = _template(request.url.path, routes, request.method)
        assert template is not None, f"{request.method} {request.url.path} is in no schema path"
        seen.add((request.method, template))
        return httpx.Response(404, json={"detail": "Not found."})

    client = MemoryprClient(
        "http://memorypr.test", "t", retry=NO_RETRIES, transport=httpx.MockTransport(record)
    )
    op = OperationIn.create("user_profile", "home_city", "Shenzhen", quote="I live in Shenzhen.")
    calls = [
        lambda: client.propose([op], subject="u"),
        lambda: client.get_pull("0b5e7f6a-1111-4222-8333-944445555666"),
        lambda: client.list_pulls(),
        lambda: client.revert("0b5e7f6a-1111-4222-8333-944445555666", reason="wrong"),
        lambda: client.retrieve("where?", subject="u"),
        lambda: client.verify("You live in Beijing.", subject="u"),
        lambda: client.feedback([1], "success"),
        lambda: client.add_turn("s-1", "user", "hi"),
        lambda: client.get_session("s-1"),
        lambda: client.context("s-1", query="where?"),
        lambda: client.list_facts(subject="u"),
        lambda: client.fact_history("pets/dog:name", subject="u"),
    ]
    # when
    for call in calls:
        with pytest.raises(ApiError):
            call()
    # then
    assert seen == routes


def test_list_facts_sends_only_query_parameters_the_schema_names_and_repeats_key_filters(openapi):
    # given: a server that records the query of each request
    sent: list[list[tuple[str, str]]] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(list(request.url.params.multi_items()))
        return httpx.Response(200, json={"count": 0, "next": None, "previous": None, "results": []})

    client = MemoryprClient(
        "http://memorypr.test", "t", namespace="demo", retry=NO_RETRIES, transport=httpx.MockTransport(record)
    )
    # when: every filter, keys given several times and a prefix once; then an empty key list
    client.list_facts(
        subject="u", category="user_profile", status="active", page=2, page_size=50,
        key=["home_city", "pet"], key_prefix="pets.",
    )  # fmt: skip
    client.list_facts(subject="u", key=[])
    # then: each key is its own parameter, and every name is one the schema documents
    first, second = sent
    assert [value for name, value in first if name == "key"] == ["home_city", "pet"]
    assert [value for name, value in first if name == "keyPrefix"] == ["pets."]
    documented = {p["name"] for p in openapi["paths"]["/api/v1/facts"]["get"]["parameters"]}
    assert {name for name, _ in first} <= documented
    assert "key" not in {name for name, _ in second}
