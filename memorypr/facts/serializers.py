"""Wire format of the fact store's read API: camelCase, like the KPR protocol."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rest_framework import serializers

from memorypr.common.serializers import Serializer
from memorypr.facts.models import FactEdge, FactStatus, FactVersion
from memorypr.facts.selectors import fact_status_at
from memorypr.pulls.models import Category

STATUS_ALL = "all"


MAX_KEY_FILTERS = 100


class FactListQuerySerializer(Serializer):
    namespace = serializers.SlugField(required=False, max_length=100)
    subject = serializers.CharField(required=False, max_length=200)
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    # Repeated parameters (`key=a&key=b&keyPrefix=pet.`): the facts with one of these keys or
    # whose key starts with one of the prefixes, instead of all of them.
    key = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, max_length=MAX_KEY_FILTERS
    )
    keyPrefix = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, max_length=MAX_KEY_FILTERS
    )
    status = serializers.ChoiceField(choices=[*FactStatus.values, STATUS_ALL], required=False)
    asOf = serializers.DateTimeField(required=False, default_timezone=UTC)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("asOf") and attrs.get("status") not in (None, FactStatus.ACTIVE):
            raise serializers.ValidationError({"status": ["With asOf the answer is what was active then."]})
        return attrs


class FactHistoryQuerySerializer(Serializer):
    namespace = serializers.SlugField(required=False, max_length=100)
    subject = serializers.CharField(required=False, max_length=200, default="default")
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    asOf = serializers.DateTimeField(required=False, default_timezone=UTC)


class FactOutSerializer(serializers.ModelSerializer):
    """A fact version. With asOf in the context, `status` is its status at that moment."""

    namespace = serializers.CharField(source="namespace.name")
    status = serializers.SerializerMethodField()
    validFrom = serializers.DateTimeField(source="valid_from", allow_null=True)
    validTo = serializers.DateTimeField(source="valid_to", allow_null=True)
    accessCount = serializers.IntegerField(source="access_count")
    lastAccessedAt = serializers.DateTimeField(source="last_accessed_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    retiredAt = serializers.DateTimeField(source="retired_at", allow_null=True)
    pull = serializers.UUIDField(source="pull_id", allow_null=True)
    retiredByPull = serializers.UUIDField(source="retired_by_pull_id", allow_null=True)
    action = serializers.SerializerMethodField()

    class Meta:
        model = FactVersion
        fields = [
            "id", "namespace", "subject", "category", "key", "value", "version", "status", "confidence",
            "importance", "validFrom", "validTo", "accessCount", "lastAccessedAt", "createdAt", "retiredAt",
            "pull", "retiredByPull", "action",
        ]  # fmt: skip

    def get_status(self, fact: FactVersion) -> str:
        at: datetime | None = self.context.get("as_of")
        return fact_status_at(fact=fact, at=at)

    def get_action(self, fact: FactVersion) -> str | None:
        return fact.operation.action if fact.operation is not None else None


def _edge(edge: FactEdge, *, other: FactVersion, at: datetime | None) -> dict[str, Any]:
    return {
        "type": edge.edge_type,
        "factId": other.pk,
        "category": other.category,
        "key": other.key,
        "version": other.version,
        "value": other.value,
        "status": fact_status_at(fact=other, at=at),
    }


class FactHistoryOutSerializer(FactOutSerializer):
    """A version in a key's history: its edges both ways, and the KPRs that wrote and retired it."""

    edges = serializers.SerializerMethodField()
    writtenBy = serializers.SerializerMethodField()

    class Meta(FactOutSerializer.Meta):
        fields = [*FactOutSerializer.Meta.fields, "edges", "writtenBy"]

    def get_edges(self, fact: FactVersion) -> dict[str, list[dict[str, Any]]]:
        at: datetime | None = self.context.get("as_of")
        return {
            "out": [_edge(e, other=e.target, at=at) for e in fact.out_edges.all()],
            "in": [_edge(e, other=e.source, at=at) for e in fact.in_edges.all()],
        }

    def get_writtenBy(self, fact: FactVersion) -> dict[str, Any] | None:
        pull = fact.pull
        if pull is None:
            return None
        return {
            "id": str(pull.pk),
            "proposedBy": pull.proposed_by,
            "agent": pull.agent.name,
            "sourceSessionId": pull.source_session_id,
            "reviewStatus": pull.review_status,
            "mergeStatus": pull.merge_status,
            "mergedAt": pull.merged_at.isoformat().replace("+00:00", "Z") if pull.merged_at else None,
            "reverts": str(pull.reverts_id) if pull.reverts_id else None,
        }


class FactHistoryResponseSerializer(Serializer):
    """The history answer: which key, as of when, and every version (oldest first)."""

    namespace = serializers.CharField()
    subject = serializers.CharField()
    key = serializers.CharField()
    asOf = serializers.DateTimeField(allow_null=True)
    versions = FactHistoryOutSerializer(many=True)
