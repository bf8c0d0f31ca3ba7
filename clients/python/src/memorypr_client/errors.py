"""Errors: the API's own answer (`ApiError`, with its field paths) or no answer at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One thing wrong with a request: `field` is a path such as `operations[2].confidence`."""

    field: str
    message: str


class MemoryprError(Exception):
    """Anything this client raises."""


class TransportError(MemoryprError):
    """The server could not be reached, or did not answer in time, after the retries allowed."""


class ApiError(MemoryprError):
    """An error answer of the API: `{"detail": "...", "errors": [{"field", "message"}]}`."""

    def __init__(
        self,
        *,
        status: int,
        detail: str,
        errors: list[FieldError] | None = None,
        body: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status, detail)
        self.status = status
        self.detail = detail
        self.errors = list(errors or [])
        self.body = body
        self.retry_after = retry_after

    @classmethod
    def from_answer(cls, status: int, body: Any, *, retry_after: float | None = None) -> ApiError:
        detail = ""
        errors: list[FieldError] = []
        if isinstance(body, dict):
            detail = str(body.get("detail") or "")
            for item in body.get("errors") or []:
                if isinstance(item, dict):
                    errors.append(FieldError(str(item.get("field", "")), str(item.get("message", ""))))
        elif body:
            detail = str(body)[:500]
        kind = {
            400: ValidationError,
            401: AuthenticationError,
            403: PermissionDenied,
            404: NotFound,
            409: Conflict,
            429: RateLimited,
        }.get(status, ApiError)
        return kind(
            status=status,
            detail=detail or f"HTTP {status}",
            errors=errors,
            body=body,
            retry_after=retry_after,
        )

    @property
    def fields(self) -> list[str]:
        """The field paths the API named, e.g. `['operations[0].oldValue']`."""
        return [error.field for error in self.errors]

    def messages_for(self, field: str) -> list[str]:
        return [error.message for error in self.errors if error.field == field]

    def __str__(self) -> str:
        where = "; ".join(f"{error.field}: {error.message}" for error in self.errors)
        return f"HTTP {self.status}: {self.detail}" + (f" [{where}]" if where else "")


class ValidationError(ApiError):
    """400: the request was malformed; `errors` says where."""


class AuthenticationError(ApiError):
    """401: no token, an unknown or revoked token, or an inactive agent."""


class PermissionDenied(ApiError):
    """403: a namespace outside the agent's scope."""


class NotFound(ApiError):
    """404: no such KPR, fact or session in the agent's namespaces."""


class Conflict(ApiError):
    """409: e.g. an idempotency key already used with another payload, or a KPR that cannot be reverted."""


class RateLimited(ApiError):
    """429 after every retry the client was allowed: `retry_after` says when to come back."""
