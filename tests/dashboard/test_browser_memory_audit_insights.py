"""The memory browser, the audit trail and insights in a real browser (Debian's chromium driven
by Playwright), each saving the screenshot the README shows."""

from __future__ import annotations

import csv
import math
import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.facts.tasks import merge_pull
from memorypr.pulls.models import KnowledgePullRequest
from reviewer.tasks import review_pull
from tests.dashboard.test_insights_selectors import _person_decides, _reviewed
from tests.factories import agent_with_token
from tests.facts.kprs import create, merged, update

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def chromium_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900}, accept_downloads=True)
    page = context.new_page()
    # Anything the content security policy refuses (an inline script or style) is a console error.
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield page
    context.close()
    assert [e for e in errors if "Content Security Policy" in e or "Refused" in e] == []


@pytest.fixture
def sign_in(live_server) -> Callable[..., None]:  # type: ignore[no-untyped-def]
    """Log in the way a person does, landing on `path`."""

    def run(page: Any, path: str, username: str = "ann", password: str = "ann-password-1") -> None:
        page.goto(f"{live_server.url}/review/login/?next={path}")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}{path}")

    return run


@pytest.fixture
def handed_off_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """The story approves and merges its KPRs itself; the automatic review and merge stay out."""
    monkeypatch.setattr(review_pull, "delay", lambda pull_id: None)
    monkeypatch.setattr(merge_pull, "delay", lambda pull_id: None)


def _shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_browsing_a_subjects_memory_as_of_a_moment(
    live_server, chromium_page, sign_in, reviewer, handed_off_by_hand
):
    # given a fact, a policy derived from it and another fact, then, a second later, an update
    # of the fact that made the policy stale
    page = chromium_page
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    demo = Namespace.objects.get(name="demo")
    merged(
        agent, demo,
        create("likes_coffee", "user likes coffee"),
        create("offer_coffee_when_tired", "offer coffee when tired", category="derived", derived_from=["likes_coffee"]),
        create("home_city", "Shenzhen"),
        create("dietary_preference", "vegetarian", category="user_profile"),
    )  # fmt: skip
    # the moment asked for is a whole second (the picker's precision) between the two merges
    between = datetime.fromtimestamp(math.ceil(time.time()), tz=UTC)
    time.sleep(max(0.0, (between - timezone.now()).total_seconds()) + 0.05)
    merged(agent, demo, update("likes_coffee", "user likes coffee", "drinks tea now"))
    # when the reviewer finds the subject and opens it
    sign_in(page, "/review/memory/")
    page.click("#subjects a:text('user-1')")
    page.wait_for_url("**/review/memory/demo/user-1/")
    # then the facts active now show, without the stale policy
    keys = page.locator("#facts tbody tr").evaluate_all("rows => rows.map(r => r.dataset.key)")
    assert keys == ["dietary_preference", "home_city", "likes_coffee"]
    assert "drinks tea now" in page.locator("#facts").inner_text()
    # when picking the moment before the update
    page.fill("input[name=asOf]", between.strftime("%Y-%m-%dT%H:%M:%S"))
    page.click("#memory-filters button[type=submit]")
    page.wait_for_url("**asOf=*")
    # then the old value is back, with the policy that rested on it
    table = page.locator("#facts").inner_text()
    assert (
        "user likes coffee" in table and "offer coffee when tired" in table and "drinks tea now" not in table
    )
    assert "as of" in page.locator("#memory-summary").inner_text()
    # when opening the fact now: its versions, the KPR behind each, and the graph of its edges
    page.goto(f"{live_server.url}/review/memory/demo/user-1/")
    page.click("#facts tr[data-key=likes_coffee] td:nth-child(2) a")
    page.wait_for_url("**/review/memory/demo/facts/*/")
    assert page.locator("#timeline tbody tr").count() == 2
    assert page.locator("#timeline a.kpr").count() == 3  # v1 written and retired, v2 written
    assert page.locator("#fact-graph g.node").count() == 3
    assert page.locator("#fact-graph g.node.s-stale").count() == 1
    assert page.locator("#fact-graph g.edge.e-DERIVED_FROM").count() == 1
    _shot(page, "memory.png")
    # and a KPR link leads to the KPR page
    page.locator("#timeline a.kpr").first.click()
    page.wait_for_url("**/review/pulls/*/")


