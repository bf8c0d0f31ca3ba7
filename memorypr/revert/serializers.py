"""Wire format of the revert endpoint: camelCase, like the KPR protocol."""

from __future__ import annotations

from rest_framework import serializers

from memorypr.common.serializers import Serializer
from memorypr.pulls.serializers import StrictFieldsMixin


class RevertInSerializer(StrictFieldsMixin, Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")
    idempotencyKey = serializers.CharField(required=False, allow_null=True, max_length=200, default=None)
