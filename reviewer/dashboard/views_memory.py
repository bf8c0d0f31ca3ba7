"""The memory browser: a reviewer's subjects, what memory holds for one (now or as of a
moment), and one fact's versions and edges."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memorypr.facts.models import EdgeType, FactStatus
from reviewer.dashboard import memory_selectors as selectors
from reviewer.dashboard.params import BadParameter, param_choice, param_datetime


def _user(request: HttpRequest) -> AbstractBaseUser:
    return request.user  # type: ignore[return-value]


def bad_request(request: HttpRequest, error: BadParameter) -> HttpResponse:
    return render(request, "reviewer/memory_bad_request.html", {"error": error}, status=400)


@login_required
@require_GET
def memory_subjects(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    return render(
        request,
        "reviewer/memory_subjects.html",
        {"query": query, "subjects": selectors.memory_subjects(user=_user(request), query=query)},
    )


@login_required
@require_GET
def memory_subject(request: HttpRequest, namespace: str, subject: str) -> HttpResponse:
    space = selectors.memory_namespace_get(user=_user(request), name=namespace)
    if space is None:
        raise Http404("No such namespace among yours.")
    categories = selectors.memory_categories(namespace=space, subject=subject)
    try:
        as_of = param_datetime(request, "asOf")
        category = param_choice(request, "category", categories, "")
        status = param_choice(request, "status", selectors.STATUS_FILTERS, "active")
    except BadParameter as exc:
        return bad_request(request, exc)
    rows = selectors.memory_facts(
        namespace=space, subject=subject, category=category, status=status, as_of=as_of
    )
    return render(
        request,
        "reviewer/memory_subject.html",
        {
            "namespace": space,
            "subject": subject,
            "rows": rows,
            "categories": categories,
            "category": category,
            "statuses": selectors.STATUS_FILTERS,
            "status": status,
            "as_of": as_of,
        },
    )


@login_required
@require_GET
def memory_fact(request: HttpRequest, namespace: str, fact_id: int) -> HttpResponse:
    space = selectors.memory_namespace_get(user=_user(request), name=namespace)
    fact = selectors.memory_fact_get(namespace=space, fact_id=fact_id) if space else None
    if fact is None:
        raise Http404("No such fact in your namespaces.")
    try:
        as_of = param_datetime(request, "asOf")
    except BadParameter as exc:
        return bad_request(request, exc)
    written_later = as_of is not None and fact.created_at > as_of
    if written_later:
        as_of = None  # this version did not exist yet: show it as it is now, and say so
    return render(
        request,
        "reviewer/memory_fact.html",
        {
            "namespace": space,
            "fact": fact,
            "as_of": as_of,
            "written_later": written_later,
            "timeline": selectors.memory_fact_timeline(fact=fact, as_of=as_of),
            "graph": selectors.memory_fact_graph(fact=fact, as_of=as_of),
            "edge_types": EdgeType.values,
            "statuses": FactStatus.values,
        },
    )
