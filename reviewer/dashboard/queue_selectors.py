"""What the queue page reads: tabs with counts, filters from the query string, one page of rows."""

from __future__ import annotations

import re
import uuid
from dataclasses import asdict, dataclass, fields
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import CharField, Count, Min, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from memorypr.common.canonical import canonical_json
from memorypr.pulls.models import (
    Category,
    KnowledgePullRequest,
    MergeStatus,
    Operation,
    ReviewEvent,
    ReviewStatus,
)
from reviewer.dashboard.selectors import reviewer_namespaces
from reviewer.rules import rule_names

TABS: dict[str, tuple[str, Q]] = {
    "needs": ("Needs review", Q(review_status=ReviewStatus.NEEDS_HUMAN_REVIEW)),
    "mine": ("Claimed by me", Q(review_status=ReviewStatus.NEEDS_HUMAN_REVIEW)),
    "pending": ("Pending", Q(review_status=ReviewStatus.PENDING)),
    "approved": ("Approved", Q(review_status=ReviewStatus.APPROVED) & ~Q(merge_status=MergeStatus.MERGED)),
    "merged": ("Merged", Q(merge_status=MergeStatus.MERGED)),
    "conflicts": ("Conflicts", Q(merge_status__in=[MergeStatus.CONFLICT, MergeStatus.FAILED])),
    "rejected": ("Rejected", Q(review_status=ReviewStatus.REJECTED)),
}

# Age bands: (label, lower bound, upper bound) of the time since the KPR was proposed.
AGES: dict[str, tuple[str, timedelta | None, timedelta | None]] = {
    "1h": ("under 1 hour", None, timedelta(hours=1)),
    "24h": ("under 24 hours", None, timedelta(hours=24)),
    "overdue": ("over 24 hours (SLA)", timedelta(hours=24), None),
    "week": ("over 7 days", timedelta(days=7), None),
}
LLM_VERDICTS = tuple(ReviewEvent.Verdict.values)
PAGE_SIZE = 25
_ID_PREFIX = re.compile(r"^[0-9a-f][0-9a-f-]{3,35}$")


class BadFilter(ValueError):
    """A filter value the queue does not know: answered 400, naming the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class QueueFilters:
    """The queue's filters as they stand in the URL: empty strings mean "any"."""

    q: str = ""
    namespace: str = ""
    subject: str = ""
    agent: str = ""
    category: str = ""
    rule: str = ""
    llm: str = ""
    age: str = ""
    claimed: str = ""

    @classmethod
    def from_query(cls, query: Any) -> QueueFilters:
        values = {f.name: str(query.get(f.name, "")).strip()[:200] for f in fields(cls)}
        if values["category"] and values["category"] not in Category.values:
            raise BadFilter("category", f"one of {', '.join(Category.values)}")
        if values["llm"] and values["llm"] not in LLM_VERDICTS:
            raise BadFilter("llm", f"one of {', '.join(LLM_VERDICTS)}")
        if values["age"] and values["age"] not in AGES:
            raise BadFilter("age", f"one of {', '.join(AGES)}")
        return cls(**values)

    def as_query(self) -> dict[str, str]:
        return {name: value for name, value in asdict(self).items() if value}

    @property
    def active(self) -> bool:
        return bool(self.as_query())


def _visible(*, user: AbstractBaseUser) -> QuerySet[KnowledgePullRequest]:
    return KnowledgePullRequest.objects.filter(namespace__in=reviewer_namespaces(user=user))


def _tab_filter(*, tab: str, user: AbstractBaseUser) -> Q:
    condition = TABS[tab][1]
    if tab == "mine":
        condition &= Q(claim__user_id=user.pk, claim__expires_at__gt=timezone.now())
    return condition


