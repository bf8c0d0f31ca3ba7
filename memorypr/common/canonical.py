from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same value always hashes the same."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, cls=DjangoJSONEncoder)


def same_value(a: Any, b: Any) -> bool:
    """Two values are the same fact value when their canonical JSON is (the review's base rule
    and the merge's compare-and-swap compare this way)."""
    return canonical_json(a) == canonical_json(b)


def json_roundtrip(value: Any) -> Any:
    """What a JSON column will give back: datetimes and UUIDs as strings."""
    return json.loads(canonical_json(value))
