"""The rule checks, in the order they run and are shown. Adding a rule: one module, one line."""

from __future__ import annotations

from reviewer.rules import (
    base_value,
    confidence,
    delete_missing,
    duplicate,
    evidence,
    future_plan,
    hypothetical,
    injection,
    joke,
    protected,
    question,
    rate,
    reported_speech,
    schema,
    secrets,
    trust,
)
from reviewer.rules.base import Rule

RULES: list[Rule] = [
    schema,
    secrets,
    confidence,
    evidence,
    base_value,
    delete_missing,
    duplicate,
    protected,
    hypothetical,
    joke,
    reported_speech,
    question,
    future_plan,
    injection,
    trust,
    rate,
]

# Rules a namespace cannot switch off: they keep the store consistent and free of secrets.
MANDATORY = frozenset({schema.NAME, secrets.NAME, base_value.NAME, delete_missing.NAME, duplicate.NAME})


def rule_names() -> list[str]:
    return [rule.NAME for rule in RULES]
