from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same value always hashes the same."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, cls=DjangoJSONEncoder)


def json_roundtrip(value: Any) -> Any:
    """What a JSON column will give back: datetimes and UUIDs as strings."""
    return json.loads(canonical_json(value))
