"""Wire format of the KPR protocol: camelCase, exactly as agents send and receive it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memorypr.common.canonical import canonical_json
from memorypr.common.serializers import Serializer
from memorypr.common.text import KEY_PATTERN
from memorypr.pulls.models import (
    Action,
    Category,
    KnowledgePullRequest,
    Operation,
    Relation,
    ReviewComment,
    ReviewEvent,
    ReviewStatus,
)
from memorypr.pulls.specs import OperationSpec, PullSpec


class StrictFieldsMixin:
    """Unknown fields are an error, so a typo like `confidance` is never silently dropped."""

    ignored_fields: frozenset[str] = frozenset()

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            known = set(self.fields) | self.ignored_fields  # type: ignore[attr-defined]
            unknown = sorted(set(data) - known)
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)  # type: ignore[misc]


def _check_json_value(value: Any, *, limit: int) -> None:
    encoded = canonical_json(value).encode()
    if "\\u0000" in encoded.decode():
        raise serializers.ValidationError("NUL characters are not allowed.")
    if len(encoded) > limit:
        raise serializers.ValidationError(f"Value is {len(encoded)} bytes; the limit is {limit} bytes.")


@extend_schema_field(
    {
        "oneOf": [
            {"type": "number", "minimum": 0, "description": "Epoch milliseconds."},
            {"type": "string", "format": "date-time"},
        ],
        "nullable": True,
    }
)
class EvidenceTimestampField(serializers.Field):
    """The seed sends epoch milliseconds; ISO-8601 strings are accepted too. Stored as sent."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool):
            raise serializers.ValidationError("Expected epoch milliseconds or an ISO-8601 timestamp.")
        if isinstance(data, (int, float)):
            if data < 0:
                raise serializers.ValidationError("Timestamp must not be negative.")
            return data
        if isinstance(data, str):
            try:
                datetime.fromisoformat(data.replace("Z", "+00:00"))
            except ValueError as exc:
                raise serializers.ValidationError(
                    "Expected epoch milliseconds or an ISO-8601 timestamp."
                ) from exc
            return data
        raise serializers.ValidationError("Expected epoch milliseconds or an ISO-8601 timestamp.")

    def to_representation(self, value: Any) -> Any:
        return value


class EvidenceSerializer(StrictFieldsMixin, Serializer):
    rawMessageQuote = serializers.CharField(allow_blank=True, trim_whitespace=False)
    timestamp = EvidenceTimestampField(required=False, allow_null=True)

    def validate_rawMessageQuote(self, value: str) -> str:
        limit = settings.MEMORYPR_MAX_QUOTE_CHARS
        if len(value) > limit:
            raise serializers.ValidationError(f"Quote is {len(value)} characters; the limit is {limit}.")
        if "\x00" in value:
            raise serializers.ValidationError("NUL characters are not allowed.")
        return value


