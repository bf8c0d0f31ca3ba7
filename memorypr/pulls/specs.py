"""Validated input of a KPR, independent of HTTP: what the services accept."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class OperationSpec:
    action: str
    category: str
    key: str
    confidence: float
    old_value: Any = None
    new_value: Any = None
    importance: float | None = None
    evidence: dict[str, Any] | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    derived_from: list[str] = field(default_factory=list)
    relation: str = ""


@dataclass(frozen=True)
class PullSpec:
    subject: str
    operations: list[OperationSpec]
    proposed_by: str = ""
    source_session_id: str = ""
    idempotency_key: str | None = None


# The content fields of an operation, as the model, the spec and the review's view name them.
OPERATION_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(OperationSpec))
