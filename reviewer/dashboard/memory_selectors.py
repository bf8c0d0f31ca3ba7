"""What the memory browser reads: a reviewer's subjects, a subject's facts now or as of a
moment, each key's versions with the KPR behind each, and a fact's edge neighbourhood."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, Q

from memorypr.agents.models import Namespace
from memorypr.facts.models import EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.facts.selectors import active_at_q, fact_history, fact_status_at, valid_at_q
from reviewer.dashboard.graph import GraphEdge, GraphLayout, GraphNode, graph_layout
from reviewer.dashboard.selectors import reviewer_namespaces

# Everything DERIVED_FROM a retired fact turns stale to this depth (docs/architecture.md §4);
# the graph follows the same chain so that it shows all of what went stale with the fact.
STALE_DEPTH = 3
GRAPH_MAX_NODES = 40
STATUS_FILTERS = ("active", "all", *[s for s in FactStatus.values if s != FactStatus.ACTIVE])


@dataclass(frozen=True)
class SubjectRow:
    namespace: str
    subject: str
    active_facts: int
    versions: int
    last_change: datetime


def memory_namespace_get(*, user: AbstractBaseUser, name: str) -> Namespace | None:
    """The namespace if the reviewer may see it, else None (the view answers 404)."""
    return reviewer_namespaces(user=user).filter(name=name).first()


def memory_subjects(*, user: AbstractBaseUser, query: str = "", limit: int = 200) -> list[SubjectRow]:
    """Subjects that have memory in the reviewer's namespaces, most recently changed first."""
    qs = FactVersion.objects.filter(namespace__in=reviewer_namespaces(user=user))
    if query:
        qs = qs.filter(subject__icontains=query)
    rows = (
        qs.values("namespace__name", "subject")
        .annotate(
            active_facts=Count("pk", filter=Q(status=FactStatus.ACTIVE)),
            versions=Count("pk"),
            last_change=Max("created_at"),
        )
        .order_by("-last_change", "namespace__name", "subject")[:limit]
    )
    return [
        SubjectRow(
            namespace=row["namespace__name"],
            subject=row["subject"],
            active_facts=row["active_facts"],
            versions=row["versions"],
            last_change=row["last_change"],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class FactRow:
    fact: FactVersion
    status: str  # at `as_of` when one is given, else now
    timeline: list[FactVersion]


def memory_facts(
    *,
    namespace: Namespace,
    subject: str,
    category: str = "",
    status: str = "active",
    as_of: datetime | None = None,
) -> list[FactRow]:
    """A subject's facts by category and key: the versions with the given status (now, or at
    `as_of`), each beside every version of its key written by then, oldest first.

    "active" at a moment means active in the store and inside its valid time, as retrieval
    serves it; any other status is the version's status at that moment.
    """
    qs = FactVersion.objects.filter(namespace=namespace, subject=subject).select_related("pull")
    if category:
        qs = qs.filter(category=category)
    if as_of is not None:
        qs = qs.filter(created_at__lte=as_of)
        if status == FactStatus.ACTIVE:
            qs = qs.filter(active_at_q(as_of) & valid_at_q(as_of))
        elif status != "all":
            qs = qs.filter(status=status, retired_at__lte=as_of)
    elif status != "all":
        qs = qs.filter(status=status)
    facts = list(qs.defer("embedding", "search_text").order_by("category", "key", "version"))
    timelines = _timelines(namespace=namespace, subject=subject, facts=facts, as_of=as_of)
    return [
        FactRow(
            fact=fact,
            status=fact_status_at(fact=fact, at=as_of),
            timeline=timelines[(fact.category, fact.key)],
        )
        for fact in facts
    ]


def _timelines(
    *, namespace: Namespace, subject: str, facts: list[FactVersion], as_of: datetime | None
) -> dict[tuple[str, str], list[FactVersion]]:
    keys = {fact.key for fact in facts}
    qs = FactVersion.objects.filter(namespace=namespace, subject=subject, key__in=keys)
    if as_of is not None:
        qs = qs.filter(created_at__lte=as_of)
    timelines: dict[tuple[str, str], list[FactVersion]] = defaultdict(list)
    for version in qs.select_related("pull").defer("embedding", "search_text").order_by("version"):
        timelines[(version.category, version.key)].append(version)
    return timelines


def memory_categories(*, namespace: Namespace, subject: str) -> list[str]:
    return list(
        FactVersion.objects.filter(namespace=namespace, subject=subject)
        .values_list("category", flat=True)
        .distinct()
        .order_by("category")
    )


def memory_fact_get(*, namespace: Namespace, fact_id: int) -> FactVersion | None:
    return (
        FactVersion.objects.filter(namespace=namespace, pk=fact_id).defer("embedding", "search_text").first()
    )


@dataclass(frozen=True)
class TimelineRow:
    version: FactVersion
    status: str
    retired_at: datetime | None
    retired_by_pull_id: object | None


def memory_fact_timeline(*, fact: FactVersion, as_of: datetime | None = None) -> list[TimelineRow]:
    """Every version of the fact's key (its category) written by `as_of` (or ever), with the
    KPR behind it and, if it was retired by then, when and by which KPR."""
    rows = []
    for version in fact_history(
        namespace_id=fact.namespace_id,
        subject=fact.subject,
        key=fact.key,
        category=fact.category,
        as_of=as_of,
    ):
        status = fact_status_at(fact=version, at=as_of)
        retired = status != FactStatus.ACTIVE
        rows.append(
            TimelineRow(
                version=version,
                status=status,
                retired_at=version.retired_at if retired else None,
                retired_by_pull_id=version.retired_by_pull_id if retired else None,
            )
        )
    return rows


def memory_fact_graph(*, fact: FactVersion, as_of: datetime | None = None) -> GraphLayout:
    """The fact's versions (row 0), what they rest on (row -1), and what rests on them below:
    QUALIFIES, SUPPORTS, CONTRADICTS one step away, DERIVED_FROM down to the stale depth."""
    center = list(
        FactVersion.objects.filter(
            namespace_id=fact.namespace_id, subject=fact.subject, category=fact.category, key=fact.key
        )
        .filter(**({"created_at__lte": as_of} if as_of else {}))
        .defer("embedding", "search_text")
    )
    rows: dict[int, int] = {version.pk: 0 for version in center}
    versions: dict[int, FactVersion] = {version.pk: version for version in center}
    edges: dict[int, FactEdge] = {}
    scoped = FactEdge.objects.filter(
        source__namespace_id=fact.namespace_id, target__namespace_id=fact.namespace_id
    ).select_related("source", "target")
    if as_of is not None:
        scoped = scoped.filter(source__created_at__lte=as_of, target__created_at__lte=as_of)

    def visit(edge: FactEdge, other: FactVersion, row: int) -> bool:
        edges[edge.pk] = edge
        if other.pk in rows:
            return False
        if len(rows) >= GRAPH_MAX_NODES:
            return False
        rows[other.pk], versions[other.pk] = row, other
        return True

    for edge in scoped.filter(source_id__in=list(rows)).exclude(edge_type=EdgeType.UPDATES):
        visit(edge, edge.target, -1)
    frontier = [version.pk for version in center]
    for depth in range(1, STALE_DEPTH + 1):
        incoming = scoped.filter(target_id__in=frontier)
        if depth > 1:
            incoming = incoming.filter(edge_type=EdgeType.DERIVED_FROM)
        frontier = [edge.source_id for edge in incoming.order_by("id") if visit(edge, edge.source, depth)]
        if not frontier:
            break
    # Edges among the versions drawn (UPDATES between the fact's own versions among them).
    for edge in scoped.filter(source_id__in=list(rows), target_id__in=list(rows)):
        edges.setdefault(edge.pk, edge)
    nodes = [
        GraphNode(
            id=pk,
            row=row,
            order=(versions[pk].key, versions[pk].version),
            label=_short(f"{versions[pk].key} v{versions[pk].version}", 26),
            detail=_short(versions[pk].value, 30 - len(fact_status_at(fact=versions[pk], at=as_of))),
            status=fact_status_at(fact=versions[pk], at=as_of),
            full_label=f"{versions[pk].key} v{versions[pk].version}",
            focus=pk == fact.pk,
        )
        for pk, row in rows.items()
    ]
    return graph_layout(
        nodes=nodes,
        edges=[
            GraphEdge(source=e.source_id, target=e.target_id, edge_type=e.edge_type) for e in edges.values()
        ],
    )


def _short(value: object, limit: int = 24) -> str:
    text = value if isinstance(value, str) else "—" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