def _search(q: str) -> Q:
    """KPR id prefix, subject, agent, session, proposer; an operation's key or either value."""
    in_operations = Operation.objects.annotate(
        old_text=Cast("old_value", TextField()), new_text=Cast("new_value", TextField())
    ).filter(Q(key__icontains=q) | Q(old_text__icontains=q) | Q(new_text__icontains=q))
    condition = (
        Q(subject__icontains=q)
        | Q(agent__name__icontains=q)
        | Q(source_session_id__icontains=q)
        | Q(proposed_by__icontains=q)
        | Q(pk__in=in_operations.values("pull_id"))
    )
    if _ID_PREFIX.match(q.lower()):
        condition |= Q(id_text__startswith=q.lower())
    return condition


def _filtered(*, user: AbstractBaseUser, filters: QueueFilters) -> QuerySet[KnowledgePullRequest]:
    qs = _visible(user=user).annotate(id_text=Cast("id", CharField()))
    if filters.q:
        qs = qs.filter(_search(filters.q))
    if filters.namespace:
        qs = qs.filter(namespace__name=filters.namespace)
    if filters.subject:
        qs = qs.filter(subject=filters.subject)
    if filters.agent:
        qs = qs.filter(agent__name=filters.agent)
    if filters.category:
        qs = qs.filter(pk__in=Operation.objects.filter(category=filters.category).values("pull_id"))
    if filters.rule:
        # JSON containment (@>): some operation's checks hold this rule with a verdict that held it.
        held = [
            [{"checks": [{"rule": filters.rule, "verdict": verdict}]}] for verdict in ("escalate", "reject")
        ]
        events = ReviewEvent.objects.filter(reviewer_kind="rules").filter(
            Q(findings__contains=held[0]) | Q(findings__contains=held[1])
        )
        qs = qs.filter(pk__in=events.values("pull_id"))
    if filters.llm:
        events = ReviewEvent.objects.filter(reviewer_kind="llm", verdict=filters.llm)
        qs = qs.filter(pk__in=events.values("pull_id"))
    if filters.age:
        _, older_than, younger_than = AGES[filters.age]
        now = timezone.now()
        if older_than is not None:
            qs = qs.filter(created_at__lte=now - older_than)
        if younger_than is not None:
            qs = qs.filter(created_at__gt=now - younger_than)
    if filters.claimed:
        live = Q(claim__expires_at__gt=timezone.now())
        if filters.claimed == "nobody":
            qs = qs.exclude(live)
        elif filters.claimed == "anyone":
            qs = qs.filter(live)
        elif filters.claimed == "me":
            qs = qs.filter(live, claim__user_id=user.pk)
        else:
            qs = qs.filter(live, claim__user__username=filters.claimed)
    return qs


def queue_counts(*, user: AbstractBaseUser, filters: QueueFilters | None = None) -> dict[str, int]:
    """Each tab's count under the same filters as the rows."""
    qs = _filtered(user=user, filters=filters or QueueFilters())
    aggregates = {name: Count("pk", filter=_tab_filter(tab=name, user=user)) for name in TABS}
    return qs.aggregate(**aggregates)


@dataclass
class QueueRow:
    pull: KnowledgePullRequest
    operation_count: int
    lowest_confidence: float | None
    held_rules: list[str]
    llm_verdict: str
    claimed_by: str
    age_hours: float
    summary: str

    @property
    def overdue(self) -> bool:
        return self.age_hours >= 24


def queue_page(
    *, user: AbstractBaseUser, tab: str, filters: QueueFilters | None = None, page: int = 1
) -> tuple[Page, list[QueueRow]]:
    """One page of a tab, oldest first, as a queue should be worked."""
    qs = (
        _filtered(user=user, filters=filters or QueueFilters())
        .filter(_tab_filter(tab=tab, user=user))
        .select_related("namespace", "agent", "claim__user")
        .prefetch_related("operations")
        .annotate(
            operation_count=Count("operations", distinct=True),
            lowest_confidence=Min("operations__confidence"),
        )
        .order_by("created_at", "id")
    )
    paginator = Paginator(qs, PAGE_SIZE)
    page_obj = paginator.get_page(page)
    return page_obj, _rows(list(page_obj.object_list))


