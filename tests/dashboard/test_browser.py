"""The dashboard in a real browser: Debian's chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from memorypr.pulls.models import KnowledgePullRequest

# Playwright's sync API runs an event loop in this thread; the ORM calls in the test are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def page():  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="memorypr-chromium-")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )  # fmt: skip
        context = browser.new_context()
        yield context.new_page()
        context.close()
        browser.close()
    shutil.rmtree(profile, ignore_errors=True)


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
