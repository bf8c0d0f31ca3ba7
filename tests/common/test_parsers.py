"""Bad JSON bodies answer 4xx in the API's error shape on every POST endpoint, and store nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.exceptions import RequestDataTooBig
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient
from rest_framework.views import APIView

from memorypr.audit.models import AuditEvent
from memorypr.common.errors import InvalidBody, api_exception_handler
from memorypr.common.parsers import MAX_DEPTH, loads_strict, nests_deeper_than
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewEvent
from memorypr.working_memory.models import SessionTurn
from tests.factories import pull_payload

MARK = "\u2603bad\u2603"


# --- the parser on its own ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        (b'{"a": NaN}', "a", "NaN is not a JSON number."),
        (b'{"a": [1, Infinity]}', "a[1]", "Infinity is not a JSON number."),
        (b'{"a": {"b": -Infinity}}', "a.b", "-Infinity is not a JSON number."),
        (b'{"a": 1e999999}', "a", "overflows a float"),
        (b'{"a": -1.8e308}', "a", "overflows a float"),
        (b'{"a": ' + b"9" * 10_000 + b"}", "a", "10000 digits"),
        (b'{"a": 9223372036854775808}', "a", "64 bits"),
        (b'{"a": ["x", "y\\u0000"]}', "a[1]", "NUL characters are not allowed."),
        (b'{"a": {"k\\u0000": 1}}', 'a."k\\u0000"', "Field name: NUL"),
        (b'{"a": "\\ud800"}', "a", "Lone surrogate"),
        (b'{"a": "\\udc00x"}', "a", "Lone surrogate"),
        (b'{"a": "\xff"}', "body", "not valid UTF-8 (byte 0xff at offset 7)"),
        (b'{"a": "\xed\xa0\x80"}', "body", "not valid UTF-8"),
        (b'{"a": ', "body", "Malformed JSON"),
        (b"[" * 5000 + b"]" * 5000, "body", f"nesting deeper than {MAX_DEPTH}"),
        (b'{"a":' * 5000 + b"1" + b"}" * 5000, "body", f"nesting deeper than {MAX_DEPTH}"),
    ],
)
def test_loads_strict_names_the_field_at_fault(raw: bytes, field: str, message: str) -> None:
    with pytest.raises(InvalidBody) as caught:
        loads_strict(raw)
    assert caught.value.errors[0]["field"] == field
    assert message in caught.value.errors[0]["message"]


def test_loads_strict_keeps_what_json_allows() -> None:
    raw = json.dumps(
        {
            "int": -(2**63),
            "float": 1.5e308,
            "tiny": 1e-400,
            "emoji": "\U0001f600",
            "pair": "\ud83d\ude00",
            "brackets": "[[[[{{{{" * 100,
            "nested": [[[[1]]]],
        },
        ensure_ascii=True,
    ).encode()
    data = loads_strict(raw)
    assert data["int"] == -(2**63)
    assert data["pair"] == "\U0001f600"
    assert data["brackets"].startswith("[[[[")


def test_depth_is_counted_outside_strings_only() -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert not nests_deeper_than(deep, MAX_DEPTH)
    assert nests_deeper_than("[" + deep + "]", MAX_DEPTH)
    assert not nests_deeper_than(json.dumps(["[" * 1000, '\\"[' * 1000]), MAX_DEPTH)
    # an unterminated string runs to the end: no brackets counted after it, and no slow rescan
    assert not nests_deeper_than('"\\"' * 200_000 + "[" * 10, MAX_DEPTH)


def test_depth_limit_is_exact() -> None:
    ok = b'{"a": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    assert isinstance(loads_strict(ok)["a"], list)
    with pytest.raises(InvalidBody):
        loads_strict(b'{"a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}")


# --- every API POST endpoint over HTTP ----------------------------------------------------


@dataclass
class Endpoint:
    name: str
    body: dict[str, Any]
    string_field: str  # where a string is expected: NUL, surrogates, nesting go here
    number_field: str  # where a number (or a string) is expected: huge numbers go here
    kwargs: dict[str, Any] = field(default_factory=dict)


ENDPOINTS: dict[str, Endpoint] = {
    e.name: e
    for e in [
        Endpoint("pull-list", pull_payload(), "operations[0].newValue", "operations[0].confidence"),
        Endpoint("pull-revert", {"reason": "wrong city"}, "reason", "reason"),
        Endpoint("retrieve", {"subject": "user-1", "query": "home city"}, "query", "topK"),
        Endpoint("verify", {"subject": "user-1", "text": "I live in Beijing."}, "text", "text"),
        Endpoint("feedback", {"factIds": [1], "outcome": "success"}, "sessionId", "factIds[0]"),
        Endpoint("session-turns", {"role": "user", "content": "hello"}, "content", "content"),
    ]
}


def url_patterns(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    """Every URL pattern of the project with its full route, nested includes walked."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            yield from url_patterns(entry, prefix + str(entry.pattern))
        else:
            yield prefix + str(entry.pattern), entry


