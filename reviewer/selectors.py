from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import Model
from django.utils import timezone

from memorypr.agents.models import Agent, Namespace
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewStatus
from memorypr.pulls.specs import OPERATION_FIELDS
from memorypr.working_memory import selectors as working_memory
from reviewer.models import ReviewPolicy, UploadedTranscript
from reviewer.policy import policy_view
from reviewer.rules.base import CurrentFact, OperationView, PolicyView, PullView
from reviewer.rules.text import QUOTE_MARKS, normalize, quote_search_word, transcript_parse


@dataclass(frozen=True)
class ReviewSubject:
    """What a review reads of its KPR before the rules run."""

    pull: PullView  # as read, without loaders; reviewer.context adds them
    review_status: str
    # KPRs the agent submitted to the namespace in the window that ends at this one
    agent_pulls_in_window: int
    operations: list[OperationView]


def _json_columns(model: type[Model]) -> frozenset[str]:
    return frozenset(f.name for f in model._meta.concrete_fields if f.get_internal_type() == "JSONField")


# A PolicyView's fields are the ReviewPolicy's columns, and an OperationSpec's the Operation's.
_POLICY_COLUMNS = tuple(f.name for f in fields(PolicyView))
_POLICY_JSON = _json_columns(ReviewPolicy)
_OPERATION_COLUMNS = ("position", *OPERATION_FIELDS)
_OPERATION_JSON = _json_columns(Operation)


def _columns(alias: str, names: tuple[str, ...], json_names: frozenset[str]) -> str:
    # jsonb as its text, decoded here as the JSONField would decode it
    return ", ".join(f"{alias}.{name}::text" if name in json_names else f"{alias}.{name}" for name in names)


# One statement, one row per operation: the KPR with its namespace, agent, policy and the
# agent's count in the window, each operation with the active version of its key. The ORM
# took four statements and one more per operation, and building them cost more than running them.
_REVIEW_SUBJECT_SQL = f"""
    SELECT p.id, p.namespace_id, n.name, p.subject, p.agent_id, a.name, a.trust, p.source_session_id,
           p.created_at, p.review_status,
           (SELECT count(*) FROM {KnowledgePullRequest._meta.db_table} c
             WHERE c.agent_id = p.agent_id AND c.namespace_id = p.namespace_id
               AND c.created_at >= p.created_at - %(window_seconds)s * interval '1 second' AND c.created_at <= p.created_at),
           rp.id IS NOT NULL, {_columns("rp", _POLICY_COLUMNS, _POLICY_JSON)},
           o.id IS NOT NULL, {_columns("o", _OPERATION_COLUMNS, _OPERATION_JSON)},
           f.value::text, f.version, f.importance, f.confidence
      FROM {KnowledgePullRequest._meta.db_table} p
      JOIN {Namespace._meta.db_table} n ON n.id = p.namespace_id
      JOIN {Agent._meta.db_table} a ON a.id = p.agent_id
      LEFT JOIN {ReviewPolicy._meta.db_table} rp ON rp.namespace_id = p.namespace_id
      LEFT JOIN {Operation._meta.db_table} o ON o.pull_id = p.id
      LEFT JOIN LATERAL (
          SELECT v.value, v.version, v.importance, v.confidence FROM {FactVersion._meta.db_table} v
           WHERE v.namespace_id = p.namespace_id AND v.subject = p.subject AND v.category = o.category
             AND v.key = o.key AND v.status = '{FactStatus.ACTIVE}'
           ORDER BY v.id LIMIT 1
      ) f ON o.id IS NOT NULL
     WHERE p.id = %(pull)s
     ORDER BY o.position
"""


def _decoded(names: tuple[str, ...], values: tuple[Any, ...], json_names: frozenset[str]) -> dict[str, Any]:
    return {
        name: json.loads(value) if name in json_names and value is not None else value
        for name, value in zip(names, values, strict=True)
    }


