"""Facts written straight into the store, with real embeddings and search text.

For tests of retrieval and evolution that are about reading the store, not about the
merge; the end-to-end tests go through KPR submission, review and merge instead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.facts.models import EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.vectors.embedding import embed_texts, fact_text
from memorypr.vectors.nearest import Scope
from memorypr.vectors.text import search_text


def fact_put(
    *,
    namespace: Namespace,
    key: str,
    value: Any,
    subject: str = "user-1",
    category: str = "user_profile",
    version: int = 1,
    status: str = FactStatus.ACTIVE,
    confidence: float = 0.9,
    importance: float = 0.5,
    created_at: datetime | None = None,
    retired_at: datetime | None = None,
    **extra: Any,
) -> FactVersion:
    text = fact_text(key=key, value=value, category=category)
    created = created_at or timezone.now()
    if status != FactStatus.ACTIVE and retired_at is None:
        retired_at = created
    return FactVersion.objects.create(
        namespace=namespace,
        subject=subject,
        category=category,
        key=key,
        value=value,
        version=version,
        status=status,
        confidence=confidence,
        importance=importance,
        created_at=created,
        retired_at=retired_at,
        embedding=embed_texts([text])[0],
        search_text=search_text(text),
        **extra,
    )


def fact_replace(old: FactVersion, *, value: Any, at: datetime | None = None, **extra: Any) -> FactVersion:
    """What an UPDATE merge does: supersede the old version, write the next, link them."""
    moment = at or timezone.now()
    FactVersion.objects.filter(pk=old.pk).update(status=FactStatus.SUPERSEDED, retired_at=moment)
    new = fact_put(
        namespace=old.namespace,
        subject=old.subject,
        category=old.category,
        key=old.key,
        value=value,
        version=old.version + 1,
        created_at=moment,
        **extra,
    )
    FactEdge.objects.create(source=new, target=old, edge_type=EdgeType.UPDATES)
    return new


def world_facts_put(namespace: Namespace, **facts: Any) -> dict[str, FactVersion]:
    """Domain facts of the subject "world", one per key, by key."""
    return {
        key: fact_put(namespace=namespace, subject="world", category="domain_fact", key=key, value=value)
        for key, value in facts.items()
    }


def world_scope(namespace: Namespace) -> Scope:
    """The subject "world" of the namespace, now."""
    return Scope(namespace_id=namespace.pk, subject="world", at=timezone.now())