def api_patterns(method: str) -> Iterator[URLPattern]:
    """The API's URL patterns whose view answers `method`."""
    for route, pattern in url_patterns():
        view_class = getattr(pattern.callback, "view_class", None) or getattr(pattern.callback, "cls", None)
        if route.startswith("api/v1/") and view_class is not None and method in view_class.http_method_names:
            yield pattern


def test_every_api_post_endpoint_is_covered() -> None:
    names = {pattern.name for pattern in api_patterns("post")}
    assert names == set(ENDPOINTS), "a new POST endpoint needs an entry in ENDPOINTS"


def _set(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    parts = path.replace("[", ".[").split(".")
    target: Any = body
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target[part]
    last = parts[-1]
    if last.startswith("["):
        target[int(last[1:-1])] = value
    else:
        target[last] = value
    return body


def _with_raw(body: dict[str, Any], path: str, raw_json: str) -> bytes:
    """The body as JSON text with `raw_json` spliced in verbatim at `path`."""
    text = json.dumps(_set(body, path, MARK), ensure_ascii=False)
    return text.replace(json.dumps(MARK, ensure_ascii=False), raw_json).encode("utf-8", "surrogatepass")


def stored_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (KnowledgePullRequest, Operation, ReviewEvent, AuditEvent, FactVersion, SessionTurn)
    }


@pytest.fixture
def url_for(agent_client: APIClient) -> Any:
    existing = agent_client.post(reverse("pull-list"), pull_payload(), format="json")
    assert existing.status_code == 201, existing.content
    kwargs = {"pull_id": existing.json()["id"], "session_id": "session-1"}

    def make(endpoint: Endpoint) -> str:
        pattern = next(p for p in api_patterns("post") if p.name == endpoint.name)
        wanted = {name: kwargs[name] for name in pattern.pattern.regex.groupindex}
        return reverse(endpoint.name, kwargs=wanted)

    return make


def _assert_refused(response: Any, *, status: int = 400, field: str | None = None, message: str = "") -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["errors"], body
    assert all(set(error) == {"field", "message"} for error in body["errors"])
    if field is not None:
        assert body["errors"][0]["field"] == field, body
    assert message in body["errors"][0]["message"], body


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_the_base_bodies_are_not_refused(agent_client: APIClient, url_for: Any, name: str) -> None:
    """Control: each endpoint takes its base body, so a 400 below is the bad part's doing."""
    endpoint = ENDPOINTS[name]
    response = agent_client.post(url_for(endpoint), endpoint.body, format="json")
    assert response.status_code in (200, 201, 404, 409), response.content


