"""The dashboard in a real browser: Debian's chromium driven by Playwright."""

from __future__ import annotations

import pytest

from memorypr.pulls.models import KnowledgePullRequest


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_reviewer_logs_in_opens_the_queue_and_approves_with_htmx(live_server, page, queued_pull, reviewer):
    # given a KPR waiting for a human
    pull = queued_pull(key="allergy", newValue="shrimp", importance=0.95)
    # when the reviewer logs in
    page.goto(f"{live_server.url}/review/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", "ann-password-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/review/")
    # then the queue shows it, and the keyboard opens it
    assert page.locator("a[data-tab=needs] .count").inner_text() == "1"
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/pulls/{pull.id}/")
    assert "allergy is protected" in page.content()
    # when approving without a reason the browser refuses; with one, htmx swaps the panel in place
    page.fill("#reason", "Confirmed with the user.")
    page.click("#verdict-approve")
    page.locator("#review-status", has_text="APPROVED").wait_for(timeout=10_000)
    assert page.url.endswith(f"/review/pulls/{pull.id}/")  # no full page load
    pull.refresh_from_db()
    assert pull.review_status == "APPROVED"
    assert pull.reviewer_feedback == "Confirmed with the user."
    assert KnowledgePullRequest.objects.filter(review_status="NEEDS_HUMAN_REVIEW").count() == 0
