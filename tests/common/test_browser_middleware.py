"""The browser pages' middleware runs for the dashboard and the admin, and passes the agent API by."""

from __future__ import annotations

import pytest

from tests.factories import agent_with_token


@pytest.mark.django_db
def test_an_agent_api_answer_carries_none_of_the_browser_pages_headers(api_client):
    # given an agent
    _, token = agent_with_token(name="api-only", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    # when it calls the API
    response = api_client.get("/api/v1/pulls")
    # then it is answered, with no frame or content-security header, no cookie and no session
    assert response.status_code == 200
    assert "X-Frame-Options" not in response
    assert "Content-Security-Policy" not in response
    assert not response.cookies
    assert not hasattr(response.wsgi_request, "session")


@pytest.mark.django_db
def test_the_dashboard_still_gets_its_session_login_and_headers(client, django_user_model):
    # given a reviewer who logged in
    client.force_login(django_user_model.objects.create_superuser("lead", "lead@example.com", "pw-lead-1234"))
    # when they open the queue
    response = client.get("/review/")
    # then the page is theirs (session and login), framed by nobody, under the policy
    assert response.status_code == 200
    assert response.wsgi_request.user.is_authenticated
    assert response["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_api_docs_outside_the_agent_api_keep_the_browser_middleware(client):
    response = client.get("/api/docs/")
    assert response.status_code in (200, 302)
    assert "X-Frame-Options" in response
