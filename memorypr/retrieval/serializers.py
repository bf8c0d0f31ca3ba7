"""Wire format of retrieval and verify: camelCase like the KPR protocol."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memorypr.common.serializers import Serializer
from memorypr.pulls.models import Category
from memorypr.pulls.serializers import StrictFieldsMixin


@extend_schema_field({"type": "string", "enum": list(Category.values)})
class CategoryChoiceField(serializers.ChoiceField):
    """A KPR category; documented inline so the schema keeps one named Category enum."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=Category.choices, **kwargs)


class RetrieveInSerializer(StrictFieldsMixin, Serializer):
    namespace = serializers.SlugField(max_length=100, required=False, allow_blank=True)
    subject = serializers.CharField(max_length=200, required=False, default="default")
    query = serializers.CharField(max_length=2000)
    topK = serializers.IntegerField(min_value=1, max_value=50, required=False, default=5)
    categories = serializers.ListField(
        child=CategoryChoiceField(), required=False, max_length=10, default=list
    )
    asOf = serializers.DateTimeField(required=False, allow_null=True, default=None)
    includeHistory = serializers.BooleanField(required=False, default=False)

    def validate_query(self, value: str) -> str:
        if "\x00" in value:
            raise serializers.ValidationError("NUL characters are not allowed.")
        return value

    def validate_asOf(self, value: Any) -> Any:
        if value is not None and value > timezone.now():
            raise serializers.ValidationError("asOf must not be in the future.")
        return value


class FactBriefSerializer(Serializer):
    factId = serializers.IntegerField(source="pk")
    category = serializers.CharField()
    key = serializers.CharField()
    value = serializers.JSONField()
    version = serializers.IntegerField()
    status = serializers.CharField()
    confidence = serializers.FloatField()
    validFrom = serializers.DateTimeField(source="valid_from", allow_null=True)
    validTo = serializers.DateTimeField(source="valid_to", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    retiredAt = serializers.DateTimeField(source="retired_at", allow_null=True)


class VectorPartSerializer(Serializer):
    rank = serializers.IntegerField(source="vector_rank")
    similarity = serializers.FloatField()


class TextPartSerializer(Serializer):
    rank = serializers.IntegerField(source="text_rank")
    score = serializers.FloatField(source="text_score")


class ScoreSerializer(Serializer):
    final = serializers.FloatField()
    relevance = serializers.FloatField()
    recency = serializers.FloatField()
    decayExempt = serializers.BooleanField(source="decay_exempt")
    vector = serializers.SerializerMethodField()
    fullText = serializers.SerializerMethodField()
    exactRank = serializers.IntegerField(source="exact_rank", allow_null=True)
    rerank = serializers.FloatField(allow_null=True)

    def get_vector(self, obj: Any) -> dict[str, Any] | None:
        return VectorPartSerializer(obj).data if obj.vector_rank else None

    def get_fullText(self, obj: Any) -> dict[str, Any] | None:
        return TextPartSerializer(obj).data if obj.text_rank else None


class ResultSerializer(Serializer):
    factId = serializers.IntegerField(source="fact.pk")
    category = serializers.CharField(source="fact.category")
    key = serializers.CharField(source="fact.key")
    value = serializers.JSONField(source="fact.value")
    version = serializers.IntegerField(source="fact.version")
    confidence = serializers.FloatField(source="fact.confidence")
    importance = serializers.FloatField(source="fact.importance")
    validFrom = serializers.DateTimeField(source="fact.valid_from", allow_null=True)
    validTo = serializers.DateTimeField(source="fact.valid_to", allow_null=True)
    createdAt = serializers.DateTimeField(source="fact.created_at")
    accessCount = serializers.IntegerField(source="fact.access_count")
    lastAccessedAt = serializers.DateTimeField(source="fact.last_accessed_at", allow_null=True)
    score = ScoreSerializer(source="*")
    # The KPR that wrote this version: where the memory came from, and what a revert would undo.
    pull = serializers.UUIDField(source="fact.pull_id", allow_null=True)
    updates = FactBriefSerializer(allow_null=True)
    # Only with includeHistory: absent otherwise.
    history = FactBriefSerializer(many=True, required=False)


class RetrieveOutSerializer(Serializer):
    namespace = serializers.CharField(source="namespace.name")
    subject = serializers.CharField()
    query = serializers.CharField()
    asOf = serializers.DateTimeField(source="as_of", allow_null=True)
    results = ResultSerializer(many=True)
    context = serializers.CharField()  # type: ignore[assignment]  # a field, popped by the metaclass
    reformationNeeded = serializers.BooleanField(source="reformation_needed")
    candidateCount = serializers.IntegerField(source="candidate_count")
    belowConfidence = serializers.IntegerField(source="below_confidence")


class VerifyInSerializer(StrictFieldsMixin, Serializer):
    namespace = serializers.SlugField(max_length=100, required=False, allow_blank=True)
    subject = serializers.CharField(max_length=200, required=False, default="default")
    text = serializers.CharField(max_length=20000, trim_whitespace=False)

    def validate_text(self, value: str) -> str:
        if "\x00" in value:
            raise serializers.ValidationError("NUL characters are not allowed.")
        return value


class VerifyFlagSerializer(Serializer):
    sentence = serializers.CharField()
    index = serializers.IntegerField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    reason = serializers.CharField()
    matchedValue = serializers.CharField(source="matched_value", allow_null=True)
    similarity = serializers.FloatField(allow_null=True)
    bestActiveSimilarity = serializers.FloatField(source="best_active_similarity", allow_null=True)
    fact = FactBriefSerializer()
    replacement = FactBriefSerializer(allow_null=True)


class VerifyOutSerializer(Serializer):
    namespace = serializers.CharField(source="namespace.name")
    subject = serializers.CharField()
    ok = serializers.BooleanField()
    sentencesChecked = serializers.IntegerField(source="sentences_checked")
    flags = VerifyFlagSerializer(many=True)
