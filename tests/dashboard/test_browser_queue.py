"""The queue in real Chromium: home and docs, search and filters in the URL, polling, bulk, tenancy."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from memorypr.agents.services import reviewer_create
from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest
from tests.dashboard.conftest import SCREENSHOTS
from tests.factories import operation_payload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_home_links_everything_and_the_api_docs_render_offline(live_server, page):
    # given a browser that reaches nothing but this server
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith(live_server.url) else route.abort(),
    )
    # when a newcomer opens the site
    page.goto(f"{live_server.url}/")
    # then the home page links the dashboard, the docs, the admin and health
    for name in ("Review dashboard", "API docs (Swagger UI)", "Redoc", "Admin", "Health"):
        assert page.get_by_role("link", name=name).count() == 1
    # and Swagger UI and Redoc draw the API from the project's own files
    page.get_by_role("link", name="API docs (Swagger UI)").click()
    page.locator(".swagger-ui .info .title", has_text="memorypr API").wait_for(timeout=15_000)
    page.goto(f"{live_server.url}/api/redoc/")
    page.locator("h1", has_text="memorypr API").wait_for(timeout=15_000)


def test_search_and_filters_live_in_the_url_and_survive_a_reload(
    live_server, page, login, reviewer, queued_pull
):
    # given a queue with two subjects and more than one page of one of them
    for i in range(26):
        queued_pull(key=f"note_{i}", newValue=f"value {i}")
    queued_pull(subject="user-2", operations=[
        operation_payload(action="UPDATE", key="home_city", oldValue="Beijing", newValue="Shenzhen"),
        operation_payload(key="offer_coffee", category="derived", newValue=True),
    ])  # fmt: skip
    login(page, "ann", "ann-password-1")
    # the tab counts all, and the queue pages
    assert page.locator("a[data-tab=needs] .count").inner_text() == "27"
    assert page.locator("tr[data-href]").count() == 25
    page.get_by_role("link", name="next →").click()
    page.wait_for_url("**page=2**")
    assert page.locator("tr[data-href]").count() == 2
    # when the reviewer searches and filters
    page.goto(f"{live_server.url}/review/")
    page.fill("#q", "Shenzhen")
    expect(page).to_have_url(re.compile(r"q=Shenzhen"))
    page.select_option("select[name=category]", "derived")
    expect(page).to_have_url(re.compile(r"category=derived"))
    # then one row, its one-line summary, counts that follow, and a URL that holds it all
    page.locator("a[data-tab=needs] .count", has_text="1").wait_for()
    assert page.locator("tr[data-href]").count() == 1
    assert page.locator("td.summary").inner_text() == "home_city: Beijing → Shenzhen (+1 derived)"
    query = parse_qs(urlparse(page.url).query)
    assert query["q"] == ["Shenzhen"] and query["category"] == ["derived"]
    # and a reload (or a bookmark) shows the same
    page.reload()
    assert page.input_value("#q") == "Shenzhen"
    assert page.locator("select[name=category]").input_value() == "derived"
    assert page.locator("tr[data-href]").count() == 1
    assert page.locator("a[data-tab=needs] .count").inner_text() == "1"


def test_a_new_kpr_appears_without_a_reload(live_server, page, login, reviewer, queued_pull):
    # given the reviewer looking at the queue
    queued_pull(key="allergy", newValue="shrimp")
    login(page, "ann", "ann-password-1")
    assert page.locator("tr[data-href]").count() == 1
    page.evaluate("window.loadedOnce = true")
    # when an agent proposes another KPR that needs a person
    queued_pull(key="diet", newValue="vegan")
    # then it shows up by itself (the page was not reloaded), and so does the tab count
    page.locator("tr[data-href]").nth(1).wait_for(timeout=15_000)
    assert page.locator("a[data-tab=needs] .count").inner_text() == "2"
    assert page.evaluate("window.loadedOnce") is True


def test_bulk_reject_of_selected_rows_with_one_reason(live_server, page, login, reviewer, queued_pull):
    # given three queued KPRs
    pulls = [queued_pull(key=key, newValue="x") for key in ("a_key", "b_key", "c_key")]
    login(page, "ann", "ann-password-1")
    # when the reviewer ticks two with the keyboard and rejects them with one reason
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    assert page.locator("#bulk-count").inner_text() == "2 selected"
    page.fill("#bulk-reason", "Test data, not the user's.")
    page.click("#bulk-reject")
    # then both are rejected, each audited with the reviewer, and the third waits
    page.locator(".msg-success", has_text="2 KPR(s) rejected.").wait_for()
    statuses = [KnowledgePullRequest.objects.get(pk=p.pk).review_status for p in pulls]
    assert statuses == ["REJECTED", "REJECTED", "NEEDS_HUMAN_REVIEW"]
    assert AuditEvent.objects.filter(event_type="pull.reviewed", actor="human:ann").count() == 2
    assert page.locator("tr[data-href]").count() == 1


def test_another_namespaces_reviewer_sees_nothing(live_server, page, login, queued_pull):
    # given a KPR in demo, and bob who reviews only another namespace
    pull = queued_pull(key="allergy", newValue="shrimp")
    reviewer_create(username="bob", password="bob-password-1", namespaces=["elsewhere"])
    login(page, "bob", "bob-password-1")
    # then his queue is empty, and the KPR's page is not found
    assert page.locator("a[data-tab=needs] .count").inner_text() == "0"
    assert page.locator("tr[data-href]").count() == 0
    page.fill("#q", str(pull.id)[:8])
    expect(page).to_have_url(re.compile(r"q=[0-9a-f]{8}"))
    assert page.locator("tr[data-href]").count() == 0
    response = page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    assert response is not None and response.status == 404


def test_a_post_without_the_csrf_token_is_refused(live_server, page, login, reviewer, queued_pull):
    # given a logged-in reviewer's browser
    pull = queued_pull(key="allergy", newValue="shrimp")
    login(page, "ann", "ann-password-1")
    # when a request carries the session cookie but no CSRF token (as a forged form would)
    response = page.request.post(
        f"{live_server.url}/review/pulls/{pull.id}/decide",
        form={"verdict": "APPROVE", "reason": "forged"},
        headers={"Referer": f"{live_server.url}/review/"},
    )
    # then it is refused and nothing changes
    assert response.status == 403
    assert KnowledgePullRequest.objects.get(pk=pull.pk).review_status == "NEEDS_HUMAN_REVIEW"


def _propose(*, agent: str, subject: str, quote: str, **op: object) -> KnowledgePullRequest:
    """A KPR through the real rule checks, as an agent's submission is reviewed."""
    from django.db import transaction

    from memorypr.pulls.serializers import PullInSerializer
    from memorypr.pulls.services import pull_submit
    from reviewer.pipeline import pull_review
    from tests.factories import agent_with_token, pull_payload

    proposer, _ = agent_with_token(name=agent, namespaces=["demo"])
    evidence = {"rawMessageQuote": quote, "timestamp": 1732000000000}
    serializer = PullInSerializer(
        data=pull_payload(operation_payload(evidence=evidence, **op), subject=subject)
    )
    serializer.is_valid(raise_exception=True)
    with transaction.atomic():
        pull, _ = pull_submit(agent=proposer, namespace=proposer.namespaces.get(), spec=serializer.to_spec())
    pull_review(pull_id=str(pull.id))
    pull.refresh_from_db()
    return pull


