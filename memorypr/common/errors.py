"""One error shape for the whole API.

`{"detail": "...", "errors": [{"field": "operations[2].confidence", "message": "..."}]}`:
DRF's nested error dicts are flattened into field paths a client can point at.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Conflict."
    default_code = "conflict"


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
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        errors = flatten_errors(exc.detail)
        first = errors[0] if errors else {"field": "body", "message": "Invalid input."}
        response.data = {"detail": f"{first['field']}: {first['message']}", "errors": errors}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {
            "detail": str(response.data["detail"]),
            **{k: v for k, v in response.data.items() if k != "detail"},
        }
    return response
