"""One KPR in real Chromium: the keys, claims, overturns, reverts, conflicts and comments."""

from __future__ import annotations

import pytest
from django.db import transaction

from memorypr.agents.services import reviewer_create
from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest, ReviewComment
from memorypr.pulls.services import pull_human_decide
from tests.dashboard.conftest import SCREENSHOTS
from tests.factories import operation_payload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TWO_OPERATIONS = [
    operation_payload(key="allergy", newValue="shrimp", importance=0.95,
                      evidence={"rawMessageQuote": "I'm allergic to shrimp.", "timestamp": 1732000000000}),
    operation_payload(key="diet", newValue="vegan",
                      evidence={"rawMessageQuote": "I'm vegan now.", "timestamp": 1732000000000}),
]  # fmt: skip


def _status(pull: KnowledgePullRequest) -> tuple[str, str]:
    pull.refresh_from_db()
    return pull.review_status, pull.merge_status


def _approve(pull: KnowledgePullRequest, *, by: str = "ann", verdict: str = "APPROVE") -> None:
    with transaction.atomic():
        pull_human_decide(pull_id=str(pull.id), reviewer=by, verdict=verdict, reason="Checked.")
    pull.refresh_from_db()


def test_keys_move_exclude_approve_and_the_panel_shows_the_merge(
    live_server, page, login, reviewer, queued_pull
):
    # given a KPR of two operations
    pull = queued_pull(operations=TWO_OPERATIONS)
    login(page, "ann", "ann-password-1")
    page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    page.screenshot(path=str(SCREENSHOTS / "pull.png"), full_page=True)
    # ? shows the keys
    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    page.keyboard.press("Escape")
    # when j moves the cursor to the second operation and x excludes that one
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.locator("section.op.selected").get_attribute("data-position") == "1"
    page.keyboard.press("x")
    assert page.locator("input[name=exclude][value='1']").is_checked()
    assert not page.locator("input[name=exclude][value='0']").is_checked()
    assert "excluding" in (page.locator("#op-1").get_attribute("class") or "")
    # and a, with a reason written, approves (it submits, it does not only focus)
    page.fill("#reason", "The allergy is confirmed; the diet is not.")
    page.locator("h1").click()
    page.keyboard.press("a")
    # then the panel shows the merge and the page marks what merged and what was excluded
    page.locator("#merge-status.MERGED").wait_for(timeout=15_000)
    assert _status(pull) == ("APPROVED", "MERGED")
    page.reload()
    assert page.locator("#op-0 [data-mark=merged]").inner_text() == "merged as v1"
    assert page.locator("#op-1 [data-mark=excluded]").inner_text() == "excluded by ann"
    assert page.locator("[data-mark=moved]").count() == 0
    assert page.locator("#op-0 h3 a.key").count() == 1 and page.locator("#op-1 h3 a.key").count() == 0


def test_r_opens_the_reason_box_without_typing_into_it_and_rejects(
    live_server, page, login, reviewer, queued_pull
):
    # given
    pull = queued_pull(key="allergy", newValue="shrimp")
    login(page, "ann", "ann-password-1")
    page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    # when r is pressed
    page.keyboard.press("r")
    # then the reason box has the focus and no "r" in it
    assert page.evaluate("document.activeElement.id") == "reason"
    assert page.input_value("#reason") == ""
    # and Ctrl+Enter sends the rejection it was opened for
    page.keyboard.type("The user was joking.")
    page.keyboard.press("Control+Enter")
    page.locator("#review-status", has_text="REJECTED").wait_for(timeout=10_000)
    assert _status(pull) == ("REJECTED", "UNMERGED")
    assert pull.reviewer_feedback == "The user was joking."


def test_c_comments_on_the_operation_under_the_cursor_and_the_agent_reads_it(
    live_server, page, login, reviewer, queued_pull
):
    # given
    pull = queued_pull(operations=TWO_OPERATIONS)
    login(page, "ann", "ann-password-1")
    page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    # when the cursor is on the second operation and c is pressed
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("c")
    # then its comment box opens with the focus, empty
    box = page.locator("#op-1 details.comment textarea")
    assert box.is_visible() and page.evaluate("document.activeElement.name") == "body"
    assert box.input_value() == ""
    box.fill("Vegan or vegetarian? Ask again.")
    page.locator("#op-1 details.comment button[type=submit]").click()
    page.locator("#op-1 .comments", has_text="Vegan or vegetarian? Ask again.").wait_for()
    comment = ReviewComment.objects.get(pull=pull)
    assert (comment.operation_position, comment.author) == (1, "human:ann")
    assert AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.commented", actor="human:ann").exists()


