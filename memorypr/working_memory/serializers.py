from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memorypr.common.serializers import Serializer
from memorypr.pulls.serializers import StrictFieldsMixin
from memorypr.retrieval.serializers import RetrieveOutSerializer
from memorypr.working_memory.conf import max_turn_chars
from memorypr.working_memory.models import TurnRole


class TurnInSerializer(StrictFieldsMixin, Serializer):
    namespace = serializers.SlugField(max_length=100, required=False, allow_blank=True)
    role = serializers.ChoiceField(choices=TurnRole.choices)
    content = serializers.CharField(trim_whitespace=False, allow_blank=False)

    def validate_content(self, value: str) -> str:
        limit = max_turn_chars()
        if len(value) > limit:
            raise serializers.ValidationError(f"Content is {len(value)} characters; the limit is {limit}.")
        if "\x00" in value:
            raise serializers.ValidationError("NUL characters are not allowed.")
        return value


class TurnOutSerializer(Serializer):
    turnId = serializers.IntegerField(source="turn_id")
    role = serializers.CharField()
    content = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")


class SessionOutSerializer(Serializer):
    namespace = serializers.CharField(source="namespace.name")
    sessionId = serializers.CharField(source="session_id")
    turns = TurnOutSerializer(many=True, source="window.turns")
    totalTurns = serializers.IntegerField(source="total_turns")
    expired = serializers.BooleanField()
    expiresAt = serializers.DateTimeField(source="window.expires_at", allow_null=True)
    store = serializers.CharField(source="window.store")


class SessionQuerySerializer(Serializer):
    namespace = serializers.SlugField(max_length=100, required=False, allow_blank=True)


class ContextQuerySerializer(SessionQuerySerializer):
    query = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    subject = serializers.CharField(max_length=200, required=False, default="default")
    topK = serializers.IntegerField(min_value=1, max_value=50, required=False, default=5)


class ContextOutSerializer(Serializer):
    session = SessionOutSerializer()
    retrieval = RetrieveOutSerializer(allow_null=True)
    context = serializers.CharField()  # type: ignore[assignment]  # a field, popped by the metaclass

    def to_representation(self, instance: Any) -> Any:
        body = super().to_representation(instance)
        for item in (body.get("retrieval") or {}).get("results", []):
            item.pop("history", None)
        return body
