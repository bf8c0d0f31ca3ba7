from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from memorypr.monitoring.health import OK, health_check
from memorypr.monitoring.metrics import metrics_text

# Health changes on the scale of the heartbeat period (10 s): asking sooner tells nothing new.
HEALTH_RETRY_AFTER_SECONDS = 10


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when work flows (database, broker, a live worker, no stuck KPR); 503 with the problems otherwise."""
    report = health_check()
    response = JsonResponse(report.as_json(), status=200 if report.status == OK else 503)
    if report.status != OK:
        response["Retry-After"] = str(HEALTH_RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def _metrics_allowed(request: HttpRequest) -> bool:
    token: str = settings.MEMORYPR_METRICS_TOKEN
    if not token:
        return True
    given = request.headers.get("Authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text format; open unless MEMORYPR_METRICS_TOKEN asks for a bearer token."""
    if not _metrics_allowed(request):
        response = HttpResponse("a bearer token is required\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)