def test_a_second_reviewer_is_refused_a_claimed_kpr(live_server, browser, login, reviewer, queued_pull):
    # given ann claims a KPR
    pull = queued_pull(key="allergy", newValue="shrimp")
    reviewer_create(username="bob", password="bob-password-1", namespaces=["demo"])
    ann, bob = browser.new_page(), browser.new_page()
    login(ann, "ann", "ann-password-1")
    ann.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    ann.get_by_role("button", name="Claim").click()
    ann.get_by_role("button", name="Release").wait_for()
    # when bob tries to approve it
    login(bob, "bob", "bob-password-1")
    bob.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    assert "claimed by ann" in bob.locator("#decision-panel").inner_text()
    bob.fill("#reason", "Looks fine to me.")
    bob.click("#verdict-approve")
    # then he is told who holds it, and nothing is decided
    bob.locator("[role=alert]", has_text="claimed by ann").wait_for()
    assert _status(pull) == ("NEEDS_HUMAN_REVIEW", "UNMERGED")


def test_overturning_a_persons_rejection_asks_for_confirmation_and_a_reason(
    live_server, page, login, reviewer, queued_pull
):
    # given ann rejected a KPR
    pull = queued_pull(key="allergy", newValue="shrimp")
    _approve(pull, verdict="REJECT")
    login(page, "ann", "ann-password-1")
    page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    assert page.locator("#rereview").is_hidden()  # behind "Run the review again…"
    page.get_by_text("Run the review again…").click()
    page.fill("#rereview-reason", "The rules for allergies changed.")
    # when the confirmation is dismissed, nothing happens
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#rereview")
    page.wait_for_timeout(500)
    assert not AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.overturn_requested").exists()
    # when it is accepted, the review runs again and the trail keeps why
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#rereview")
    page.locator("#review-status", has_text="NEEDS_HUMAN_REVIEW").wait_for(timeout=15_000)
    event = AuditEvent.objects.get(pull_id=pull.id, event_type="pull.overturn_requested")
    assert event.payload["reason"] == "The rules for allergies changed." and event.actor == "human:ann"


def test_a_revert_links_both_ways_and_a_reverted_kpr_offers_no_second(
    live_server, page, login, reviewer, queued_pull
):
    # given a merged KPR
    pull = queued_pull(key="allergy", newValue="shrimp")
    _approve(pull)
    assert pull.merge_status == "MERGED"
    login(page, "ann", "ann-password-1")
    page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    # when the reviewer proposes its revert
    page.fill("#revert-reason", "Another user's allergy.")
    page.click("#revert")
    page.wait_for_url(lambda url: str(pull.id) not in url and "/review/pulls/" in url)
    # then the revert links back, and the original links to it with no revert form
    page.locator("#link-reverts").click()
    page.wait_for_url(f"**/review/pulls/{pull.id}/")
    assert page.locator(".link-reverted-by").count() == 1
    assert page.locator("#revert-form").count() == 0
    assert page.locator("#no-second-revert").is_visible()


def test_a_conflict_is_resolved_with_a_rebased_copy(live_server, page, login, reviewer, queued_pull):
    # given an approved KPR whose base moved before it merged
    _approve(queued_pull(key="home_city", newValue="Beijing"))
    pull = queued_pull(
        operations=[
            operation_payload(action="UPDATE", key="home_city", oldValue="Hangzhou", newValue="Shenzhen")
        ]
    )
    _approve(pull)
    assert pull.merge_status == "CONFLICT"
    login(page, "ann", "ann-password-1")
    page.goto(f"{live_server.url}/review/pulls/{pull.id}/")
    assert "home_city" in page.locator("#resolve").inner_text()
    # when the reviewer proposes a rebased copy
    page.click("#resolve-rebase")
    page.wait_for_url(lambda url: str(pull.id) not in url and "/review/pulls/" in url)
    # then the copy is a new KPR on the current value, linked to the conflict it resolves
    page.locator("#link-rebased-from").wait_for()
    copy = KnowledgePullRequest.objects.exclude(pk__in=[pull.pk]).latest("created_at")
    op = copy.operations.get()
    assert (op.old_value, op.new_value) == ("Beijing", "Shenzhen")
    assert page.url.endswith(f"/review/pulls/{copy.id}/")
