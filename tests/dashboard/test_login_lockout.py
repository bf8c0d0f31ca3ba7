"""Failed logins to the dashboard lock out a username from one address (django-axes)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from memorypr.agents.services import reviewer_create

LOGIN = "/review/login/"


@pytest.fixture(autouse=True)
def clean_counters(settings):  # type: ignore[no-untyped-def]
    # The failure counters live in the cache, which outlives a test.
    settings.AXES_FAILURE_LIMIT = 3
    cache.clear()
    yield
    cache.clear()


def attempt(client, password: str, *, username: str = "ann", ip: str = "10.0.0.1"):  # type: ignore[no-untyped-def]
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


@pytest.mark.django_db
def test_a_correct_password_logs_in(client, reviewer):
    response = attempt(client, "ann-password-1")
    assert response.status_code == 302
    assert client.get("/review/").status_code == 200


@pytest.mark.django_db
def test_after_the_limit_even_the_right_password_is_refused(client, reviewer):
    # given three failed attempts from one address
    for _ in range(3):
        response = attempt(client, "wrong-password")
        assert response.status_code in (200, 429)
    # when the right password follows
    response = attempt(client, "ann-password-1")
    # then the login is refused and no session is opened
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert client.get("/review/").status_code == 302  # back to the login page


@pytest.mark.django_db
def test_below_the_limit_the_right_password_still_works(client, reviewer):
    for _ in range(2):
        assert attempt(client, "wrong-password").status_code == 200
    assert attempt(client, "ann-password-1").status_code == 302


@pytest.mark.django_db
def test_the_lockout_is_per_username_and_address(client, reviewer):
    # given ann locked out from one address
    reviewer_create(username="bob", password="bob-password-1", namespaces=["demo"])
    for _ in range(3):
        attempt(client, "wrong-password")
    assert attempt(client, "ann-password-1").status_code == 429
    # then ann from another address, and bob from the same one, still log in
    assert attempt(Client(), "ann-password-1", ip="10.0.0.2").status_code == 302
    assert attempt(Client(), "bob-password-1", username="bob").status_code == 302
