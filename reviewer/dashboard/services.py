from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from memorypr.agents.services import agent_system
from memorypr.audit.services import audit_record
from memorypr.common.canonical import canonical_json
from memorypr.common.locks import lock_pull
from memorypr.facts.selectors import fact_get_active
from memorypr.pulls.models import Action, KnowledgePullRequest, MergeStatus, Operation, ReviewComment
from memorypr.pulls.services import ReviewNotAllowed, pull_comment_add, pull_human_decide, pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec
from memorypr.revert.services import RevertRefused, pull_revert
from reviewer.conf import conf
from reviewer.dashboard.models import ReviewClaim
from reviewer.dashboard.selectors import pull_human_decision, pull_links
from reviewer.pipeline import RereviewNotAllowed
from reviewer.services import pull_rereview


class ClaimHeld(Exception):
    """Another reviewer holds an unexpired claim on the KPR."""

    def __init__(self, claim: ReviewClaim) -> None:
        super().__init__(f"claimed by {claim.user.get_username()} until {claim.expires_at:%H:%M:%S} UTC")
        self.claim = claim


def _claim_minutes() -> int:
    return int(conf("MEMORYPR_CLAIM_MINUTES"))


def _audit(*, pull: KnowledgePullRequest, user: AbstractBaseUser, event_type: str, payload: dict) -> None:
    audit_record(
        event_type=event_type,
        actor=f"human:{user.get_username()}",
        namespace=pull.namespace.name,
        pull_id=pull.id,
        subject=pull.subject,
        payload=payload,
    )


@transaction.atomic
def claim_take(*, pull_id: str, user: AbstractBaseUser, take_over: bool = False) -> ReviewClaim:
    """Claim a KPR (or extend one's own claim: the heartbeat). An admin may take over."""
    pull = lock_pull(pull_id=pull_id)
    now = timezone.now()
    expires = now + timedelta(minutes=_claim_minutes())
    claim = ReviewClaim.objects.select_related("user").filter(pull=pull).first()
    if claim and claim.user_id != user.pk and claim.expires_at > now:
        if not (take_over and getattr(user, "is_superuser", False)):
            raise ClaimHeld(claim)
        _audit(
            pull=pull, user=user, event_type="claim.taken_over", payload={"from": claim.user.get_username()}
        )
    is_new = claim is None or claim.user_id != user.pk or claim.expires_at <= now
    claimed_at = now if claim is None or is_new else claim.claimed_at
    claim, _ = ReviewClaim.objects.update_or_create(
        pull=pull, defaults={"user_id": user.pk, "claimed_at": claimed_at, "expires_at": expires}
    )
    if is_new:
        _audit(pull=pull, user=user, event_type="claim.taken", payload={"expiresAt": expires.isoformat()})
    return claim


@transaction.atomic
def claim_release(*, pull_id: str, user: AbstractBaseUser) -> None:
    pull = lock_pull(pull_id=pull_id)
    deleted, _ = ReviewClaim.objects.filter(pull=pull, user_id=user.pk).delete()
    if deleted:
        _audit(pull=pull, user=user, event_type="claim.released", payload={})


@transaction.atomic
def pull_decide_by_reviewer(
    *, pull_id: str, user: AbstractBaseUser, verdict: str, reason: str, excluded_operations: list[int]
) -> KnowledgePullRequest:
    """A reviewer's decision from the dashboard: respects claims, then the shared decision service.

    The claim is read under the KPR's row lock, which claim_take holds while it writes one, so
    a claim taken by someone else a moment earlier is seen.
    """
    lock_pull(pull_id=pull_id)
    now = timezone.now()
    claim = ReviewClaim.objects.select_related("user").filter(pull_id=uuid.UUID(pull_id)).first()
    if claim and claim.user_id != user.pk and claim.expires_at > now:
        raise ClaimHeld(claim)
    pull = pull_human_decide(
        pull_id=pull_id,
        reviewer=user.get_username(),
        verdict=verdict,
        reason=reason,
        excluded_operations=excluded_operations,
    )
    ReviewClaim.objects.filter(pull_id=pull.pk).delete()
    return pull


@dataclass
class BulkOutcome:
    decided: list[KnowledgePullRequest] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (KPR id, why)


def pulls_decide_in_bulk(
    *, pull_ids: list[str], user: AbstractBaseUser, verdict: str, reason: str
) -> BulkOutcome:
    """One verdict and one reason for several queued KPRs, each through the same decision as one.

    The reason and the verdict are checked before anything is written. Each KPR is then decided
    in its own transaction, so one claimed by someone else or decided meanwhile is reported and
    skipped, and the others still go through; each decision is audited with the user.
    """
    if verdict not in ("APPROVE", "REJECT"):
        raise ValueError(f"unknown verdict {verdict!r}")
    if not reason.strip():
        raise ValueError("a reason is required")
    if not pull_ids:
        raise ValueError("select at least one KPR")
    outcome = BulkOutcome()
    for pull_id in dict.fromkeys(pull_ids):
        try:
            outcome.decided.append(
                pull_decide_by_reviewer(
                    pull_id=pull_id, user=user, verdict=verdict, reason=reason.strip(), excluded_operations=[]
                )
            )
        except (ClaimHeld, ReviewNotAllowed) as exc:
            outcome.skipped.append((pull_id, str(exc)))
    return outcome