STRING_VALUES = {
    "nul": ('"home\\u0000city"', "NUL characters are not allowed."),
    "nul-in-key": ('{"a\\u0000": 1}', "Field name: NUL characters are not allowed."),
    "lone-surrogate": ('"\\ud800"', "Lone surrogate"),
    "deep-array": ("[" * 5000 + "]" * 5000, f"nesting deeper than {MAX_DEPTH}"),
    "deep-object": ('{"a":' * 5000 + "1" + "}" * 5000, f"nesting deeper than {MAX_DEPTH}"),
    "just-too-deep": ("[" * MAX_DEPTH + "]" * MAX_DEPTH, f"nesting deeper than {MAX_DEPTH}"),
}
NUMBER_VALUES = {
    "exponent-overflow": ("1e999999", "overflows a float"),
    "float-overflow": ("1.8e308", "overflows a float"),
    "ten-thousand-digits": ("9" * 10_000, "10000 digits"),
    "past-64-bits": ("9" * 25, "64 bits"),
    "nan": ("NaN", "NaN is not a JSON number."),
    "infinity": ("Infinity", "Infinity is not a JSON number."),
    "minus-infinity": ("-Infinity", "-Infinity is not a JSON number."),
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
@pytest.mark.parametrize("case", list(STRING_VALUES))
def test_bad_strings_and_nesting_answer_400_naming_the_field(
    agent_client: APIClient, url_for: Any, name: str, case: str
) -> None:
    # given
    endpoint, (raw, message) = ENDPOINTS[name], STRING_VALUES[case]
    url, before = url_for(endpoint), stored_counts()
    # when
    response = agent_client.post(
        url, data=_with_raw(endpoint.body, endpoint.string_field, raw), content_type="application/json"
    )
    # then
    deep = message.startswith("nesting")
    field = "body" if deep else endpoint.string_field
    if case == "nul-in-key":
        field = f'{endpoint.string_field}."a\\u0000"'
    _assert_refused(response, field=field, message=message)
    assert stored_counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
@pytest.mark.parametrize("case", list(NUMBER_VALUES))
def test_bad_numbers_answer_400_naming_the_field(
    agent_client: APIClient, url_for: Any, name: str, case: str
) -> None:
    endpoint, (raw, message) = ENDPOINTS[name], NUMBER_VALUES[case]
    url, before = url_for(endpoint), stored_counts()
    response = agent_client.post(
        url, data=_with_raw(endpoint.body, endpoint.number_field, raw), content_type="application/json"
    )
    _assert_refused(response, field=endpoint.number_field, message=message)
    assert stored_counts() == before


BODIES = {
    "invalid-utf8": (lambda body: json.dumps(body).encode()[:-1] + b', "x": "\xff\xfe"}', "not valid UTF-8"),
    "utf8-surrogate": (lambda body: json.dumps(body).encode()[:-1] + b', "x": "\xed\xa0\x80"}', "UTF-8"),
    "truncated": (lambda body: json.dumps(body).encode()[:-1], "Malformed JSON"),
    "array": (lambda body: json.dumps([body]).encode(), "Expected a JSON object, got an array."),
    "string": (lambda body: b'"hello"', "Expected a JSON object, got a scalar."),
    "number": (lambda body: b"3", "Expected a JSON object, got a scalar."),
    "null": (lambda body: b"null", "Expected a JSON object, got a scalar."),
    "bom": (lambda body: b"\xef\xbb\xbf" + json.dumps(body).encode(), "Malformed JSON"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
@pytest.mark.parametrize("case", list(BODIES))
def test_unreadable_bodies_answer_400(agent_client: APIClient, url_for: Any, name: str, case: str) -> None:
    endpoint, (make, message) = ENDPOINTS[name], BODIES[case]
    url, before = url_for(endpoint), stored_counts()
    response = agent_client.post(url, data=make(endpoint.body), content_type="application/json")
    _assert_refused(response, field="body", message=message)
    assert stored_counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
def test_other_content_types_answer_415(
    agent_client: APIClient, url_for: Any, name: str, content_type: str
) -> None:
    endpoint = ENDPOINTS[name]
    url, before = url_for(endpoint), stored_counts()
    response = agent_client.post(url, data=json.dumps(endpoint.body).encode(), content_type=content_type)
    _assert_refused(response, status=415, field="body", message="Unsupported media type")
    assert stored_counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_an_empty_body_is_a_4xx(agent_client: APIClient, url_for: Any, name: str) -> None:
    url, before = url_for(ENDPOINTS[name]), stored_counts()
    response = agent_client.post(url, data=b"", content_type="application/json")
    assert 400 <= response.status_code < 500, response.content
    assert response.json()["detail"]
    assert stored_counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_an_oversized_body_answers_413_stating_the_limit(
    agent_client: APIClient, url_for: Any, settings: Any, name: str
) -> None:
    # given a small limit, and a body past it
    endpoint = ENDPOINTS[name]
    url, before = url_for(endpoint), stored_counts()
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    body = _with_raw(endpoint.body, endpoint.string_field, json.dumps("x" * 5000))
    # when
    response = agent_client.post(url, data=body, content_type="application/json")
    # then
    _assert_refused(response, status=413, field="body", message="the limit is 4096 bytes")
    assert str(len(body)) in response.json()["detail"]
    assert stored_counts() == before


@pytest.mark.django_db
def test_an_oversized_kpr_at_the_default_limit_answers_413(agent_client: APIClient, settings: Any) -> None:
    before = stored_counts()
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = _with_raw(pull_payload(), "operations[0].newValue", json.dumps("x" * (limit + 1)))
    response = agent_client.post(reverse("pull-list"), data=body, content_type="application/json")
    _assert_refused(response, status=413, field="body", message=f"the limit is {limit} bytes")
    assert stored_counts() == before


@pytest.mark.django_db
def test_a_body_too_big_for_django_answers_413_json(settings: Any) -> None:
    """Django refuses request.body past the limit with an HTML 400; the API answers 413 JSON."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = api_exception_handler(RequestDataTooBig("too big"), {"view": APIView()})
    assert response is not None and response.status_code == 413
    assert response.data == {
        "detail": "Request body is larger than the limit of 100 bytes.",
        "errors": [{"field": "body", "message": "Request body is larger than the limit of 100 bytes."}],
    }
