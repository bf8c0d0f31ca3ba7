"""The dashboard works in a real browser under its content security policy: logging in, the
keyboard, htmx's swaps, with not one violation reported."""

from __future__ import annotations

import pytest

# Runs before any page script (it is injected by the browser, not subject to the policy).
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_dashboard_works_under_its_policy(live_server, page, queued_pull, reviewer):  # noqa: F811
    # given a KPR waiting for a human, and a browser that records every policy violation
    pull = queued_pull(key="allergy", newValue="shrimp", importance=0.95)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.add_init_script(WATCH)
    seen: list[str] = []

    def violations() -> list[str]:
        seen.extend(page.evaluate("window.__violations"))
        return seen

    # when the reviewer logs in, and the response carries the policy
    response = page.goto(f"{live_server.url}/review/login/")
    assert response is not None and "script-src 'self'" in response.headers["content-security-policy"]
    page.fill("#id_username", "ann")
    page.fill("#id_password", "ann-password-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/review/")
    violations()
    # then the keyboard script (a static file) runs: ? opens the help, j and Enter open the KPR
    page.keyboard.press("?")
    assert "open" in (page.get_attribute("#help", "class") or "")
    page.keyboard.press("?")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/pulls/{pull.id}/")
    violations()
    # and htmx swaps the decision panel in place
    page.fill("#reason", "Confirmed with the user.")
    page.click("#verdict-approve")
    page.locator("#review-status", has_text="APPROVED").wait_for(timeout=10_000)
    assert page.url.endswith(f"/review/pulls/{pull.id}/")
    # and nothing on the way violated the policy
    assert violations() == []
    assert [text for text in console if "Content Security Policy" in text] == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_inline_script_is_blocked_and_reported(live_server, page, reviewer):  # noqa: F811
    # The watch above can see a violation: an injected inline script is refused and reported.
    page.add_init_script(WATCH)
    page.goto(f"{live_server.url}/review/login/")
    page.evaluate(
        """() => { const s = document.createElement("script"); s.textContent = "window.__ran = true";
                   document.head.appendChild(s); }"""
    )
    page.wait_for_function("window.__violations.length > 0", timeout=5_000)
    assert page.evaluate("window.__ran === undefined")
    assert page.evaluate("window.__violations")[0].startswith("script-src")