def pull_revert_by_reviewer(*, pull_id: str, user: AbstractBaseUser, reason: str) -> KnowledgePullRequest:
    """A reviewer asks to undo a merged KPR: the revert is a new KPR, reviewed like any other."""
    if not reason.strip():
        raise ValueError("a reason is required")
    with transaction.atomic():
        pull = KnowledgePullRequest.objects.select_related("namespace").get(pk=uuid.UUID(pull_id))
        if pull_links(pull=pull).reverted:
            raise RevertRefused(f"KPR {pull.pk} is already reverted (or a revert is under review)")
        revert, _ = pull_revert(
            pull=pull,
            agent=agent_system(namespace=pull.namespace),
            reason=reason.strip(),
            proposed_by=f"human:{user.get_username()}",
        )
        _audit(
            pull=pull,
            user=user,
            event_type="pull.revert_requested",
            payload={"revert": str(revert.pk), "reason": reason},
        )
    return revert


def pull_comment_by_reviewer(
    *, pull_id: str, user: AbstractBaseUser, body: str, operation_position: int | None = None
) -> ReviewComment:
    """A comment from the dashboard: the same service as every comment, audited with the user."""
    return pull_comment_add(
        pull_id=pull_id,
        author=f"human:{user.get_username()}",
        body=body,
        operation_position=operation_position,
    )


def pull_rereview_by_reviewer(*, pull_id: str, user: AbstractBaseUser, reason: str) -> None:
    """Run the review again. Overturning a person's decision takes a reason, kept in the trail.

    The reason is audited under the KPR's lock, after checking that it can still be reviewed
    again, and before the review runs (which may call the LLM: not inside a transaction).
    """
    pull = KnowledgePullRequest.objects.prefetch_related("review_events").get(pk=uuid.UUID(pull_id))
    person = pull_human_decision(pull=pull)
    if person is not None:
        if not reason.strip():
            raise ValueError(f"{person.reviewer} decided this KPR: overturning it needs a reason")
        with transaction.atomic():
            locked = lock_pull(pull_id=pull_id)
            if locked.merge_status == MergeStatus.MERGED:
                raise RereviewNotAllowed(f"KPR {pull_id} is merged; revert it with a new KPR instead")
            _audit(
                pull=locked,
                user=user,
                event_type="pull.overturn_requested",
                payload={"reason": reason.strip(), "decision": person.verdict, "decidedBy": person.reviewer},
            )
    pull_rereview(pull_id=pull_id, actor=user)


RESOLVE_MODES = ("rebase", "rest")


def pull_resolve_conflict(*, pull_id: str, user: AbstractBaseUser, mode: str) -> KnowledgePullRequest:
    """Resolve a CONFLICT with a new KPR, reviewed like any other.

    "rebase": every operation again, its base (oldValue) set to the value in the store now,
    with the same evidence and session. "rest": only the operations whose base still holds,
    unchanged (the conflicting ones are left out). The original stays as it is: KPRs are immutable.
    """
    if mode not in RESOLVE_MODES:
        raise ValueError(f"unknown resolution {mode!r}; one of {', '.join(RESOLVE_MODES)}")
    pull = KnowledgePullRequest.objects.select_related("namespace", "agent").get(pk=uuid.UUID(pull_id))
    if pull.merge_status != MergeStatus.CONFLICT:
        raise ResolveRefused(f"KPR {pull.pk} is {pull.merge_status}; only a CONFLICT is resolved")
    operations = []
    for op in pull.operations.order_by("position"):
        current = fact_get_active(
            namespace_id=pull.namespace_id, subject=pull.subject, category=op.category, key=op.key
        )
        current_value = current.value if current else None
        conflicting = canonical_json(current_value) != canonical_json(op.old_value)
        if mode == "rest":
            if not conflicting:
                operations.append(_spec_of(op, action=op.action, old_value=op.old_value))
            continue
        # Rebased on what the store holds now: a CREATE over a value is an UPDATE of it, an
        # UPDATE of a key that is gone creates it again, and deleting what is gone is nothing.
        if current is None and op.action == Action.DELETE:
            continue
        action = (
            Action.CREATE if current is None else (Action.UPDATE if op.action == Action.CREATE else op.action)
        )
        operations.append(_spec_of(op, action=action, old_value=current_value))
    if not operations:
        raise ResolveRefused("every operation conflicts: propose a rebased copy instead")
    if mode == "rest" and len(operations) == pull.operations.count():
        raise ResolveRefused("no operation conflicts any more: run the review again instead")
    spec = PullSpec(
        subject=pull.subject,
        operations=operations,
        proposed_by=f"human:{user.get_username()}",
        source_session_id=pull.source_session_id,
        # the same resolution of the same state is the same KPR: a second click proposes nothing new
        idempotency_key=f"resolve:{pull.pk}:{mode}:{_digest(operations)}",
    )
    with transaction.atomic():
        copy, created = pull_submit(agent=pull.agent, namespace=pull.namespace, spec=spec)
        if created:
            _audit(
                pull=pull,
                user=user,
                event_type="pull.rebase_proposed",
                payload={"origin": str(pull.pk), "copy": str(copy.pk), "mode": mode},
            )
    return copy


class ResolveRefused(Exception):
    """The KPR is not a conflict, or the chosen resolution would propose nothing useful."""


def _spec_of(op: Operation, *, action: str, old_value: Any) -> OperationSpec:
    return OperationSpec(
        action=action,
        category=op.category,
        key=op.key,
        confidence=op.confidence,
        old_value=old_value,
        new_value=op.new_value,
        importance=op.importance,
        evidence=op.evidence,
        valid_from=op.valid_from,
        valid_to=op.valid_to,
        derived_from=list(op.derived_from or []),
        relation=op.relation,
    )


def _digest(operations: list[OperationSpec]) -> str:
    return hashlib.sha256(canonical_json([op.old_value for op in operations]).encode()).hexdigest()[:16]
