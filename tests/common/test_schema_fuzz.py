"""The API against its own OpenAPI schema: generated requests, valid and invalid, to every operation.

Whatever arrives, the answer is no 5xx, a status the schema documents, and a body and content
type that match it. The stateful run follows the schema's links (a KPR's id in an answer
leads to reading it and to proposing its revert). Requests go through the WSGI application
in-process, with a real agent token, against the test PostgreSQL; reviews and merges run
inline as each request commits.

MEMORYPR_FUZZ_EXAMPLES sets the examples per operation (and the stateful scenarios): small
by default, larger in a soak run.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, settings
from schemathesis.generation import GenerationMode

from tests.factories import agent_with_token

EXAMPLES = int(os.environ.get("MEMORYPR_FUZZ_EXAMPLES", "12"))
# The whole contract: what the schema promises about every answer.
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
    schemathesis.checks.response_headers_conformance,
]
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture
def agent_token(transactional_db: None) -> str:
    # One namespace, so that requests without `namespace` resolve to it.
    _, token = agent_with_token(name="fuzzer", namespaces=["demo"])
    return token


# Loaded once, at collection: serving the schema needs no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
# The stateful run follows links from answers that succeeded, so it sends valid requests only,
# and its KPRs keep the rules the schema cannot state (a CREATE has no oldValue, ...).
linked = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
linked.config.generation.update(modes=[GenerationMode.POSITIVE], with_security_parameters=False)


@linked.hook("map_body")
def coherent_kpr(context: Any, body: Any) -> Any:
    operation = getattr(context, "operation", None)
    if operation is None or operation.label != "POST /api/v1/pulls" or not isinstance(body, dict):
        return body
    body = {k: v for k, v in body.items() if k not in ("namespace", "idempotencyKey")}
    seen: set[tuple[str, str]] = set()
    operations = []
    for op in body.get("operations") or []:
        if (op["category"], op["key"]) in seen:
            continue
        seen.add((op["category"], op["key"]))
        op = {k: v for k, v in op.items() if k not in ("validFrom", "validTo", "relation")}
        op["confidence"] = max(op["confidence"], 0.9)
        op["derivedFrom"] = [key for key in op.get("derivedFrom") or [] if key != op["key"]]
        # values are free JSON in the schema; the 64-bit integer limit is not stated there
        old, new = str(op.get("oldValue") or "old")[:100], str(op.get("newValue") or "new")[:100]
        if op["action"] == "CREATE":
            op["oldValue"], op["newValue"] = None, new
        elif op["action"] == "UPDATE":
            op["oldValue"], op["newValue"] = old, new
        else:
            op["oldValue"], op["newValue"] = old, None
        operations.append(op)
    body["operations"] = operations
    return body


def _api_routes() -> set[tuple[str, str]]:
    """(method, view) of every route under /api/v1/, read from the URL configuration itself."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found: set[tuple[str, str]] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
                view = pattern.callback.view_class  # type: ignore[attr-defined]
                for method in set(view.http_method_names) - {"head", "options"}:
                    found.add((method.upper(), view.__name__))

    walk(get_resolver().url_patterns, "")
    return found


def test_the_schema_documents_every_api_route() -> None:
    documented = [
        (method.upper(), path)
        for path, item in schema.raw_schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(documented) == len(_api_routes()) == 12


@schema.parametrize()
@FUZZ_SETTINGS
def test_every_operation_answers_as_documented(case: Any, agent_token: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {agent_token}"}, checks=CHECKS)


def test_linked_operations_answer_as_documented(agent_token: str) -> None:
    class Workflow(linked.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": {"Authorization": f"Bearer {agent_token}"}}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS)

    Workflow.run(
        settings=settings(
            FUZZ_SETTINGS, max_examples=max(EXAMPLES // 2, 5), stateful_step_count=6, phases=[Phase.generate]
        )
    )