def test_the_demo_reviewer_works_the_demo_queue(live_server, page, login):
    # given the demo, and agents proposing more for other users
    import io

    from django.core.management import call_command

    call_command("load_demo", stdout=io.StringIO())
    _propose(
        agent="travel-agent",
        subject="wei",
        quote="Next year, I will live in Tokyo.",
        key="home_city",
        newValue="Tokyo",
    )
    _propose(
        agent="travel-agent",
        subject="wei",
        quote="My friend is allergic to nuts.",
        key="allergy",
        newValue="nuts",
        importance=0.95,
    )
    _propose(agent="chat-assistant", subject="lena", quote="I'm vegan now.", key="diet", newValue="vegan",
             category="system_preference", confidence=0.6)  # fmt: skip
    held = KnowledgePullRequest.objects.filter(review_status="NEEDS_HUMAN_REVIEW").order_by("created_at")
    # when the demo's namespace reviewer logs in
    login(page, "reviewer", "review-demo-pass")
    # then the queue holds what waits for a person, oldest first, each with what it changes
    page.locator("tr[data-href]").first.wait_for()
    assert page.locator("a[data-tab=needs] .count").inner_text() == str(held.count())
    ids = [row.get_attribute("data-pull") for row in page.locator("tr[data-href]").all()]
    assert ids == [str(pull.id) for pull in held]
    assert page.locator("td.summary", has_text="allergy: peanut").count() == 1
    assert page.locator("select[name=namespace] option").all_inner_texts() == ["any namespace", "demo"]
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.screenshot(path=str(SCREENSHOTS / "queue.png"))
