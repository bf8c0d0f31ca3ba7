"""The base of the API's plain serializers: each request's fields copied cheaply.

DRF gives every serializer instance its own copy of the declared fields (they are bound to it:
`field_name`, `parent`), and makes it with `copy.deepcopy`, which builds each field again from
deep copies of its constructor's arguments: 11-16% of the time of a request to turns,
retrieve and submit under cProfile (23 fields copied per KPR submit). Shallow copies take
6-10% of those requests' Python function calls away.

A leaf field holds no per-request state besides what `bind()` sets on it, and its other
attributes (validators, error messages, choices) are only read once it is built: a shallow copy
gives the new instance its own attributes to bind, and shares the rest, read-only. A field
with fields inside it (a nested serializer, a `many=True` list, a ListField's or DictField's
`child`) is deep-copied as DRF does: its inner fields are bound to it, so they must be its own.
"""

from __future__ import annotations

import copy
from typing import Any

from rest_framework import serializers


def field_copy(field: serializers.Field) -> serializers.Field:
    """A copy of a declared field for one serializer instance to bind."""
    if isinstance(field, serializers.BaseSerializer) or hasattr(field, "child"):
        return copy.deepcopy(field)
    return copy.copy(field)


class Serializer(serializers.Serializer):
    def get_fields(self) -> dict[str, Any]:
        return {name: field_copy(field) for name, field in self._declared_fields.items()}
