"""A value as a jsonb column gives it back, computed before it is stored (the audit chain hashes it)."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from memorypr.common.canonical import canonical_json, json_roundtrip

VALUES = [
    {"n": 1e16, "m": 1.5e300, "k": 2.5e-3, "z": -0.0, "f": 10.0, "tiny": 1e-7, "third": 1 / 3},
    [0.1, 0.2, 123456789.123456789, -1e-300, 7, 2**70],
    {"text": "深圳 🙂", "nested": {"x": [1.0, -2.5e10]}},
]


@pytest.mark.django_db
@pytest.mark.parametrize("value", VALUES)
def test_the_roundtrip_is_what_the_jsonb_column_gives_back(value):
    # given a value an agent sent
    # when PostgreSQL stores it as jsonb and a reader loads it again
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb::text", [json.dumps(value)])
        (stored,) = cursor.fetchone()
    # then the value computed before storing canonicalises the same as the one read back
    assert canonical_json(json_roundtrip(value)) == canonical_json(json.loads(stored))


def test_negative_zero_and_integral_floats_come_back_as_jsonb_keeps_them():
    assert json_roundtrip({"z": -0.0, "big": 1e16, "frac": 2.5e-3}) == {
        "z": 0.0,
        "big": 10**16,
        "frac": 0.0025,
    }
