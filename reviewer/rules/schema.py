"""Schema and key policy.

Protects against facts the namespace does not keep: categories it has not allowed, keys
outside its naming scheme, empty values (a DELETE removes a fact; an empty string does not),
derived conclusions that name no basis (they could never go stale), and time-bounded facts
that have already ended.
"""

from __future__ import annotations

import re

from django.utils import timezone

from memorypr.pulls.models import Action, Category
from reviewer.rules.base import OperationView, Outcome, PullView, escalate, passed, reject

NAME = "schema"


def _is_empty(value: object) -> bool:
    return (isinstance(value, str) and not value.strip()) or value in ([], {})


def check(pull: PullView, op: OperationView) -> Outcome:
    policy = pull.policy
    if policy.allowed_categories and op.category not in policy.allowed_categories:
        allowed = ", ".join(sorted(policy.allowed_categories))
        return reject(
            f"category '{op.category}' is not kept in namespace '{pull.namespace}' (allowed: {allowed})"
        )
    if policy.key_patterns and not any(re.fullmatch(p, op.key) for p in policy.key_patterns):
        return reject(
            f"key '{op.key}' matches none of the namespace's key patterns {list(policy.key_patterns)}"
        )
    if op.action in (Action.CREATE, Action.UPDATE) and _is_empty(op.new_value):
        return reject("newValue is empty; to remove a fact, send a DELETE")
    if op.action != Action.DELETE and op.valid_to is not None and op.valid_to <= timezone.now():
        return reject(f"validTo {op.valid_to.isoformat()} is already past: the fact would never be true")
    if op.category == Category.DERIVED and op.action != Action.DELETE and not op.derived_from:
        return escalate("a derived conclusion without derivedFrom cannot go stale when its basis changes")
    return passed("category and key follow the namespace's policy")
