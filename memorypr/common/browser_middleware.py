"""The middleware of browser pages, passed by for the agent API.

Sessions, logins, flash messages, frame and content-security headers and htmx serve the
review dashboard and the admin. An agent's request to /api/v1/ carries a bearer
token, never a cookie, and answers JSON: each of these middleware would still build its
objects and headers for it, on every request. Each class here is Django's (or the package's)
own, so the admin's checks still find it, and hands an agent API request straight on.
"""

from __future__ import annotations

from typing import Any

from csp.middleware import CSPMiddleware as _CSPMiddleware
from django.contrib.auth.middleware import AuthenticationMiddleware as _AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as _MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as _SessionMiddleware
from django.middleware.clickjacking import XFrameOptionsMiddleware as _XFrameOptionsMiddleware
from django_htmx.middleware import HtmxMiddleware as _HtmxMiddleware

AGENT_API_PREFIX = "/api/v1/"


class _PassesAgentApi:
    get_response: Any

    def __call__(self, request: Any) -> Any:
        if request.path_info.startswith(AGENT_API_PREFIX):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class SessionMiddleware(_PassesAgentApi, _SessionMiddleware):
    pass


class AuthenticationMiddleware(_PassesAgentApi, _AuthenticationMiddleware):
    pass


class MessageMiddleware(_PassesAgentApi, _MessageMiddleware):
    pass


class XFrameOptionsMiddleware(_PassesAgentApi, _XFrameOptionsMiddleware):
    pass


class HtmxMiddleware(_PassesAgentApi, _HtmxMiddleware):
    pass


class CSPMiddleware(_PassesAgentApi, _CSPMiddleware):
    pass
