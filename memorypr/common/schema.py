"""The OpenAPI schema tells the whole truth about every answer, errors included.

Every API endpoint can answer errors that no view raises itself: the request guard and the
serializers (400), authentication (401), namespace scope (403), the throttle (429), a busy or
restarting backing server (503), and for a body the parser's limits (413, 415). They are
documented here once, for every operation, with the one error body the exception handler
(memorypr.common.errors) gives them all. A view documents only what is its own (201, 409).

A view may also say where its answers lead, as OpenAPI links (`openapi_links`, keyed by
"<METHOD> <status>"): the id in a KPR's answer names the KPR to read or revert. Clients and
stateful tests follow them.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from memorypr.common.serializers import Serializer

BODY_METHODS = ("POST", "PUT", "PATCH")


class FieldErrorSerializer(Serializer):
    field = serializers.CharField(help_text="Where the problem is: a field path, or `body` for all of it.")
    message = serializers.CharField()


class ErrorSerializer(Serializer):
    """Every error answer: a one-line `detail`, and for bad input the field paths at fault."""

    detail = serializers.CharField()
    errors = FieldErrorSerializer(many=True, required=False)  # type: ignore[assignment]  # a field, popped by the metaclass


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


COMMON_ERRORS: dict[str, str] = {
    "400": "Invalid input: the field paths at fault are in `errors`.",
    "401": "No valid agent token (`Authorization: Bearer <token>`).",
    "403": "The agent is not scoped to the namespace asked for.",
    "429": "Too many requests from this agent; retry after the time given in Retry-After.",
    "503": "A backing server is busy or restarting; nothing was changed; retry after Retry-After.",
}
BODY_ERRORS: dict[str, str] = {
    "413": "The body is larger than the server accepts.",
    "415": "The body is not `application/json`.",
}
NOT_FOUND = "No such resource in this agent's namespaces (or no such page)."


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema, with the error answers every API operation can give."""

    def _error_statuses(self) -> dict[str, str]:
        statuses = dict(COMMON_ERRORS)
        if self.method in BODY_METHODS:
            statuses.update(BODY_ERRORS)
        # A path parameter names something that may not exist; a paginated list has pages that may not.
        paginated = self.method == "GET" and getattr(self.view, "pagination_class", None) is not None
        if "{" in self.path or paginated:
            statuses["404"] = NOT_FOUND
        return statuses

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        if not self.path.startswith("/api/v1/"):
            return responses
        for code, description in sorted(self._error_statuses().items()):
            if code not in responses:
                responses[code] = self._get_response_for_code(_error(description), code, direction=direction)
        return responses

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        """A request serializer that refuses unknown fields (it declares `ignored_fields`, the
        server-owned fields it accepts and drops) says so: `additionalProperties: false`."""
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        ignored = getattr(serializer, "ignored_fields", None)
        if direction == "request" and ignored is not None:
            schema["additionalProperties"] = False
            if ignored:
                note = f"Also accepted, and ignored (the server sets them): {', '.join(sorted(ignored))}."
                schema["description"] = f"{schema.get('description', '')}\n\n{note}".strip()
        return schema

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation: dict[str, Any] | None = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        links: dict[str, dict[str, Any]] = getattr(self.view, "openapi_links", {})
        for key, by_name in links.items():
            method, _, code = key.partition(" ")
            if method == self.method and code in operation["responses"]:
                operation["responses"][code].setdefault("links", {}).update(by_name)
        return operation


def link(operation_id: str, description: str = "", **parameters: str) -> dict[str, Any]:
    """An OpenAPI link to `operation_id`, its parameters as runtime expressions."""
    found: dict[str, Any] = {"operationId": operation_id, "parameters": parameters}
    if description:
        found["description"] = description
    return found
