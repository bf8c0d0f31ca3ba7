"""The insights page: charts drawn on the server, each with its table, scoped to the reviewer."""

from __future__ import annotations

import re

import pytest

from memorypr.agents.services import reviewer_create
from tests.dashboard.test_insights_selectors import agents, traffic  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

CHARTS = ["queue-size", "queue-age", "by-source", "by-rule", "by-agent", "time-to-decision", "auto-approval", "conflicts-reverts"]  # fmt: skip


def test_insights_needs_a_login(client):
    response = client.get("/review/insights/")
    assert response.status_code == 302 and response["Location"].startswith("/review/login/")


def test_every_chart_is_an_svg_with_its_table(reviewer_client, traffic):  # noqa: F811
    response = reviewer_client.get("/review/insights/", {"range": "24h"})
    html = response.content.decode()
    assert response.status_code == 200
    assert [chart.id for chart in response.context["page"].charts] == CHARTS
    for chart_id in CHARTS:
        section = html.split(f'<section class="chart" id="{chart_id}"')[1].split("</section>")[0]
        assert "<svg" in section and "<table" in section, chart_id
    summary = response.context["page"].summary
    assert (summary["waiting"], summary["decided"], summary["auto_rate"]) == (1, 3, "33%")
    by_agent = next(c for c in response.context["page"].charts if c.id == "by-agent")
    assert by_agent.table_rows == [["proposer", "2", "0", "1", "0", "3"]]
    assert (
        len(re.findall(r"<script", html.split("<body")[1])) == 0
    )  # drawn on the server, no script in the page
    assert "cdn" not in html.lower()


def test_a_range_outside_the_list_is_a_400(reviewer_client):
    response = reviewer_client.get("/review/insights/", {"range": "1y"})
    assert response.status_code == 400 and 'data-field="range"' in response.content.decode()


def test_another_namespaces_reviewer_counts_none_of_it(client, traffic):  # noqa: F811
    reviewer_create(username="olga", password="olga-password-1", namespaces=["elsewhere"])
    client.login(username="olga", password="olga-password-1")
    page = client.get("/review/insights/", {"range": "24h"}).context["page"]
    by_agent = next(c for c in page.charts if c.id == "by-agent")
    assert [row[0] for row in by_agent.table_rows] == ["outsider"]
    assert page.summary["waiting"] == 1 and page.summary["decided"] == 1
