from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

API_METHODS = ("get", "post")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in API_METHODS
    ]


def test_every_api_operation_documents_the_errors_every_request_can_meet(schema):
    for method, path, operation in operations(schema):
        codes = set(operation["responses"])
        assert {"400", "401", "403", "429", "503"} <= codes, (method, path)
        if method == "POST":
            assert {"413", "415"} <= codes, (method, path)
        if "{" in path:
            assert "404" in codes, (method, path)


def test_errors_are_documented_with_the_one_error_body(schema):
    operation = schema["paths"]["/api/v1/pulls"]["post"]
    error = operation["responses"]["409"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/Error"}
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == {"detail", "errors"}


def test_the_evidence_timestamp_is_epoch_milliseconds_or_a_date_time(schema):
    timestamp = schema["components"]["schemas"]["EvidenceRequest"]["properties"]["timestamp"]
    assert [choice["type"] for choice in timestamp["oneOf"]] == ["number", "string"]
    assert timestamp["oneOf"][1]["format"] == "date-time"
    assert timestamp["nullable"] is True


def test_request_bodies_that_refuse_unknown_fields_say_so(schema):
    components = schema["components"]["schemas"]
    for name in (
        "PullInRequest",
        "OperationRequest",
        "EvidenceRequest",
        "RetrieveInRequest",
        "TurnInRequest",
    ):
        assert components[name]["additionalProperties"] is False, name


def test_lists_are_documented_paginated(schema):
    for path in ("/api/v1/pulls", "/api/v1/facts"):
        body = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert body["$ref"].startswith("#/components/schemas/Paginated"), path


def test_a_submitted_kpr_links_to_reading_and_reverting_it(schema):
    links = schema["paths"]["/api/v1/pulls"]["post"]["responses"]["201"]["links"]
    assert links["GetPull"]["operationId"] == "v1_pulls_retrieve"
    assert links["RevertPull"]["parameters"] == {"pull_id": "$response.body#/id"}
