"""Working memory (tier 1): the current run of a session's turns, 20 turns, 30-minute idle TTL.

Two stores with one behaviour:
- Redis (when REDIS_URL is set): a capped list per session whose TTL restarts with each
  turn, so an idle session simply disappears;
- PostgreSQL (the embedded default, no Redis): the same window read from the durable
  transcript, cut at the first idle gap longer than the TTL.
A session that went idle starts a fresh working memory with its next turn; its full
transcript stays in PostgreSQL either way.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.utils import timezone

from memorypr.working_memory.conf import idle_ttl_seconds, redis_prefix, turns_kept
from memorypr.working_memory.models import SessionTurn

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Turn:
    turn_id: int
    role: str
    content: str
    created_at: datetime

    @classmethod
    def of(cls, row: SessionTurn) -> Turn:
        return cls(turn_id=row.pk, role=row.role, content=row.content, created_at=row.created_at)


@dataclass(frozen=True)
class Window:
    turns: list[Turn]
    expires_at: datetime | None
    store: str


class WorkingMemoryStore(Protocol):
    name: str

    def remember(self, *, namespace_id: int, session_id: str, turn: Turn) -> None: ...

    def window(self, *, namespace_id: int, session_id: str, now: datetime) -> Window: ...


class PostgresStore:
    name = "postgres"

    def remember(self, *, namespace_id: int, session_id: str, turn: Turn) -> None:
        """Nothing to do: the transcript row is the working memory."""

    def window(self, *, namespace_id: int, session_id: str, now: datetime) -> Window:
        ttl = timedelta(seconds=idle_ttl_seconds())
        rows = SessionTurn.objects.filter(namespace_id=namespace_id, session_id=session_id).order_by("-id")[
            : turns_kept()
        ]
        kept: list[Turn] = []
        newer = now
        for row in rows:
            if newer - row.created_at > ttl:
                break  # an idle gap: everything before it has left working memory
            kept.append(Turn.of(row))
            newer = row.created_at
        kept.reverse()
        expires = kept[-1].created_at + ttl if kept else None
        return Window(turns=kept, expires_at=expires, store=self.name)


@lru_cache(maxsize=4)
def _redis(url: str):  # type: ignore[no-untyped-def]
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


class RedisStore:
    name = "redis"

    def __init__(self, url: str) -> None:
        self.url = url

    def _key(self, namespace_id: int, session_id: str) -> str:
        return f"{redis_prefix()}:{namespace_id}:{session_id}"

    def remember(self, *, namespace_id: int, session_id: str, turn: Turn) -> None:
        key = self._key(namespace_id, session_id)
        item = json.dumps(
            {
                "id": turn.turn_id,
                "role": turn.role,
                "content": turn.content,
                "at": turn.created_at.isoformat(),
            },
            ensure_ascii=False,
        )
        pipe = _redis(self.url).pipeline(transaction=True)
        pipe.rpush(key, item)
        pipe.ltrim(key, -turns_kept(), -1)
        pipe.expire(key, idle_ttl_seconds())
        pipe.execute()

    def window(self, *, namespace_id: int, session_id: str, now: datetime) -> Window:
        client = _redis(self.url)
        key = self._key(namespace_id, session_id)
        pipe = client.pipeline(transaction=True)
        pipe.lrange(key, 0, -1)
        pipe.pttl(key)
        raw, pttl = pipe.execute()
        items = sorted((json.loads(x) for x in raw), key=lambda d: d["id"])
        turns = [
            Turn(
                turn_id=d["id"],
                role=d["role"],
                content=d["content"],
                created_at=datetime.fromisoformat(d["at"]),
            )
            for d in items[-turns_kept() :]
        ]
        expires = now + timedelta(milliseconds=pttl) if turns and pttl and pttl > 0 else None
        return Window(turns=turns, expires_at=expires, store=self.name)


def working_memory_store() -> WorkingMemoryStore:
    url = settings.REDIS_URL
    return RedisStore(url) if url else PostgresStore()


def window_read(*, namespace_id: int, session_id: str, now: datetime | None = None) -> Window:
    """The working memory of a session; the PostgreSQL window when Redis cannot be reached."""
    now = now or timezone.now()
    store = working_memory_store()
    try:
        return store.window(namespace_id=namespace_id, session_id=session_id, now=now)
    except Exception:  # a Redis outage degrades to the durable transcript, it never fails the read
        if isinstance(store, PostgresStore):
            raise
        logger.warning("working memory store %s unavailable; reading PostgreSQL", store.name, exc_info=True)
        return PostgresStore().window(namespace_id=namespace_id, session_id=session_id, now=now)
