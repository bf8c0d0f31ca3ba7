"""Every lock the application takes, in one place, always in the same order.

Order: (0) the KPR row lock (`lock_pull`), before any other; (1) per-subject merge locks
(`lock_subjects`), sorted by key; (2) row locks on fact versions (`lock_rows`,
`lock_fact_versions_active`, primary-key order) and the rows a merge's stale propagation
updates; (3) the audit chain lock (`lock_audit_chain_extend`) last, because every transaction appends its audit rows at the end of
its work. A namespace's review policy row (`lock_review_policy`) is taken alone, before the
audit chain lock.
Advisory locks are transaction-scoped: they are released at commit or rollback. One is not:
the merge drain lock of a lane (`lock_merge_drain`) is held by a session across the several
transactions of a batch of merges, and is taken outside any transaction, before all the others.

Models are looked up in the app registry rather than imported: every app imports this
module, so it imports none of them (the annotations only, for the type checker).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

from django.apps import apps
from django.db import connection, models

from memorypr.common.db.rows import ModelRows
from memorypr.common.prefetch import related_set

if TYPE_CHECKING:
    from memorypr.agents.models import Namespace
    from memorypr.facts.models import FactVersion
    from memorypr.pulls.models import KnowledgePullRequest
    from reviewer.models import ReviewPolicy

_M = TypeVar("_M", bound=models.Model)

AUDIT_CHAIN_LOCK = 0x4D505241  # "MPRA"
MERGE_DRAIN_LOCK = 0x4D50524D  # "MPRM"
_SUBJECT_LOCK_SPACE = 0x4D505253  # "MPRS"


def _lock_id(text: str) -> int:
    return zlib.crc32(text.encode())


@contextmanager
def lock_merge_drain(*, lane: int = 0, while_waiting: Callable[[], bool] | None = None) -> Iterator[None]:
    """One merge task at a time drains a merge lane (a session lock, outside transactions).

    Two workers draining the same lane's head would embed the same values twice; the second
    waits, then finds its KPR merged. Released on the way out, or when the session ends.
    While the lock is held elsewhere, `while_waiting` is called again and again (between tries
    that do not wait) for as long as it reports work done; then the task waits as before.
    """
    acquired = False
    if while_waiting is not None:
        acquired = _merge_drain_try_lock(lane)
        while not acquired and while_waiting():
            acquired = _merge_drain_try_lock(lane)
    if not acquired:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s::int, %s::int)", [MERGE_DRAIN_LOCK, lane])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s::int, %s::int)", [MERGE_DRAIN_LOCK, lane])


def _merge_drain_try_lock(lane: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s::int, %s::int)", [MERGE_DRAIN_LOCK, lane])
        return bool(cursor.fetchone()[0])


@functools.cache
def _pull_lock_statement() -> tuple[ModelRows[KnowledgePullRequest], ModelRows[Namespace], str]:
    pulls = ModelRows(
        cast("type[KnowledgePullRequest]", apps.get_model("pulls", "KnowledgePullRequest")), alias="p"
    )
    namespaces = ModelRows(cast("type[Namespace]", apps.get_model("agents", "Namespace")), alias="n")
    # OF p: locking the joined namespace row too would serialise every merge and review of a
    # namespace, and block new KPRs in it (their foreign key check needs a share lock).
    sql = f"""SELECT {pulls.columns}, {namespaces.columns}
              FROM {pulls.model._meta.db_table} p JOIN {namespaces.model._meta.db_table} n ON n.id = p.namespace_id
              WHERE p.id = %s FOR UPDATE OF p"""
    return pulls, namespaces, sql


def lock_pull(*, pull_id: str) -> KnowledgePullRequest:
    """Row-lock a KPR for a status change (review, claim, merge), its namespace loaded. Taken
    before any other lock. A written statement: review and merge take it for every KPR."""
    pulls, namespaces, sql = _pull_lock_statement()
    key = pulls.model._meta.pk.to_python(pull_id)  # type: ignore[union-attr]
    with connection.cursor() as cursor:
        cursor.execute(sql, [key])
        row = cursor.fetchone()
    if row is None:
        raise pulls.model.DoesNotExist(f"No KPR {pull_id}.")
    pull = pulls.instance(row)
    related_set(pull, "namespace", namespaces.instance(row[len(pulls.fields) :]))
    return pull


def lock_review_policy(*, namespace_id: int) -> ReviewPolicy | None:
    """Row-lock a namespace's review policy for a change; None when it has none yet."""
    model = cast("type[ReviewPolicy]", apps.get_model("reviewer", "ReviewPolicy"))
    return model.objects.select_for_update().filter(namespace_id=namespace_id).first()


def lock_subjects(*, keys: Iterable[tuple[str, str]]) -> None:
    """Lock (namespace name, subject) pairs for a merge, sorted so two merges never deadlock."""
    ordered = sorted(set(keys))
    with connection.cursor() as cursor:
        for namespace, subject in ordered:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)",
                [_SUBJECT_LOCK_SPACE, _lock_id(f"{namespace}\x1f{subject}") - 2**31],
            )


@functools.cache
def _active_versions_lock_statement(deferred: tuple[str, ...]) -> tuple[ModelRows[FactVersion], str]:
    versions = ModelRows(cast("type[FactVersion]", apps.get_model("facts", "FactVersion")), deferred=deferred)
    sql = f"""SELECT {versions.columns} FROM {versions.model._meta.db_table}
              WHERE namespace_id = %s AND subject = %s AND status = %s AND key = ANY(%s)
              ORDER BY id FOR UPDATE"""
    return versions, sql


def lock_fact_versions_active(
    *, namespace_id: int, subject: str, keys: Iterable[str], deferred: tuple[str, ...] = ()
) -> list[FactVersion]:
    """Row-lock the active versions of these keys of a subject, in primary-key order, as
    `lock_rows` does; `deferred` fields stay in the database. A written statement: every merge
    takes it, and compiling the same query cost more than running it."""
    versions, sql = _active_versions_lock_statement(tuple(deferred))
    with connection.cursor() as cursor:
        cursor.execute(sql, [namespace_id, subject, "active", sorted(set(keys))])
        return versions.instances(cursor.fetchall())


def lock_rows(queryset: models.QuerySet[_M]) -> list[_M]:
    """Row-lock a queryset's rows (FOR UPDATE of its own table) in primary-key order."""
    return list(queryset.select_for_update(of=("self",)).order_by("pk"))


def lock_audit_chain_extend(*, columns: list[list[Any]], commit_unflushed: bool) -> list[tuple[Any, ...]]:
    """Serialise appends to the hash chain (each row needs the previous row's hash). Always last.

    The lock, the head (read once the lock is granted) and the append of the events are one
    call (`audit_chain_extend`, memorypr/audit/migrations/0005): the lock is held until the
    caller's transaction ends, and nothing else happens in between. `columns` are the
    function's arrays after the lock id; returns its rows, one per event, in order.
    `commit_unflushed`: the commit releases the lock before its WAL flush, which the caller
    then waits for after the commit.
    """
    # The arrays go in binary form (`%b`): in text form every quote of the JSON payloads and
    # hashed pieces is escaped by a regular expression, five times the cost of the whole call.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT event_id, event_sequence, event_created_at, event_prev_hash, event_hash"
            " FROM audit_chain_extend(%s, %b, %b, %b, %b::uuid[], %b, %b::jsonb[], %b, %b, %b, %s)",
            [AUDIT_CHAIN_LOCK, *columns, commit_unflushed],
        )
        return cursor.fetchall()
