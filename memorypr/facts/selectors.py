"""Reads of the fact store: current facts, facts as of a moment, and a key's history.

A version is active from `created_at` until `retired_at` and never again, so the state at
any moment t is exact: active at t when `created_at <= t` and (`retired_at` is null or
`retired_at > t`). "True at t" also needs t inside the version's valid time.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import reduce
from typing import Any

from django.db import connection
from django.db.models import F, Prefetch, Q, QuerySet

from memorypr.common.db.rows import ModelRows
from memorypr.facts.models import VECTOR_STORE_FIELDS, EdgeType, FactEdge, FactStatus, FactVersion


def fact_get_active(*, namespace_id: int, subject: str, category: str, key: str) -> FactVersion | None:
    """The one active version of a key, or None (without its 384-float embedding: callers compare values)."""
    return (
        FactVersion.objects.filter(
            namespace_id=namespace_id, subject=subject, category=category, key=key, status=FactStatus.ACTIVE
        )
        .defer("embedding", "search_text")
        .first()
    )


def active_at_q(at: datetime) -> Q:
    """Versions that were active at `at` (record time)."""
    return Q(created_at__lte=at) & (Q(retired_at__isnull=True) | Q(retired_at__gt=at))


def valid_at_q(at: datetime) -> Q:
    """Versions whose valid time covers `at`."""
    return (Q(valid_from__isnull=True) | Q(valid_from__lte=at)) & (
        Q(valid_to__isnull=True) | Q(valid_to__gt=at)
    )


def fact_status_at(*, fact: FactVersion, at: datetime | None) -> str:
    """The version's status at a moment: its status now when `at` is None, "" before it existed."""
    if at is None:
        return fact.status
    if fact.created_at > at:
        return ""
    if fact.retired_at is None or fact.retired_at > at:
        return FactStatus.ACTIVE
    return fact.status


def fact_list(
    *,
    namespace_id: int,
    subject: str | None = None,
    category: str | None = None,
    status: str | None = FactStatus.ACTIVE,
    as_of: datetime | None = None,
    keys: Sequence[str] = (),
    key_prefixes: Sequence[str] = (),
) -> QuerySet[FactVersion]:
    """Facts of a namespace (one subject, or all): by status now, or what was true at `as_of`.

    `status=None` means every status. With `as_of`, the versions active and valid then.
    With `keys` or `key_prefixes`, only the facts with one of those keys or whose key starts
    with one of the prefixes. Each row carries `namespace_name` and `operation_action` (None
    when no KPR wrote it).
    """
    qs = (
        FactVersion.objects.filter(namespace_id=namespace_id)
        .defer(*VECTOR_STORE_FIELDS)  # a list never shows them
        # The two names a body shows, joined in SQL: one model per row instead of three.
        .annotate(namespace_name=F("namespace__name"), operation_action=F("operation__action"))
    )
    if subject is not None:
        qs = qs.filter(subject=subject)
    if category:
        qs = qs.filter(category=category)
    if keys or key_prefixes:
        conditions = [Q(key__in=list(keys))] if keys else []
        conditions += [Q(key__startswith=prefix) for prefix in key_prefixes]
        qs = qs.filter(reduce(operator.or_, conditions))
    if as_of is not None:
        qs = qs.filter(active_at_q(as_of) & valid_at_q(as_of))
    elif status:
        qs = qs.filter(status=status)
    return qs.order_by("subject", "category", "key", "version", "id")


# What a fact's body shows (memorypr.facts.bodies), by the names `fact_list` rows carry.
FACT_ROW_FIELDS = (
    "id", "namespace_name", "subject", "category", "key", "value", "version", "status", "confidence",
    "importance", "valid_from", "valid_to", "access_count", "last_accessed_at", "created_at", "retired_at",
    "pull_id", "retired_by_pull_id", "operation_action",
)  # fmt: skip


def fact_list_rows(facts: QuerySet[FactVersion]) -> QuerySet[Any]:
    """A `fact_list` as named rows of FACT_ROW_FIELDS, for the list an agent reads before each
    proposal: a row is a tuple, not a model, which halves the read of a few hundred facts."""
    return facts.values_list(*FACT_ROW_FIELDS, named=True)


def fact_history(
    *, namespace_id: int, subject: str, key: str, category: str | None = None, as_of: datetime | None = None
) -> list[FactVersion]:
    """Every version of a key (any category unless given), oldest first, with edges and KPRs.

    With `as_of`, only the versions written by then, and only edges that existed then.
    """
    edges = FactEdge.objects.select_related("source", "target").order_by("id")
    if as_of is not None:
        edges = edges.filter(source__created_at__lte=as_of, target__created_at__lte=as_of)
    qs = FactVersion.objects.filter(namespace_id=namespace_id, subject=subject, key=key)
    if category:
        qs = qs.filter(category=category)
    if as_of is not None:
        qs = qs.filter(created_at__lte=as_of)
    return list(
        qs.select_related("pull__agent", "retired_by_pull", "operation", "namespace")
        .prefetch_related(Prefetch("out_edges", queryset=edges), Prefetch("in_edges", queryset=edges))
        .order_by("category", "version")
    )


