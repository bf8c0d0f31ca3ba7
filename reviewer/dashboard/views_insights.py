"""Insights: how the queue and the decisions went, in the reviewer's namespaces, as charts
drawn on the server, each with its table."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviewer.dashboard.insights_charts import insights_page
from reviewer.dashboard.insights_selectors import RANGES
from reviewer.dashboard.params import BadParameter, param_choice
from reviewer.dashboard.selectors import reviewer_namespaces
from reviewer.dashboard.views_memory import bad_request


def _user(request: HttpRequest) -> AbstractBaseUser:
    return request.user  # type: ignore[return-value]


@login_required
@require_GET
def insights(request: HttpRequest) -> HttpResponse:
    try:
        name = param_choice(request, "range", list(RANGES), "7d")
    except BadParameter as exc:
        return bad_request(request, exc)
    spaces = list(reviewer_namespaces(user=_user(request)).values_list("pk", "name"))
    names = [label for _, label in spaces]
    page = insights_page(namespace_ids=[pk for pk, _ in spaces], namespace_names=names, range_name=name)
    context = {"page": page, "range": name, "ranges": list(RANGES), "namespaces": names}
    return render(request, "reviewer/insights.html", context)
