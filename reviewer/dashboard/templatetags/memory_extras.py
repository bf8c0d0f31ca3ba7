from __future__ import annotations

from typing import Any

from django import template

from memorypr.common.canonical import canonical_json

register = template.Library()


@register.filter
def fact_value(value: Any) -> str:
    """A fact's JSON value as a reader wants it: text as text, anything else as JSON."""
    if value is None:
        return "—"
    return value if isinstance(value, str) else canonical_json(value)
