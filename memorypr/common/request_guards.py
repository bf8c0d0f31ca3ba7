"""Refuse, before any view runs, request parts that PostgreSQL or psycopg could not store.

Django decodes query strings and form bodies leniently: invalid UTF-8 becomes U+FFFD and
`%00` becomes a NUL character, which PostgreSQL refuses in text (a DataError, hence a 500)
wherever a view hands a parameter to a query. One check here covers every endpoint, the API,
the review dashboard and the admin alike. JSON bodies are the parser's business
(memorypr.common.parsers).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

API_PREFIX = "/api/"
FORM_TYPES = ("application/x-www-form-urlencoded",)


def _field_name(raw: bytes) -> str:
    return raw.decode("utf-8", errors="backslashreplace").replace("\x00", "\\x00")


def _pairs_problems(encoded: str, *, plus_is_space: bool) -> list[dict[str, str]]:
    """Problems in `a=1&b=2` data, each with the parameter's name as its field."""
    errors: list[dict[str, str]] = []
    for pair in encoded.split("&"):
        if not pair:
            continue
        name_part, _, value_part = pair.partition("=")
        if plus_is_space:
            name_part, value_part = name_part.replace("+", " "), value_part.replace("+", " ")
        # WSGI hands the query string over as latin-1 text: back to bytes, then decoded strictly.
        name = unquote_to_bytes(name_part.encode("latin-1", errors="replace"))
        value = unquote_to_bytes(value_part.encode("latin-1", errors="replace"))
        field = _field_name(name)
        for raw, what in ((name, "parameter name"), (value, "value")):
            if b"\x00" in raw:
                errors.append({"field": field, "message": f"NUL characters are not allowed in the {what}."})
                break
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                errors.append({"field": field, "message": f"The {what} is not valid UTF-8."})
                break
    return errors


def request_problems(request: HttpRequest) -> tuple[str, list[dict[str, str]]]:
    """What makes the request unusable, as (where, field errors); empty when it is fine."""
    if "\x00" in request.path_info:
        return "URL path", [{"field": "path", "message": "NUL characters are not allowed in the URL path."}]
    errors = _pairs_problems(request.META.get("QUERY_STRING", ""), plus_is_space=True)
    if errors:
        return "query string", errors
    for name, value in request.COOKIES.items():
        if "\x00" in name or "\x00" in value:
            return "cookies", [{"field": "cookie", "message": "NUL characters are not allowed in cookies."}]
    # The API has no form parser (DRF answers 415); dashboard and admin forms are checked here.
    content_type = request.content_type or ""
    if (
        request.method == "POST"
        and content_type in FORM_TYPES
        and not request.path_info.startswith(API_PREFIX)
    ):
        body = request.body.decode("latin-1")
        errors = _pairs_problems(body, plus_is_space=True)
        if errors:
            return "form", errors
    elif request.method == "POST" and content_type == "multipart/form-data":
        for name, values in request.POST.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return "form", [{"field": name, "message": "NUL characters are not allowed."}]
    return "", []


def _refusal(request: HttpRequest, where: str, errors: list[dict[str, str]]) -> HttpResponse:
    first = errors[0]
    detail = f"{first['field']}: {first['message']}"
    if request.path_info.startswith(API_PREFIX):
        return JsonResponse({"detail": detail, "errors": errors}, status=400)
    return HttpResponseBadRequest(
        f"Bad request ({where}): {detail}\n", content_type="text/plain; charset=utf-8"
    )


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where, errors = request_problems(request)
        if errors:
            return _refusal(request, where, errors)
        return self.get_response(request)