def review_subject_get(*, pull_id: str, window: timedelta) -> ReviewSubject | None:
    """The KPR under review and its operations, each with the current version of its key; None
    for an unknown id. `window` is the span of the agent's count that ends at this KPR."""
    try:
        pull_key = uuid.UUID(str(pull_id))
    except ValueError:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_REVIEW_SUBJECT_SQL, {"pull": pull_key, "window_seconds": window.total_seconds()})
        rows = cursor.fetchall()
    if not rows:
        return None
    first = rows[0]
    policy_end = 12 + len(_POLICY_COLUMNS)
    policy = (
        policy_view(ReviewPolicy(**_decoded(_POLICY_COLUMNS, first[12:policy_end], _POLICY_JSON)))
        if first[11]
        else policy_view(None)
    )
    operations = []
    for row in rows:
        if not row[policy_end]:  # a KPR without operations
            continue
        op_end = policy_end + 1 + len(_OPERATION_COLUMNS)
        content = _decoded(_OPERATION_COLUMNS, row[policy_end + 1 : op_end], _OPERATION_JSON)
        value, version, importance, confidence = row[op_end:]
        current = (
            CurrentFact(
                value=json.loads(value) if value is not None else None,
                version=version,
                importance=importance,
                confidence=confidence,
            )
            if version is not None
            else None
        )
        content["derived_from"] = list(content["derived_from"] or [])
        operations.append(OperationView(current=current, **content))
    pull = PullView(
        pull_id=str(first[0]),
        namespace_id=first[1],
        namespace=first[2],
        subject=first[3],
        agent_id=first[4],
        agent_name=first[5],
        agent_trust=first[6],
        session_id=first[7],
        created_at=first[8],
        policy=policy,
    )
    return ReviewSubject(
        pull=pull, review_status=first[9], agent_pulls_in_window=int(first[10]), operations=operations
    )


def review_policy_get(*, namespace_id: int) -> PolicyView:
    """The namespace's review policy, defaults filled in."""
    return policy_view(ReviewPolicy.objects.filter(namespace_id=namespace_id).first())


def transcript_get(*, namespace_id: int, session_id: str) -> str | None:
    """Every known turn of a session: working memory, then uploaded transcripts; None if unknown."""
    if not session_id:
        return None
    parts = [working_memory.session_transcript(namespace_id=namespace_id, session_id=session_id)]
    parts += UploadedTranscript.objects.filter(namespace_id=namespace_id, session_id=session_id).values_list(
        "text", flat=True
    )
    known = [part for part in parts if part is not None]
    return "\n".join(known) if known else None


def transcript_turns_get(*, namespace_id: int, session_id: str) -> list[tuple[str, str]] | None:
    """Every known turn of a session as (role, content): working memory's recorded turns, then
    the uploaded transcripts' (speaker lines parsed, see transcript_parse); None if unknown."""
    if not session_id:
        return None
    turns = working_memory.session_turns(namespace_id=namespace_id, session_id=session_id)
    uploads = UploadedTranscript.objects.filter(namespace_id=namespace_id, session_id=session_id).values_list(
        "text", flat=True
    )
    for text in uploads:
        turns.extend(transcript_parse(text))
    return turns if turns or uploads else None


def session_user_turns_containing(
    *, namespace_id: int, session_id: str, fragment: str, recent: int | None = None
) -> list[str]:
    """The source session's recorded user turns whose text contains `fragment` (any case); with
    `recent`, among its last `recent` turns."""
    if not session_id or not fragment:
        return []
    return working_memory.session_user_turns_containing(
        namespace_id=namespace_id, session_id=session_id, fragment=fragment, recent=recent
    )


def quote_sources_elsewhere(
    *, namespace_id: int, session_id: str, quote: str
) -> list[tuple[str, tuple[str, ...]]]:
    """Other sessions of the namespace in which a user turn holds the quote (compared as the
    evidence rule compares), each with the subjects that KPRs citing that session name."""
    wanted = normalize(quote).strip(QUOTE_MARKS)
    if not wanted:
        return []
    # The database narrows by the longest word of the quote; the normalised comparison decides.
    fragment = quote_search_word(quote)
    if not fragment:
        return []
    sessions: list[str] = []
    for other, content in working_memory.user_turns_containing(
        namespace_id=namespace_id, fragment=fragment, exclude_session=session_id
    ):
        if other not in sessions and wanted in normalize(content):
            sessions.append(other)
    subjects: dict[str, set[str]] = {other: set() for other in sessions}
    for other, subject in KnowledgePullRequest.objects.filter(
        namespace_id=namespace_id, source_session_id__in=sessions
    ).values_list("source_session_id", "subject"):
        subjects[other].add(subject)
    return [(other, tuple(sorted(subjects[other]))) for other in sessions]


def subject_facts_for_review(*, namespace_id: int, subject: str, limit: int = 30) -> list[FactVersion]:
    """The subject's most important active facts: context for the LLM reviewer."""
    return list(
        FactVersion.objects.filter(namespace_id=namespace_id, subject=subject, status=FactStatus.ACTIVE)
        .order_by("-importance", "category", "key")
        .only("category", "key", "value", "version", "importance")[:limit]
    )


def pull_ids_pending(*, older_than: timedelta, limit: int) -> list[str]:
    """KPRs still waiting for their review after `older_than`, oldest first."""
    return [
        str(pk)
        for pk in KnowledgePullRequest.objects.filter(
            review_status=ReviewStatus.PENDING, created_at__lte=timezone.now() - older_than
        )
        .order_by("created_at")
        .values_list("id", flat=True)[:limit]
    ]
