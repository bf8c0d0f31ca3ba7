from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from memorypr.facts.models import FactStatus, FactVersion
from memorypr.pulls.models import KnowledgePullRequest, ReviewStatus
from memorypr.working_memory import selectors as working_memory
from reviewer.models import ReviewPolicy, UploadedTranscript
from reviewer.policy import policy_view
from reviewer.rules.base import PolicyView
from reviewer.rules.text import normalize, transcript_parse


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


_QUOTE_MARKS = "\"'“”‘’「」『』 "


def quote_sources_elsewhere(
    *, namespace_id: int, session_id: str, quote: str
) -> list[tuple[str, tuple[str, ...]]]:
    """Other sessions of the namespace in which a user turn holds the quote (compared as the
    evidence rule compares), each with the subjects that KPRs citing that session name."""
    wanted = normalize(quote).strip(_QUOTE_MARKS)
    if not wanted:
        return []
    # The database narrows by the longest word of the quote; the normalised comparison decides.
    fragment = max(quote.split(), key=len).strip(_QUOTE_MARKS + ".,!?。，！？")
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


def agent_pull_count(*, agent_id: int, namespace_id: int, since: datetime, until: datetime) -> int:
    """KPRs an agent submitted to a namespace in [since, until]."""
    return KnowledgePullRequest.objects.filter(
        agent_id=agent_id, namespace_id=namespace_id, created_at__gte=since, created_at__lte=until
    ).count()


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