class OperationSerializer(StrictFieldsMixin, Serializer):
    action = serializers.ChoiceField(choices=Action.choices)
    category = serializers.ChoiceField(choices=Category.choices)
    key = serializers.RegexField(KEY_PATTERN, max_length=200)
    oldValue = serializers.JSONField(required=False, allow_null=True)
    newValue = serializers.JSONField(required=False, allow_null=True)
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0)
    importance = serializers.FloatField(min_value=0.0, max_value=1.0, required=False, allow_null=True)
    evidence = EvidenceSerializer(required=False, allow_null=True)
    validFrom = serializers.DateTimeField(required=False, allow_null=True)
    validTo = serializers.DateTimeField(required=False, allow_null=True)
    derivedFrom = serializers.ListField(
        child=serializers.RegexField(KEY_PATTERN, max_length=200), required=False, max_length=50
    )
    relation = serializers.ChoiceField(choices=Relation.choices, required=False, allow_blank=True)

    def validate_oldValue(self, value: Any) -> Any:
        _check_json_value(value, limit=settings.MEMORYPR_MAX_VALUE_BYTES)
        return value

    def validate_newValue(self, value: Any) -> Any:
        _check_json_value(value, limit=settings.MEMORYPR_MAX_VALUE_BYTES)
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        action = attrs["action"]
        old, new = attrs.get("oldValue"), attrs.get("newValue")
        errors: dict[str, list[str]] = {}
        if action == Action.CREATE and old is not None:
            errors["oldValue"] = ["A CREATE has no base: oldValue must be null or absent."]
        if action in (Action.CREATE, Action.UPDATE) and new is None:
            errors["newValue"] = [f"A {action} needs a newValue."]
        if action in (Action.UPDATE, Action.DELETE) and old is None:
            errors["oldValue"] = [f"An {action} needs the current value as its base (oldValue)."]
        if action == Action.DELETE and new is not None:
            errors["newValue"] = ["A DELETE has no newValue."]
        valid_from, valid_to = attrs.get("validFrom"), attrs.get("validTo")
        if valid_from and valid_to and valid_to <= valid_from:
            errors["validTo"] = ["validTo must be after validFrom."]
        relation = attrs.get("relation") or ""
        if relation and action != Action.UPDATE and relation in (Relation.UPDATES, Relation.QUALIFIES):
            errors["relation"] = [f"{relation} applies to an UPDATE."]
        if attrs["key"] in (attrs.get("derivedFrom") or []):
            errors["derivedFrom"] = ["A fact cannot be derived from itself."]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class PullInSerializer(StrictFieldsMixin, Serializer):
    # Fields the server owns; accepted (the seed's JSON carries them) and ignored.
    ignored_fields = frozenset(
        {"id", "createdAt", "reviewStatus", "reviewerFeedback", "mergeStatus", "mergedAt"}
    )

    namespace = serializers.SlugField(max_length=100, required=False, allow_blank=True)
    subject = serializers.CharField(max_length=200, required=False, default="default")
    sourceSessionId = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    proposedBy = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    idempotencyKey = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
    operations = OperationSerializer(many=True, allow_empty=False)

    def to_internal_value(self, data: Any) -> Any:
        operations = data.get("operations") if isinstance(data, dict) else None
        limit = settings.MEMORYPR_MAX_OPERATIONS
        if isinstance(operations, list) and len(operations) > limit:
            raise serializers.ValidationError(
                {"operations": [f"{len(operations)} operations; the limit is {limit} per KPR."]}
            )
        return super().to_internal_value(data)

    def validate_operations(self, operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen: dict[tuple[str, str], int] = {}
        errors: list[dict[str, Any]] = [{} for _ in operations]
        for index, op in enumerate(operations):
            ident = (op["category"], op["key"])
            if ident in seen:
                errors[index] = {
                    "key": [f"Same category and key as operations[{seen[ident]}]; one operation per key."]
                }
            seen.setdefault(ident, index)
        if any(errors):
            raise serializers.ValidationError(errors)
        return operations

    def to_spec(self) -> PullSpec:
        data = self.validated_data
        return PullSpec(
            subject=data["subject"],
            proposed_by=data["proposedBy"],
            source_session_id=data["sourceSessionId"],
            idempotency_key=data["idempotencyKey"],
            operations=[
                OperationSpec(
                    action=op["action"],
                    category=op["category"],
                    key=op["key"],
                    confidence=op["confidence"],
                    old_value=op.get("oldValue"),
                    new_value=op.get("newValue"),
                    importance=op.get("importance"),
                    evidence=dict(op["evidence"]) if op.get("evidence") else None,
                    valid_from=op.get("validFrom"),
                    valid_to=op.get("validTo"),
                    derived_from=list(op.get("derivedFrom") or []),
                    relation=op.get("relation") or "",
                )
                for op in data["operations"]
            ],
        )


class OperationOutSerializer(serializers.ModelSerializer):
    oldValue = serializers.JSONField(source="old_value")
    newValue = serializers.JSONField(source="new_value")
    validFrom = serializers.DateTimeField(source="valid_from", allow_null=True)
    validTo = serializers.DateTimeField(source="valid_to", allow_null=True)
    derivedFrom = serializers.ListField(source="derived_from", child=serializers.CharField())

    class Meta:
        model = Operation
        fields = [
            "action", "category", "key", "oldValue", "newValue", "confidence", "importance",
            "evidence", "validFrom", "validTo", "derivedFrom", "relation",
        ]  # fmt: skip


class ReviewEventOutSerializer(serializers.ModelSerializer):
    createdAt = serializers.DateTimeField(source="created_at")
    reviewerKind = serializers.CharField(source="reviewer_kind")
    statusAfter = serializers.CharField(source="status_after")
    excludedOperations = serializers.ListField(source="excluded_operations", child=serializers.IntegerField())
    latencyMs = serializers.IntegerField(source="latency_ms", allow_null=True)

    class Meta:
        model = ReviewEvent
        fields = [
            "createdAt", "reviewerKind", "reviewer", "verdict", "statusAfter", "findings", "reasons",
            "excludedOperations", "model", "latencyMs", "tokens",
        ]  # fmt: skip


class ReviewCommentOutSerializer(serializers.ModelSerializer):
    """A reviewer's comment: on one operation (its position) or, with `operation` null, the KPR."""

    operation = serializers.IntegerField(source="operation_position", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")

    class Meta:
        model = ReviewComment
        fields = ["operation", "author", "body", "createdAt"]


class PullOutSerializer(serializers.ModelSerializer):
    createdAt = serializers.DateTimeField(source="created_at")
    namespace = serializers.CharField(source="namespace.name")
    sourceSessionId = serializers.CharField(source="source_session_id")
    proposedBy = serializers.CharField(source="proposed_by")
    agent = serializers.CharField(source="agent.name")
    idempotencyKey = serializers.CharField(source="idempotency_key", allow_null=True)
    operations = OperationOutSerializer(many=True)
    reviewStatus = serializers.CharField(source="review_status")
    reviewerFeedback = serializers.CharField(source="reviewer_feedback")
    reviewerFeedbackDetail = ReviewCommentOutSerializer(
        many=True,
        source="comments",
        help_text="Reviewers' comments on single operations or the whole KPR, beside reviewerFeedback.",
    )
    reviewedAt = serializers.DateTimeField(source="reviewed_at", allow_null=True)
    mergeStatus = serializers.CharField(source="merge_status")
    mergeFeedback = serializers.CharField(source="merge_feedback")
    mergedAt = serializers.DateTimeField(source="merged_at", allow_null=True)
    reverts = serializers.UUIDField(source="reverts_id", allow_null=True)

    class Meta:
        model = KnowledgePullRequest
        fields = [
            "id", "createdAt", "namespace", "subject", "sourceSessionId", "proposedBy", "agent",
            "idempotencyKey", "operations", "reviewStatus", "reviewerFeedback", "reviewerFeedbackDetail", "reviewedAt",
            "mergeStatus", "mergeFeedback", "mergedAt", "reverts",
        ]  # fmt: skip


class PullDetailOutSerializer(PullOutSerializer):
    reviews = ReviewEventOutSerializer(many=True, source="review_events")

    class Meta(PullOutSerializer.Meta):
        fields = [*PullOutSerializer.Meta.fields, "reviews"]


class PullListQuerySerializer(Serializer):
    reviewStatus = serializers.ChoiceField(choices=ReviewStatus.choices, required=False)
    namespace = serializers.SlugField(required=False)
    subject = serializers.CharField(required=False, max_length=200)
    since = serializers.DateTimeField(required=False, default_timezone=UTC)
