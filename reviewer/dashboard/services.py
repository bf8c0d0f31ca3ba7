from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from memorypr.agents.services import agent_system
from memorypr.audit.services import audit_record
from memorypr.common.locks import lock_pull
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.pulls.services import ReviewNotAllowed, pull_human_decide
from memorypr.revert.services import pull_revert
from reviewer.conf import conf
from reviewer.dashboard.models import ReviewClaim


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
