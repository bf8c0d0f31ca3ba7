from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.working_memory.models import SessionTurn
from memorypr.working_memory.stores import Window, window_read


def session_transcript(*, namespace_id: int, session_id: str) -> str | None:
    """The known transcript of a session (all turns, in order), or None when it is unknown.

    One turn per line block, `role: content`, so a verbatim quote of what someone said is
    a substring of it.
    """
    turns = SessionTurn.objects.filter(namespace_id=namespace_id, session_id=session_id).order_by("id")
    lines = [f"{role}: {content}" for role, content in turns.values_list("role", "content")]
    return "\n".join(lines) if lines else None


def session_exists(*, namespace_id: int, session_id: str) -> bool:
    return SessionTurn.objects.filter(namespace_id=namespace_id, session_id=session_id).exists()


@dataclass(frozen=True)
class SessionView:
    namespace: Namespace
    session_id: str
    window: Window
    total_turns: int

    @property
    def expired(self) -> bool:
        return self.total_turns > 0 and not self.window.turns


def session_view(*, namespace: Namespace, session_id: str, now: datetime | None = None) -> SessionView | None:
    """Working memory of a session in this namespace; None when the namespace has no such session."""
    total = SessionTurn.objects.filter(namespace=namespace, session_id=session_id).count()
    if total == 0:
        return None
    window = window_read(namespace_id=namespace.pk, session_id=session_id, now=now or timezone.now())
    return SessionView(namespace=namespace, session_id=session_id, window=window, total_turns=total)


def session_turns(*, namespace_id: int, session_id: str) -> list[tuple[str, str]]:
    """Every turn of a session in order, as (role, content): who said what."""
    return list(
        SessionTurn.objects.filter(namespace_id=namespace_id, session_id=session_id)
        .order_by("id")
        .values_list("role", "content")
    )


def session_user_turns_containing(
    *, namespace_id: int, session_id: str, fragment: str, recent: int | None = None
) -> list[str]:
    """The contents of the session's user turns that contain `fragment` (any case), in order;
    with `recent`, among its last `recent` turns only.

    Text search has no index here: the whole session is read, which for a session of thousands
    of turns is milliseconds per search. `recent` reads the newest turns through the session's
    index, a cost that does not grow with the session.
    """
    if recent is not None:
        return _recent_user_turns_containing(
            namespace_id=namespace_id, session_id=session_id, fragment=fragment, recent=recent
        )
    return list(
        SessionTurn.objects.filter(
            namespace_id=namespace_id, session_id=session_id, role="user", content__icontains=fragment
        )
        .order_by("id")
        .values_list("content", flat=True)
    )


# The newest turns are read first, then searched: as `id IN (newest)` the planner searched the
# whole namespace's turns for the word and then kept the newest (8 ms at 8,000 turns). As
# icontains, case aside (upper), and the fragment is literal (no LIKE wildcards).
_RECENT_CONTAINING = f"""
    SELECT t.content FROM (
        SELECT id, role, content FROM {SessionTurn._meta.db_table}
        WHERE namespace_id = %(ns)s AND session_id = %(session)s ORDER BY id DESC LIMIT %(recent)s
    ) AS t
    WHERE t.role = 'user' AND strpos(upper(t.content), upper(%(fragment)s)) > 0
    ORDER BY t.id
"""


def _recent_user_turns_containing(
    *, namespace_id: int, session_id: str, fragment: str, recent: int
) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            _RECENT_CONTAINING,
            {"ns": namespace_id, "session": session_id, "recent": recent, "fragment": fragment},
        )
        return [row[0] for row in cursor.fetchall()]


def user_turns_containing(
    *, namespace_id: int, fragment: str, exclude_session: str, limit: int = 200
) -> list[tuple[str, str]]:
    """User turns of the namespace's other sessions whose text contains `fragment` (any case),
    as (session_id, content), newest first: where else a quote was said."""
    return list(
        SessionTurn.objects.filter(namespace_id=namespace_id, role="user", content__icontains=fragment)
        .exclude(session_id=exclude_session)
        .order_by("-id")
        .values_list("session_id", "content")[:limit]
    )
