from __future__ import annotations

import json
from decimal import Decimal
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
    """What a jsonb column will give back: datetimes and UUIDs as strings, numbers as PostgreSQL
    keeps them (see `jsonb_number`)."""
    return json.loads(canonical_json(value), parse_float=jsonb_number)


def jsonb_number(text: str) -> int | float:
    """A JSON number with a fraction or an exponent, as a jsonb column gives it back.

    jsonb stores numbers as `numeric`, which keeps the digits after the point and has no
    negative zero: 1e16 comes back as 10000000000000000 (an integer to a JSON reader),
    1.5e-3 as 0.0015, -0.0 as 0.0. A hash over the value sent would not match the value read.
    """
    number = Decimal(text)
    exponent = number.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= 0:
        return int(number)
    return float(text) + 0.0  # + 0.0 turns -0.0 into 0.0
