"""The audit trail inside the dashboard: a reviewer's namespaces' events, filtered, paged,
with the chain's state, and exported as CSV or JSON (streamed)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from memorypr.audit.models import AuditEvent
from reviewer.dashboard import audit_selectors as selectors
from reviewer.dashboard.params import BadParameter, param_datetime, param_page
from reviewer.dashboard.views_memory import bad_request

PAGE_SIZE = 50
FILTERS = ("type", "actor", "since", "until", "pull", "q")


def _user(request: HttpRequest) -> AbstractBaseUser:
    return request.user  # type: ignore[return-value]


def _events(request: HttpRequest, namespaces: list[str]) -> QuerySet[AuditEvent]:
    return selectors.audit_event_list(
        namespaces=namespaces,
        event_type=request.GET.get("type", "").strip(),
        actor=request.GET.get("actor", "").strip(),
        since=param_datetime(request, "since"),
        until=param_datetime(request, "until", end_of_day=True),
        pull=request.GET.get("pull", "").strip(),
        search=request.GET.get("q", "").strip(),
    )


@login_required
@require_GET
def audit_events(request: HttpRequest) -> HttpResponse:
    namespaces = selectors.audit_namespaces(user=_user(request))
    try:
        events = _events(request, namespaces)
        number = param_page(request)
    except BadParameter as exc:
        return bad_request(request, exc)
    page = Paginator(events, PAGE_SIZE).get_page(number)
    filters = {name: request.GET.get(name, "") for name in FILTERS}
    query = QueryDict(mutable=True)
    query.update({name: value for name, value in filters.items() if value})
    context: dict[str, Any] = {
        "page": page,
        "filters": filters,
        "filtered": any(filters.values()),
        "event_types": selectors.audit_event_types(namespaces=namespaces),
        "chain": selectors.audit_chain_status(namespaces=namespaces),
        "query": query.urlencode(),
        "namespaces": namespaces,
    }
    return render(request, "reviewer/audit_events.html", context)


@login_required
@require_GET
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("CSV or JSON only.")
    namespaces = selectors.audit_namespaces(user=_user(request))
    try:
        events = _events(request, namespaces).order_by("sequence")
    except BadParameter as exc:
        return bad_request(request, exc)
    if fmt == "csv":
        body, content_type = selectors.audit_export_csv(events), "text/csv; charset=utf-8"
    else:
        body, content_type = selectors.audit_export_json(events), "application/json"
    response = StreamingHttpResponse(body, content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
    return response
