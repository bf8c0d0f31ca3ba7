"""What the review dashboard reads: one KPR side by side with the store, its timeline.

The queue's reads are in queue_selectors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from memorypr.agents.models import Namespace
from memorypr.audit.models import AuditEvent
from memorypr.common.canonical import canonical_json
from memorypr.facts.models import FactVersion
from memorypr.facts.selectors import fact_get_active, fact_history
from memorypr.pulls.models import (
    KnowledgePullRequest,
    MergeStatus,
    Operation,
    ReviewComment,
    ReviewEvent,
    ReviewStatus,
)
from reviewer.rules.speech import cue_span


def reviewer_namespaces(*, user: AbstractBaseUser) -> QuerySet[Namespace]:
    if getattr(user, "is_superuser", False):
        return Namespace.objects.all()
    return Namespace.objects.filter(reviewers__user_id=user.pk)


def _visible(*, user: AbstractBaseUser) -> QuerySet[KnowledgePullRequest]:
    return KnowledgePullRequest.objects.filter(namespace__in=reviewer_namespaces(user=user))


@dataclass
class OperationPanel:
    operation: Operation
    current_value: Any
    current_version: int | None
    changed_since_proposed: bool
    findings: list[dict[str, Any]] = field(default_factory=list)
    llm: dict[str, Any] | None = None
    decision: dict[str, Any] | None = None
    excluded: bool = False  # a person approved the KPR without this operation
    merged_version: int | None = None  # the fact version the merge wrote from it
    has_history: bool = False  # the key has versions to show (a never-merged key has none)
    comments: list[ReviewComment] = field(default_factory=list)

    @property
    def aligned(self) -> dict[str, Any] | None:
        """The clause of the evidence that carries the fact, and the cue a rule held it for."""
        with_clause = [f for f in self.findings if f.get("clause")]
        held = [f for f in with_clause if f.get("cue") and f.get("verdict") != "pass"]
        return (held or with_clause)[0] if with_clause else None

    @property
    def evidence_parts(self) -> list[tuple[str, str]]:
        """The evidence quote in pieces (text, kind): kind "clause" for the aligned clause,
        "cue" for the words a rule matched in it, "" for the rest."""
        quote = (self.operation.evidence or {}).get("rawMessageQuote")
        if not isinstance(quote, str):
            return []
        return evidence_highlight(quote=quote, aligned=self.aligned)

    @property
    def old_json(self) -> str:
        return _pretty(self.operation.old_value)

    @property
    def new_json(self) -> str:
        return _pretty(self.operation.new_value)

    @property
    def current_json(self) -> str:
        return _pretty(self.current_value)


def evidence_highlight(*, quote: str, aligned: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The quote in runs of (text, kind): "clause" for the aligned clause, "cue" for the words a
    rule matched (in the clause, or in the words before or after it that govern it), "" else."""
    kinds = [""] * len(quote)
    clause = str(aligned.get("clause") or "") if aligned else ""
    start = quote.find(clause) if clause else -1
    if start >= 0:
        kinds[start : start + len(clause)] = ["clause"] * len(clause)
    cue = str(aligned.get("cue") or "") if aligned else ""
    span = None
    if cue and start >= 0:
        inside = cue_span(clause, cue)
        span = (start + inside[0], start + inside[1]) if inside else None
    if cue and span is None:
        span = cue_span(quote, cue)
    if span is not None:
        kinds[span[0] : span[1]] = ["cue"] * (span[1] - span[0])
    parts: list[tuple[str, str]] = []
    for char, kind in zip(quote, kinds, strict=True):
        if parts and parts[-1][1] == kind:
            parts[-1] = (parts[-1][0] + char, kind)
        else:
            parts.append((char, kind))
    return parts


def _pretty(value: Any) -> str:
    return "—" if value is None else canonical_json(value)


def pull_for_reviewer(*, user: AbstractBaseUser, pull_id: str) -> KnowledgePullRequest | None:
    return (
        _visible(user=user)
        .select_related("namespace", "agent", "reverts")
        .prefetch_related("operations", "review_events")
        .filter(pk=pull_id)
        .first()
    )