def fact_dependency_keys(*, fact: FactVersion) -> list[str]:
    """Keys of the facts this version was DERIVED_FROM, in order."""
    keys = (
        FactEdge.objects.filter(source=fact, edge_type=EdgeType.DERIVED_FROM)
        .order_by("target__key")
        .values_list("target__key", flat=True)
    )
    return [key for key in dict.fromkeys(keys) if key != fact.key]


def fact_versions_written_by(*, pull_id: uuid.UUID) -> list[FactVersion]:
    """The versions a KPR's merge wrote, by category and key."""
    return list(FactVersion.objects.filter(pull_id=pull_id).order_by("category", "key"))


def fact_versions_retired_by(*, pull_id: uuid.UUID) -> list[FactVersion]:
    """The versions a KPR's merge retired (superseded, retracted, expired or made stale)."""
    return list(FactVersion.objects.filter(retired_by_pull_id=pull_id).order_by("category", "key"))


def fact_active_keys(*, namespace_id: int, subject: str) -> set[str]:
    """Keys of a subject that have an active version now."""
    return set(
        FactVersion.objects.filter(
            namespace_id=namespace_id, subject=subject, status=FactStatus.ACTIVE
        ).values_list("key", flat=True)
    )


# What retrieval reads of a version: all but the embedding and the search documents.
_LIGHT_ROWS = {
    alias: ModelRows(FactVersion, alias=alias, deferred=VECTOR_STORE_FIELDS) for alias in ("f", "t")
}


def fact_versions_by_id(*, ids: Iterable[int]) -> dict[int, FactVersion]:
    """The versions with these ids (embedding and search documents deferred), by id.

    A written statement: retrieval reads its candidates on every query, and building the
    ORM query would cost more than running it.
    """
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = _LIGHT_ROWS["f"]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.columns} FROM facts_factversion f WHERE f.id = ANY(%s)", [wanted])
        return {fact.pk: fact for fact in rows.instances(cursor.fetchall())}


def fact_versions_replaced(*, ids: Iterable[int]) -> dict[int, FactVersion]:
    """For each of these versions, the newest version it replaced (its UPDATES edge), by id."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = _LIGHT_ROWS["t"]
    sql = f"""
        SELECT DISTINCT ON (e.source_id) {rows.columns}, e.source_id
        FROM facts_factedge e JOIN facts_factversion t ON t.id = e.target_id
        WHERE e.source_id = ANY(%s) AND e.edge_type = %s
        ORDER BY e.source_id, t.version DESC
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [wanted, EdgeType.UPDATES])
        found = cursor.fetchall()
        return {int(row[-1]): fact for row, fact in zip(found, rows.instances(found), strict=True)}


_WITH_REPLACED_SQL = f"""
    SELECT {_LIGHT_ROWS["f"].columns}, NULL::bigint AS replaced_by FROM facts_factversion f WHERE f.id = ANY(%s)
    UNION ALL
    (SELECT DISTINCT ON (e.source_id) {_LIGHT_ROWS["t"].columns}, e.source_id
     FROM facts_factedge e JOIN facts_factversion t ON t.id = e.target_id
     WHERE e.source_id = ANY(%s) AND e.edge_type = %s
     ORDER BY e.source_id, t.version DESC)
"""


def fact_versions_with_replaced(
    *, ids: Iterable[int]
) -> tuple[dict[int, FactVersion], dict[int, FactVersion]]:
    """The versions with these ids, and for each the newest version it replaced: one statement.

    What `fact_versions_by_id` and `fact_versions_replaced` return, in one round trip: what a
    retrieval reads of the facts it serves.
    """
    wanted = sorted(set(ids))
    if not wanted:
        return {}, {}
    found: dict[int, FactVersion] = {}
    replaced: dict[int, FactVersion] = {}
    with connection.cursor() as cursor:
        cursor.execute(_WITH_REPLACED_SQL, [wanted, wanted, EdgeType.UPDATES])
        read = cursor.fetchall()
        for row, fact in zip(read, _LIGHT_ROWS["f"].instances(read), strict=True):
            if row[-1] is None:
                found[fact.pk] = fact
            else:
                replaced[int(row[-1])] = fact
    return found, replaced


_LATEST_VERSIONS_SQL = f"""
    SELECT category, key, max(version) FROM {FactVersion._meta.db_table}
    WHERE namespace_id = %s AND subject = %s AND key = ANY(%s)
    GROUP BY category, key
"""


def fact_latest_versions(
    *, namespace_id: int, subject: str, keys: Iterable[str]
) -> dict[tuple[str, str], int]:
    """The highest version number of each (category, key) of a subject among these keys, any status."""
    with connection.cursor() as cursor:
        cursor.execute(_LATEST_VERSIONS_SQL, [namespace_id, subject, sorted(set(keys))])
        return {(category, key): int(latest) for category, key, latest in cursor.fetchall()}
