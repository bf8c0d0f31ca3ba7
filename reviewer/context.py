"""The views the rules and the LLM reviewer read, built once per review."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from reviewer.rules.base import PullView
from reviewer.selectors import (
    ReviewSubject,
    quote_sources_elsewhere,
    review_subject_get,
    session_user_turns_containing,
    transcript_get,
    transcript_turns_get,
)

RATE_WINDOW = timedelta(hours=1)


def review_context(*, pull_id: str) -> ReviewSubject | None:
    """The KPR's views for its review, or None for an unknown id.

    The KPR, its operations with the current version of each key, the namespace's policy and
    the agent's count in the past hour are read at once; the session's transcript and the
    search of other sessions load when a rule first asks for them.
    """
    subject = review_subject_get(pull_id=pull_id, window=RATE_WINDOW)
    if subject is None:
        return None
    return replace(subject, pull=_pull_view(subject))


def _pull_view(subject: ReviewSubject) -> PullView:
    namespace_id, session_id = subject.pull.namespace_id, subject.pull.session_id
    return replace(
        subject.pull,
        loaders={
            "transcript": lambda: transcript_get(namespace_id=namespace_id, session_id=session_id),
            "turns": lambda: transcript_turns_get(namespace_id=namespace_id, session_id=session_id),
            "user_turns_containing": lambda fragment, recent=None: session_user_turns_containing(
                namespace_id=namespace_id, session_id=session_id, fragment=fragment, recent=recent
            ),
            "quote_elsewhere": lambda quote: quote_sources_elsewhere(
                namespace_id=namespace_id, session_id=session_id, quote=quote
            ),
            # The window ends at this KPR, so a re-review later counts the same neighbours.
            "agent_pulls_last_hour": lambda: subject.agent_pulls_in_window,
        },
    )
