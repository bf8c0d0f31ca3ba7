"""One error shape for the whole API.

`{"detail": "...", "errors": [{"field": "operations[2].confidence", "message": "..."}]}`:
DRF's nested error dicts are flattened into field paths a client can point at.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError, UnsupportedMediaType, ValidationError
from rest_framework.response import Response


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Conflict."
    default_code = "conflict"


class InvalidBody(ParseError):
    """A body the parser refuses, with the field paths at fault (`body` for the whole of it)."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        self.errors = errors
        first = errors[0]
        super().__init__(f"{first['field']}: {first['message']}")


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "payload_too_large"

    @classmethod
    def over_limit(cls, size: int | None = None) -> PayloadTooLarge:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if size is None:
            return cls(f"Request body is larger than the limit of {limit} bytes.")
        return cls(f"Request body is {size} bytes; the limit is {limit} bytes.")


def flatten_errors(detail: Any, path: str = "") -> list[dict[str, str]]:
    if isinstance(detail, dict):
        out: list[dict[str, str]] = []
        for key, value in detail.items():
            if key == "non_field_errors":
                child = path
            elif isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                child = f"{path}[{key}]"
            elif path:
                child = f"{path}.{key}"
            else:
                child = str(key)
            out.extend(flatten_errors(value, child))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [{"field": path or "body", "message": str(item)} for item in detail]
        out = []
        for index, item in enumerate(detail):
            if item in ({}, [], None):
                continue
            out.extend(flatten_errors(item, f"{path}[{index}]"))
        return out
    return [{"field": path or "body", "message": str(detail)}]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Imported here: rest_framework.views loads the parser classes, which import this module.
    from rest_framework.views import exception_handler

    if isinstance(exc, RequestDataTooBig):
        # Django's own answer would be an HTML 400 page; an API client is told the limit.
        exc = PayloadTooLarge.over_limit()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, InvalidBody):
        response.data = {"detail": str(exc.detail), "errors": exc.errors}
    elif isinstance(exc, (ParseError, PayloadTooLarge, UnsupportedMediaType)):
        response.data = {"detail": str(exc.detail), "errors": [{"field": "body", "message": str(exc.detail)}]}
    elif isinstance(exc, ValidationError):
        errors = flatten_errors(exc.detail)
        first = errors[0] if errors else {"field": "body", "message": "Invalid input."}
        response.data = {"detail": f"{first['field']}: {first['message']}", "errors": errors}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {
            "detail": str(response.data["detail"]),
            **{k: v for k, v in response.data.items() if k != "detail"},
        }
    return response
