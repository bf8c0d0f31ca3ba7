from __future__ import annotations

from rest_framework import serializers

from memorypr.common.serializers import Serializer
from memorypr.evolution.services.feedback import Outcome
from memorypr.pulls.serializers import StrictFieldsMixin


class FeedbackInSerializer(StrictFieldsMixin, Serializer):
    factIds = serializers.ListField(
        child=serializers.IntegerField(min_value=1), allow_empty=False, min_length=1, max_length=100
    )
    outcome = serializers.ChoiceField(choices=[(c, c) for c in Outcome.CHOICES])
    sessionId = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class FeedbackFactOutSerializer(Serializer):
    factId = serializers.IntegerField(source="fact_id")
    category = serializers.CharField()
    key = serializers.CharField()
    version = serializers.IntegerField()
    status = serializers.CharField()
    confidenceBefore = serializers.FloatField(source="confidence_before")
    confidence = serializers.FloatField()
    markedForForgetting = serializers.BooleanField(source="marked_for_forgetting")


class FeedbackOutSerializer(Serializer):
    outcome = serializers.CharField()
    facts = FeedbackFactOutSerializer(many=True)
