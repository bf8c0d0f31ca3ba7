from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connections, transaction

from memorypr.agents.services import reviewer_create
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.pulls.serializers import PullInSerializer
from memorypr.pulls.services import pull_record_review, pull_submit
from tests.factories import agent_with_token, operation_payload, pull_payload


@pytest.fixture
def queued_pull(db: None) -> Callable[..., KnowledgePullRequest]:
    """A KPR waiting for a human, as the review pipeline leaves it."""

    def make(
        *,
        namespace: str = "demo",
        subject: str = "user-1",
        operations: list[dict] | None = None,
        agent: str = "",
        session: str = "session-1",
        **op: object,
    ) -> KnowledgePullRequest:
        agent_obj, _ = agent_with_token(name=agent or f"proposer-{namespace}", namespaces=[namespace])
        body = pull_payload(
            *(operations or [operation_payload(**op)]), subject=subject, sourceSessionId=session
        )
        serializer = PullInSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            pull, _ = pull_submit(
                agent=agent_obj, namespace=agent_obj.namespaces.get(), spec=serializer.to_spec()
            )
            pull_record_review(
                pull=pull, reviewer_kind="rules", reviewer="rules", verdict="ESCALATE",
                status_after="NEEDS_HUMAN_REVIEW", reasons="protected key: allergy needs a person",
                findings=[{"operation": 0, "checks": [{"rule": "protected_key", "verdict": "escalate",
                                                        "reason": "allergy is protected"}]}],
            )  # fmt: skip
        return pull

    return make


@pytest.fixture
def reviewer(db: None):  # type: ignore[no-untyped-def]
    return reviewer_create(username="ann", password="ann-password-1", namespaces=["demo"])


@pytest.fixture
def reviewer_client(client, reviewer):  # type: ignore[no-untyped-def]
    client.login(username="ann", password="ann-password-1")
    return client


@pytest.fixture
def proposer_pull_reviewed(db: None) -> Callable[..., KnowledgePullRequest]:
    """A KPR in namespace demo, reviewed by the rules (held or not, as they decide)."""
    from reviewer.pipeline import pull_review

    def make(*, quote: str) -> KnowledgePullRequest:
        agent, _ = agent_with_token(name="proposer-demo", namespaces=["demo"])
        payload = pull_payload(operation_payload(action="CREATE", key="home_city", newValue="Shenzhen",
                                                 oldValue=None, evidence={"rawMessageQuote": quote, "timestamp": 0}))  # fmt: skip
        serializer = PullInSerializer(data=payload)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            pull, _ = pull_submit(agent=agent, namespace=agent.namespaces.get(), spec=serializer.to_spec())
        pull_review(pull_id=str(pull.id))
        return pull

    return make


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    """Debian's chromium driven by Playwright; each test opens its own contexts (one per person)."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls in the test are safe.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )  # fmt: skip
        yield browser
        browser.close()
        # While Playwright's event loop runs in this thread, Django keeps connections per context,
        # not per thread (asgiref's Local): what the test read or wrote meanwhile went through a
        # connection of its own, which nothing else closes.
        connections.close_all()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    yield context.new_page()
    context.close()


@pytest.fixture
def login(live_server):  # type: ignore[no-untyped-def]
    """Log a page in as a dashboard user, the way a person does."""

    def run(page, username: str, password: str) -> None:  # type: ignore[no-untyped-def]
        page.goto(f"{live_server.url}/review/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/review/")

    return run
