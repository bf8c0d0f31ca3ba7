"""NUL bytes and invalid UTF-8 in paths, query strings, cookies and forms answer 400, store nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import reverse
from rest_framework.test import APIClient

from memorypr.agents.services import reviewer_create
from memorypr.common.request_guards import request_problems
from memorypr.pulls.models import KnowledgePullRequest
from tests.common.test_parsers import ENDPOINTS, api_patterns, stored_counts
from tests.factories import pull_payload

SAMPLE_KWARGS = {"pull_id": uuid.uuid4(), "session_id": "session-1", "key": "home_city"}
BAD_QUERIES = {
    "nul": ("subject=a%00b", "subject", "NUL characters are not allowed in the value."),
    "nul-in-name": ("sub%00ject=a", "sub\\x00ject", "NUL characters are not allowed in the parameter name."),
    "invalid-utf8": ("subject=%ff", "subject", "The value is not valid UTF-8."),
    "encoded-surrogate": ("subject=%ed%a0%80", "subject", "The value is not valid UTF-8."),
    "second-parameter": ("namespace=demo&query=x%00", "query", "NUL characters"),
}


def _api_url(pattern: Any) -> str:
    kwargs = {name: SAMPLE_KWARGS[name] for name in pattern.pattern.regex.groupindex}
    return reverse(pattern.name, kwargs=kwargs)


def _assert_api_refusal(response: Any, *, field: str, message: str) -> None:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["errors"][0] == {"field": field, "message": body["errors"][0]["message"]}
    assert message in body["errors"][0]["message"]
    assert body["detail"] == f"{field}: {body['errors'][0]['message']}"


# --- the checks on their own --------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", []),
        ("subject=caf%C3%A9&topK=5&q=a+b", []),
        ("a&&b=", []),
        ("subject=a%00b", [{"field": "subject", "message": "NUL characters are not allowed in the value."}]),
        ("subject=%C3", [{"field": "subject", "message": "The value is not valid UTF-8."}]),
    ],
)
def test_query_strings_are_decoded_strictly(query: str, expected: list[dict[str, str]]) -> None:
    request = RequestFactory().get("/api/v1/pulls", QUERY_STRING=query)
    assert request_problems(request)[1] == expected


def test_a_nul_in_the_path_is_refused() -> None:
    request = RequestFactory().get("/api/v1/facts/a\x00b/history")
    assert request_problems(request) == (
        "URL path",
        [{"field": "path", "message": "NUL characters are not allowed in the URL path."}],
    )


# --- the API over HTTP --------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(p.name for p in api_patterns("get")))
@pytest.mark.parametrize("case", list(BAD_QUERIES))
def test_bad_query_strings_answer_400_on_every_api_get_endpoint(
    agent_client: APIClient, name: str, case: str
) -> None:
    query, field, message = BAD_QUERIES[case]
    pattern = next(p for p in api_patterns("get") if p.name == name)
    response = agent_client.get(f"{_api_url(pattern)}?{query}")
    _assert_api_refusal(response, field=field, message=message)


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_bad_query_strings_on_api_posts_store_nothing(agent_client: APIClient, name: str) -> None:
    # given a body the endpoint would take
    existing = agent_client.post(reverse("pull-list"), pull_payload(), format="json").json()["id"]
    endpoint = ENDPOINTS[name]
    pattern = next(p for p in api_patterns("post") if p.name == name)
    kwargs = {key: {**SAMPLE_KWARGS, "pull_id": existing}[key] for key in pattern.pattern.regex.groupindex}
    before = stored_counts()
    # when the query string carries a NUL
    response = agent_client.post(
        reverse(name, kwargs=kwargs) + "?namespace=demo%00", endpoint.body, format="json"
    )
    # then
    _assert_api_refusal(response, field="namespace", message="NUL characters")
    assert stored_counts() == before


@pytest.mark.django_db
def test_a_nul_in_a_fact_key_answers_400_not_500(agent_client: APIClient) -> None:
    response = agent_client.get("/api/v1/facts/home%00city/history?subject=user-1")
    _assert_api_refusal(response, field="path", message="NUL characters are not allowed in the URL path.")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/pulls/not-a-uuid"),
        ("get", "/api/v1/pulls/00000000-0000-0000-0000-00000000000"),
        ("post", "/api/v1/pulls/not-a-uuid/revert"),
        ("get", "/api/v1/sessions/bad%20id/context"),
        ("get", "/api/v1/sessions/" + "s" * 201),
    ],
)
def test_malformed_ids_in_api_paths_answer_404(agent_client: APIClient, method: str, url: str) -> None:
    before = stored_counts()
    response = getattr(agent_client, method)(url, {}, format="json")
    assert response.status_code == 404
    assert stored_counts() == before


@pytest.mark.django_db
def test_a_nul_in_a_cookie_answers_400(agent_client: APIClient) -> None:
    response = agent_client.get("/api/v1/pulls", HTTP_COOKIE="sessionid=abcdefgh\x00ijkl")
    _assert_api_refusal(response, field="cookie", message="NUL characters are not allowed in cookies.")


def test_healthz_refuses_a_nul_too(client: Client) -> None:
    response = client.get("/healthz?probe=%00")
    assert response.status_code == 400
    assert b"NUL characters" in response.content


# --- the dashboard and the admin ----------------------------------------------------------


@pytest.fixture
def reviewer_client(client: Client, db: None) -> Client:
    reviewer_create(username="ann", password="ann-password-1", namespaces=["demo"])
    client.login(username="ann", password="ann-password-1")
    return client


@pytest.fixture
def pull(agent_client: APIClient) -> KnowledgePullRequest:
    response = agent_client.post(reverse("pull-list"), pull_payload(), format="json")
    assert response.status_code == 201, response.content
    return KnowledgePullRequest.objects.get(pk=response.json()["id"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/review/?namespace=de%00mo",
        "/review/?agent=pro%00poser",
        "/review/?tab=needs&namespace=%ff",
        "/review/facts/demo/user%00-1/home_city/",
        "/review/facts/demo/user-1/home%00city/",
    ],
)
def test_dashboard_pages_answer_400_to_nul_and_invalid_utf8(reviewer_client: Client, url: str) -> None:
    response = reviewer_client.get(url)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert b"not allowed" in response.content or b"not valid UTF-8" in response.content


@pytest.mark.django_db
def test_dashboard_pages_still_answer_to_clean_queries(reviewer_client: Client) -> None:
    assert reviewer_client.get("/review/?namespace=demo&agent=proposer&tab=needs").status_code == 200
    assert reviewer_client.get("/review/pulls/not-a-uuid/").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form",
    [
        b"verdict=REJECT&reason=wrong%00city",
        b"verdict=REJ%00ECT&reason=wrong",
        b"verdict=REJECT&reason=%ff%fe",
        b"verdict=REJECT&reason=ok&exclude=0%00",
    ],
)
def test_dashboard_form_posts_with_nul_or_invalid_utf8_answer_400_and_store_nothing(
    reviewer_client: Client, pull: KnowledgePullRequest, form: bytes
) -> None:
    # given
    status_before, before = pull.review_status, stored_counts()
    # when
    response = reviewer_client.post(
        f"/review/pulls/{pull.id}/decide", data=form, content_type="application/x-www-form-urlencoded"
    )
    # then
    assert response.status_code == 400
    assert stored_counts() == before
    pull.refresh_from_db()
    assert pull.review_status == status_before


@pytest.mark.django_db
def test_admin_search_and_login_answer_400_to_nul(client: Client) -> None:
    User.objects.create_superuser("root", "root@example.com", "root-password-1")
    assert client.post("/admin/login/", {"username": "ro\x00ot", "password": "x"}).status_code == 400
    client.login(username="root", password="root-password-1")
    assert client.get("/admin/pulls/knowledgepullrequest/?q=a%00b").status_code == 400
    assert client.get("/admin/audit/auditevent/?q=%ff").status_code == 400
    assert client.get("/admin/pulls/knowledgepullrequest/?q=home").status_code == 200
