"""Request latency per route, method and status, observed in every web process."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from prometheus_client import Histogram

REQUEST_LATENCY = Histogram(
    "memorypr_http_request_duration_seconds",
    "Time to answer an HTTP request, by route (the URL pattern, never the raw path), method and status.",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)

# Any other method a client invents is counted as "other": labels must stay few.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNRESOLVED = "<unresolved>"


def request_route(request: HttpRequest) -> str:
    """The URL pattern that served the request; ids and keys in the path never become labels."""
    match = getattr(request, "resolver_match", None)
    if match is None or not match.route:
        return UNRESOLVED  # 404s, static files served before routing, requests refused early
    return "/" + match.route


class RequestMetricsMiddleware:
    """First in MIDDLEWARE, so the time includes every other middleware and the 503s they answer."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in METHODS else "other"
        REQUEST_LATENCY.labels(
            route=request_route(request), method=method, status=str(response.status_code)
        ).observe(time.perf_counter() - start)
        return response