def pull_operation_panels(*, pull: KnowledgePullRequest) -> list[OperationPanel]:
    """Each operation beside the value in the store now (re-read, flagged when it moved)."""
    events = list(pull.review_events.all())
    rules = next((e for e in reversed(events) if e.reviewer_kind == "rules"), None)
    llm = next((e for e in reversed(events) if e.reviewer_kind == "llm"), None)
    final = next(
        (e for e in reversed(events) if e.reviewer_kind == "system" and e.reviewer == "policy"), None
    )
    by_position = lambda event: {  # noqa: E731 - a local index, read three times
        f.get("operation"): f for f in (event.findings if event else []) if isinstance(f, dict)
    }
    rules_by, llm_by, final_by = by_position(rules), by_position(llm), by_position(final)
    person = pull_human_decision(pull=pull)
    excluded = set(person.excluded_operations or []) if person and person.verdict == "APPROVE" else set()
    written = {
        fact.operation_id: fact.version
        for fact in FactVersion.objects.filter(pull=pull, operation__isnull=False)
    }
    with_history = set(
        FactVersion.objects.filter(namespace_id=pull.namespace_id, subject=pull.subject).values_list(
            "key", flat=True
        )
    )
    comments = pull_comments(pull=pull)
    # Once merged, the store holds the KPR's own writes: comparing them with its base says nothing.
    compare = pull.merge_status != MergeStatus.MERGED
    panels = []
    for op in pull.operations.all():
        current = fact_get_active(
            namespace_id=pull.namespace_id, subject=pull.subject, category=op.category, key=op.key
        )
        current_value = current.value if current else None
        panels.append(
            OperationPanel(
                operation=op,
                current_value=current_value,
                current_version=current.version if current else None,
                changed_since_proposed=compare
                and canonical_json(current_value) != canonical_json(op.old_value),
                findings=list(rules_by.get(op.position, {}).get("checks", [])),
                llm=llm_by.get(op.position),
                decision=final_by.get(op.position),
                excluded=op.position in excluded,
                merged_version=written.get(op.pk),
                has_history=op.key in with_history,
                comments=comments.get(op.position, []),
            )
        )
    return panels


def pull_human_decision(*, pull: KnowledgePullRequest) -> ReviewEvent | None:
    """The latest decision a person made on the KPR, if any (a re-review after it overturns it)."""
    events = list(pull.review_events.all())
    last = events[-1] if events else None
    return last if last is not None and last.reviewer_kind == ReviewEvent.ReviewerKind.HUMAN else None


def pull_comments(*, pull: KnowledgePullRequest) -> dict[int | None, list[ReviewComment]]:
    """Comments by operation position; None holds those on the KPR as a whole."""
    by_position: dict[int | None, list[ReviewComment]] = {}
    for comment in ReviewComment.objects.filter(pull=pull).order_by("created_at", "id"):
        by_position.setdefault(comment.operation_position, []).append(comment)
    return by_position


@dataclass
class PullLinks:
    """KPRs that stand in a relation to this one: what it reverts, what reverts it, rebased copies."""

    reverts: KnowledgePullRequest | None
    reverted_by: list[KnowledgePullRequest]
    rebased_from: str
    rebased_to: list[str]

    @property
    def reverted(self) -> bool:
        """A revert is on its way or done: a second one is not offered."""
        return any(r.review_status != ReviewStatus.REJECTED for r in self.reverted_by)


def pull_links(*, pull: KnowledgePullRequest) -> PullLinks:
    rebases = AuditEvent.objects.filter(event_type="pull.rebase_proposed")
    return PullLinks(
        reverts=pull.reverts,
        reverted_by=list(KnowledgePullRequest.objects.filter(reverts=pull).order_by("created_at")),
        rebased_from=next(
            iter(rebases.filter(payload__copy=str(pull.pk)).values_list("payload__origin", flat=True)), ""
        ),
        rebased_to=list(rebases.filter(pull_id=pull.pk).values_list("payload__copy", flat=True)),
    )


def pull_timeline(*, pull: KnowledgePullRequest) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(pull_id=pull.id).order_by("sequence"))


def transcript_with_quote(*, pull: KnowledgePullRequest, quote: str) -> tuple[str, str, str] | None:
    """The session transcript split around the evidence quote (before, quote, after), if known."""
    from reviewer.selectors import transcript_get

    transcript = transcript_get(namespace_id=pull.namespace_id, session_id=pull.source_session_id)
    if not transcript:
        return None
    index = transcript.find(quote) if quote else -1
    if index < 0:
        return transcript, "", ""
    return transcript[:index], quote, transcript[index + len(quote) :]


def fact_versions(*, namespace_id: int, subject: str, key: str) -> list[FactVersion]:
    """Every version of a key with its edges and the KPRs that wrote and retired it."""
    return fact_history(namespace_id=namespace_id, subject=subject, key=key)