def queue_rows(*, user: AbstractBaseUser, tab: str, filters: QueueFilters | None = None) -> list[QueueRow]:
    """The first page of a tab."""
    return queue_page(user=user, tab=tab, filters=filters)[1]


def _rows(pulls: list[KnowledgePullRequest]) -> list[QueueRow]:
    events = ReviewEvent.objects.filter(pull__in=pulls, reviewer_kind__in=["rules", "llm"]).order_by("id")
    latest: dict[tuple[Any, str], ReviewEvent] = {(e.pull_id, e.reviewer_kind): e for e in events}
    now = timezone.now()
    rows = []
    for pull in pulls:
        rules = latest.get((pull.pk, "rules"))
        llm = latest.get((pull.pk, "llm"))
        claim = getattr(pull, "claim", None)
        rows.append(
            QueueRow(
                pull=pull,
                operation_count=pull.operation_count,  # type: ignore[attr-defined]
                lowest_confidence=pull.lowest_confidence,  # type: ignore[attr-defined]
                held_rules=_held_rules(rules),
                llm_verdict=llm.verdict if llm else "",
                claimed_by=claim.user.get_username() if claim and claim.expires_at > now else "",
                age_hours=(now - pull.created_at).total_seconds() / 3600,
                summary=pull_summary(operations=list(pull.operations.all())),
            )
        )
    return rows


def _held_rules(event: ReviewEvent | None) -> list[str]:
    if event is None:
        return []
    names: dict[str, None] = {}
    for finding in event.findings or []:
        for check in finding.get("checks", []) if isinstance(finding, dict) else []:
            if check.get("verdict") in ("escalate", "reject"):
                names[str(check.get("rule"))] = None
    return list(names)


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pull_summary(*, operations: list[Operation]) -> str:
    """One line of what a KPR changes: its first stated fact, then how many more (derived apart),
    e.g. "home_city: Beijing → Shenzhen (+1 derived)"."""
    if not operations:
        return ""
    ordered = sorted(operations, key=lambda op: (op.category == Category.DERIVED, op.position))
    lead, rest = ordered[0], ordered[1:]
    if lead.action == "CREATE":
        line = f"{lead.key}: + {_short(lead.new_value)}"
    elif lead.action == "DELETE":
        line = f"{lead.key}: {_short(lead.old_value)} → deleted"
    else:
        line = f"{lead.key}: {_short(lead.old_value)} → {_short(lead.new_value)}"
    derived = sum(op.category == Category.DERIVED for op in rest)
    others = len(rest) - derived
    extras = [f"+{others} more"] if others else []
    extras += [f"+{derived} derived"] if derived else []
    return f"{line} ({', '.join(extras)})" if extras else line


def visible_pull_ids(*, user: AbstractBaseUser, pull_ids: list[str]) -> list[Any]:
    """Those of the ids that are well-formed KPRs in the reviewer's namespaces."""
    valid = []
    for raw in pull_ids:
        try:
            valid.append(uuid.UUID(raw))
        except ValueError:
            continue
    return list(_visible(user=user).filter(pk__in=valid).values_list("pk", flat=True))


def queue_choices(*, user: AbstractBaseUser) -> dict[str, list[str]]:
    """The values the filter menus offer: what occurs in the reviewer's namespaces."""
    visible = _visible(user=user)
    return {
        "namespaces": list(reviewer_namespaces(user=user).order_by("name").values_list("name", flat=True)),
        "agents": sorted(set(visible.values_list("agent__name", flat=True))),
        "categories": list(Category.values),
        "llm": list(LLM_VERDICTS),
        "rules": rule_names(),
    }


def queue_claimants(*, user: AbstractBaseUser) -> list[str]:
    """Who holds a live claim in the reviewer's namespaces: the claimed-by filter offers them."""
    live = _visible(user=user).filter(claim__expires_at__gt=timezone.now())
    return sorted(set(live.values_list("claim__user__username", flat=True)))
