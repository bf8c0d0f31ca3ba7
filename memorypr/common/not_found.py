"""A URL that matches no route answers 404 in the API's own error format under /api/.

Django's default 404 is an HTML page, which an API client cannot read; e.g. a session id
with a character the route does not allow never reaches a view.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found

from memorypr.common.request_guards import API_PREFIX


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path_info.startswith(API_PREFIX):
        return JsonResponse({"detail": "No such endpoint or resource."}, status=404)
    return page_not_found(request, exception)  # type: ignore[arg-type]
