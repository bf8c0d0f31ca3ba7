from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_an_api_url_that_matches_no_route_answers_404_in_json(agent_client):
    # given a session id with a character the route does not allow
    # when it is asked for
    response = agent_client.get("/api/v1/sessions/%C2%84/context")
    # then the answer is the API's JSON error, not Django's HTML page
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "No such endpoint or resource."}


def test_a_page_url_that_matches_no_route_still_answers_html(client):
    response = client.get("/review/no-such-page/at-all")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
