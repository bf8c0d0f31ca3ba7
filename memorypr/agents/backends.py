"""Login attempts from the web are counted and locked out by django-axes (see settings)."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class LoginAttemptBackend(AxesStandaloneBackend):
    """Refuses a locked-out username + address before any password is checked.

    Every login form (the dashboard's and the admin's) passes its request. An authentication
    without one comes from code in this process (a script, the test client's `login`), which
    has no address to count, and is left to the next backend.
    """

    def authenticate(  # type: ignore[override]
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
