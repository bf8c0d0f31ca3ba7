"""The dashboard sends a strict content security policy, and its templates need nothing more:
no inline script, no event-handler attribute, no style attribute."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

TEMPLATES = Path(settings.BASE_DIR) / "templates"
INLINE = {
    "an inline <script> block": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE),
    "an on* event handler": re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE),
    "a style attribute": re.compile(r"<[^>]+\sstyle\s*=", re.IGNORECASE),
    "a <style> block": re.compile(r"<style[\s>]", re.IGNORECASE),
    "a javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
    "an hx-on attribute (evaluated code)": re.compile(r"\shx-on[:-]", re.IGNORECASE),
}


def policy(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.strip() for part in header.split(";") if part.strip()}


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/review/", "/review/login/"])
def test_dashboard_pages_send_the_policy(reviewer_client, url):
    response = reviewer_client.get(url)
    assert response.status_code == 200
    directives = policy(response)
    assert directives["script-src"] == "script-src 'self'"
    assert directives["style-src"] == "style-src 'self'"
    assert directives["default-src"] == "default-src 'self'"
    assert directives["frame-ancestors"] == "frame-ancestors 'none'"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert "unsafe-eval" not in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_a_kpr_page_and_its_htmx_fragment_send_the_policy(reviewer_client, queued_pull):
    pull = queued_pull(key="allergy", newValue="shrimp", importance=0.95)
    page = reviewer_client.get(f"/review/pulls/{pull.id}/")
    fragment = reviewer_client.post(f"/review/pulls/{pull.id}/claim", {"claim": "1"}, HTTP_HX_REQUEST="true")
    assert policy(page)["script-src"] == "script-src 'self'"
    assert policy(fragment)["script-src"] == "script-src 'self'"


@pytest.mark.django_db
def test_the_admin_keeps_its_own_pages(client):
    # The admin's pages are Django's own; the policy is the dashboard's.
    assert "Content-Security-Policy" not in client.get("/admin/login/")


@pytest.mark.parametrize("template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: p.name)
def test_no_template_needs_more_than_the_policy_allows(template):
    text = template.read_text()
    found = [what for what, pattern in INLINE.items() if pattern.search(text)]
    assert found == [], f"{template.name} carries {', '.join(found)}: the content security policy blocks it"
