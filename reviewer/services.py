from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from memorypr.agents.models import Namespace, ReviewerMembership
from memorypr.audit.services import audit_record
from memorypr.common.locks import lock_review_policy
from memorypr.pulls.models import Category, KnowledgePullRequest
from reviewer.models import ReviewMode, ReviewPolicy, UploadedTranscript
from reviewer.pipeline import RereviewNotAllowed, ReviewOutcome, review_run
from reviewer.rules import MANDATORY, rule_names

__all__ = ["RereviewNotAllowed", "pull_rereview", "review_policy_set", "transcript_upload"]


def _actor_label(actor: AbstractBaseUser | None) -> str:
    return f"human:{actor.get_username()}" if actor is not None else "operator:manage.py"


def pull_rereview(*, pull_id: str, actor: AbstractBaseUser | None) -> ReviewOutcome:
    """Run the review of a KPR again (e.g. after the rules or the policy changed).

    The new verdict is recorded as new events after the old ones, which stay. `actor` is the
    human asking: a superuser or a reviewer of the KPR's namespace; None is an operator at
    the command line. A merged KPR is not reviewed again (RereviewNotAllowed).
    """
    pull = KnowledgePullRequest.objects.select_related("namespace").get(pk=pull_id)
    if actor is not None and not (
        getattr(actor, "is_superuser", False)
        or ReviewerMembership.objects.filter(user_id=actor.pk, namespace_id=pull.namespace_id).exists()
    ):
        raise PermissionDenied(f"{actor.get_username()} does not review namespace '{pull.namespace.name}'")
    outcome = review_run(pull_id=str(pull.id), rereview_by=_actor_label(actor))
    assert outcome is not None  # a re-review always decides
    return outcome


POLICY_FIELDS = (
    "mode",
    "human_categories",
    "allowed_categories",
    "key_patterns",
    "protected_key_patterns",
    "protected_importance",
    "confidence_reject_floor",
    "confidence_approve_bar",
    "agent_hourly_limit",
    "disabled_rules",
    "suggestion_rules",
)


def _policy_check(values: dict[str, Any]) -> None:
    errors: dict[str, str] = {}
    if values["mode"] not in ReviewMode.values:
        errors["mode"] = f"one of {ReviewMode.values}"
    for name in ("human_categories", "allowed_categories"):
        unknown = sorted(set(values[name]) - set(Category.values))
        if unknown:
            errors[name] = f"unknown categories {unknown}"
    for name in ("key_patterns", "protected_key_patterns"):
        for source in values[name]:
            try:
                re.compile(source)
            except re.error as exc:
                errors[name] = f"{source!r} is not a regular expression: {exc}"
    for name, cannot in (("disabled_rules", "be disabled"), ("suggestion_rules", "only suggest")):
        unknown_rules = sorted(set(values[name]) - set(rule_names()))
        if unknown_rules:
            errors[name] = f"unknown rules {unknown_rules}"
        mandatory = sorted(set(values[name]) & MANDATORY)
        if mandatory:
            errors[name] = f"{mandatory} cannot {cannot}"
    if not 0 <= values["confidence_reject_floor"] <= values["confidence_approve_bar"] <= 1:
        errors["confidence_reject_floor"] = "need 0 ≤ reject floor ≤ approve bar ≤ 1"
    if not 0 <= values["protected_importance"] <= 1:
        errors["protected_importance"] = "between 0 and 1"
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def review_policy_set(*, namespace: Namespace, actor: str, **changes: Any) -> ReviewPolicy:
    """Create or change a namespace's review policy; the audit event holds old and new values."""
    unknown = sorted(set(changes) - set(POLICY_FIELDS))
    if unknown:
        raise ValidationError({name: "not a policy field" for name in unknown})
    policy = lock_review_policy(namespace_id=namespace.pk) or ReviewPolicy(namespace=namespace)
    before = {name: getattr(policy, name) for name in POLICY_FIELDS}
    after = {**before, **changes}
    _policy_check(after)
    for name, value in after.items():
        setattr(policy, name, value)
    policy.updated_by = actor
    policy.save()
    audit_record(
        event_type="review_policy.changed",
        actor=actor,
        namespace=namespace.name,
        payload={"before": before, "after": after},
    )
    return policy


@transaction.atomic
def transcript_upload(*, namespace: Namespace, session_id: str, text: str, actor: str) -> UploadedTranscript:
    """Hand in a session transcript, against which evidence quotes are then checked."""
    if not session_id.strip() or not text.strip():
        raise ValidationError("a session id and a non-empty transcript are required")
    transcript = UploadedTranscript.objects.create(
        namespace=namespace, session_id=session_id, text=text, uploaded_by=actor
    )
    audit_record(
        event_type="transcript.uploaded",
        actor=actor,
        namespace=namespace.name,
        payload={"sessionId": session_id, "characters": len(text), "transcriptId": transcript.id},
    )
    return transcript