def test_the_audit_trail_filtered_by_a_kpr_and_exported_as_csv(
    live_server, chromium_page, sign_in, reviewer, tmp_path
):
    # given two KPRs reviewed in demo (the review runs as it does in production, after commit)
    page = chromium_page
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    first = _reviewed(agent, "demo", "allergy", "shrimp", importance=0.95)
    _reviewed(agent, "demo", "home_city", "Shenzhen")
    short = str(first.pk)[:8]
    # when the reviewer opens the audit trail
    sign_in(page, "/review/audit/")
    assert "Chain intact" in page.locator("#chain-status").inner_text()
    everything = page.locator("#audit-events tbody tr").count()
    # and searches for the eight characters the dashboard shows for the first KPR
    page.fill("input[name=q]", short)
    page.click("#audit-filters button[type=submit]")
    page.wait_for_url(f"**q={short}*")
    # then only that KPR's events are listed
    rows = page.locator("#audit-events tbody tr")
    assert 0 < rows.count() < everything
    assert set(page.locator("#audit-events a.kpr").all_inner_texts()) == {short}
    _shot(page, "audit.png")
    # when exporting the filtered rows as CSV
    with page.expect_download() as download:
        page.click("#export-csv")
    path = tmp_path / "audit.csv"
    download.value.save_as(path)
    # then the file holds the same rows, in chain order, with their hashes
    exported = list(csv.DictReader(path.open()))
    assert len(exported) == rows.count()
    assert {row["pullId"] for row in exported} == {str(first.pk)}
    assert [int(r["sequence"]) for r in exported] == sorted(int(r["sequence"]) for r in exported)
    assert all(len(row["hash"]) == 64 for row in exported)


def _backdate(pull: KnowledgePullRequest, *, hours: float, person_after: float) -> None:
    """Move a KPR and its review events into the past, as if the traffic had come over days;
    a person's decision lands `person_after` hours after the KPR. Raw SQL past the
    immutability triggers, as only a test may."""
    shift = timedelta(hours=hours)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "UPDATE pulls_knowledgepullrequest SET created_at = created_at - %s, "
            "reviewed_at = reviewed_at - %s, merged_at = merged_at - %s WHERE id = %s",
            [shift, shift, shift, pull.pk],
        )
        cursor.execute(
            "UPDATE pulls_reviewevent SET created_at = created_at - %s WHERE pull_id = %s AND reviewer_kind <> 'human'",
            [shift, pull.pk],
        )
        cursor.execute(
            "UPDATE pulls_reviewevent SET created_at = created_at - %s WHERE pull_id = %s AND reviewer_kind = 'human'",
            [shift - timedelta(hours=person_after), pull.pk],
        )


def test_insights_draw_the_queue_and_the_decisions(live_server, chromium_page, sign_in, reviewer):
    # given a week of traffic in demo: most KPRs approved by the rules, protected keys held for
    # a person who decides most of them hours later, and one KPR in another namespace
    page = chromium_page
    chance = random.Random(11)
    proposers = [
        agent_with_token(name=name, namespaces=["demo"])[0]
        for name in ("chat-agent", "email-agent", "planner")
    ]
    outsider, _ = agent_with_token(name="outsider", namespaces=["elsewhere"])
    _reviewed(outsider, "elsewhere", "allergy", "nuts", importance=0.95)
    for n in range(18):
        agent = proposers[n % 3]
        held = n % 3 == 0
        pull = _reviewed(agent, "demo", f"{'allergy' if held else 'fact'}_{n}", f"value {n}",
                         importance=0.95 if held else 0.5, confidence=0.9 if n % 5 else 0.6)  # fmt: skip
        wait = chance.uniform(1, 20)
        if pull.review_status == "NEEDS_HUMAN_REVIEW" and n < 14:
            _person_decides(pull, "APPROVE" if n % 2 else "REJECT")
        _backdate(pull, hours=chance.uniform(wait + 1, 160), person_after=wait)
    # when the reviewer opens insights for the last seven days
    sign_in(page, "/review/insights/")
    page.check("input[name=range][value='7d']")
    page.click("#insights-range button[type=submit]")
    page.wait_for_url("**range=7d")
    # then every chart is drawn, each with its table
    for chart in ("queue-size", "queue-age", "by-source", "by-rule", "by-agent", "time-to-decision", "auto-approval", "conflicts-reverts"):  # fmt: skip
        section = page.locator(f"section#{chart}")
        assert section.locator("svg").count() == 1, chart
        assert section.locator("table").count() == 1, chart
    agents = page.locator("section#by-agent table tbody th").all_inner_texts()
    assert sorted(agents) == ["chat-agent", "email-agent", "planner"]  # not the other namespace's
    assert page.locator("section#by-source svg rect").count() >= 3
    assert page.locator("section#queue-size svg rect").count() >= 1
    assert page.locator("#insights-summary dd").first.inner_text() != ""
    _shot(page, "insights.png")
