"""Checking an agent's draft answer for content that only a retired fact supports (docs/architecture.md §6).

Each sentence is compared with the subject's retired versions (superseded, stale,
retracted, expired) and with what is active now, two ways:
- value: the sentence names a retired value ("Beijing") that no active fact holds and
  does not also name its replacement ("moved from Beijing to Shenzhen" is fine);
- meaning: its embedding is close to a retired version (≥ MEMORYPR_VERIFY_MIN_SIMILARITY)
  and closer to it than to any active fact by MEMORYPR_VERIFY_MARGIN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.common.db.vectors import VectorParam
from memorypr.common.text import CJK_CHAR
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.retrieval.conf import conf
from memorypr.vectors.embedding import embed_texts, value_text
from memorypr.vectors.nearest import Scope, vector_candidates

RETIRED = (FactStatus.SUPERSEDED, FactStatus.STALE, FactStatus.RETRACTED, FactStatus.EXPIRED)
MAX_SENTENCES = 60
MAX_RETIRED_VALUES = 2000
MAX_ACTIVE = 20000
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_WORD = re.compile(r"\w")


@dataclass
class VerifyFlag:
    sentence: str
    index: int
    start: int
    end: int
    reason: str
    fact: FactVersion
    replacement: FactVersion | None
    matched_value: str | None = None
    similarity: float | None = None
    best_active_similarity: float | None = None


@dataclass
class Verification:
    namespace: Namespace
    subject: str
    sentences_checked: int
    flags: list[VerifyFlag] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.flags


def sentences_split(text: str) -> list[tuple[int, int, str]]:
    out = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group().strip()
        if len(_WORD.findall(sentence)) >= 2:
            start = match.start() + (len(match.group()) - len(match.group().lstrip()))
            out.append((start, start + len(sentence), sentence))
    return out[:MAX_SENTENCES]


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    text = value_text(value).strip()
    long_enough = len(text) >= 2 if CJK_CHAR.search(text) else len(text) >= 3
    return text if long_enough else None


def _mentions(sentence: str, value: str) -> bool:
    if CJK_CHAR.search(value):
        return value in sentence
    return re.search(r"(?<!\w)" + re.escape(value.lower()) + r"(?!\w)", sentence.lower()) is not None


def _replacement(fact: FactVersion, active_by_key: dict[tuple[str, str], FactVersion]) -> FactVersion | None:
    """The active version of the same key: what a superseded fact now reads as."""
    if fact.status != FactStatus.SUPERSEDED:
        return None
    return active_by_key.get((fact.category, fact.key))


def _nearest_retired(*, namespace_id: int, subject: str, embedding: list[float]) -> tuple[int, float] | None:
    sql = """
        SELECT id, 1 - (embedding <=> %(q)s::vector) FROM facts_factversion
        WHERE namespace_id = %(ns)s AND subject = %(subject)s AND status = ANY(%(retired)s)
          AND embedding IS NOT NULL
        ORDER BY embedding <=> %(q)s::vector LIMIT 1
    """
    params: dict[str, Any] = {
        "q": VectorParam(embedding),
        "ns": namespace_id,
        "subject": subject,
        "retired": list(RETIRED),
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return (int(row[0]), float(row[1])) if row else None


def draft_verify(*, namespace: Namespace, subject: str, text: str) -> Verification:
    now = timezone.now()
    sentences = sentences_split(text)
    result = Verification(namespace=namespace, subject=subject, sentences_checked=len(sentences))
    if not sentences:
        return result
    scope = Scope(namespace_id=namespace.pk, subject=subject, at=now)
    base = FactVersion.objects.filter(namespace=namespace, subject=subject).defer("embedding", "search_text")
    retired = list(base.filter(status__in=RETIRED).order_by("-retired_at", "-id")[:MAX_RETIRED_VALUES])
    if not retired:
        return result
    active = list(base.filter(status=FactStatus.ACTIVE).order_by("-id")[:MAX_ACTIVE])
    active_by_key = {(f.category, f.key): f for f in active}
    active_values = {t.lower() for f in active if (t := _scalar_text(f.value))}
    retired_by_id = {f.pk: f for f in retired}

    min_similarity = float(conf("MEMORYPR_VERIFY_MIN_SIMILARITY"))
    margin = float(conf("MEMORYPR_VERIFY_MARGIN"))
    embeddings = embed_texts([s for _, _, s in sentences])
    for index, ((start, end, sentence), embedding) in enumerate(zip(sentences, embeddings, strict=True)):
        flagged: set[int] = set()
        for fact in retired:
            value = _scalar_text(fact.value)
            if (
                not value
                or value.lower() in active_values
                or fact.pk in flagged
                or not _mentions(sentence, value)
            ):
                continue
            replacement = _replacement(fact, active_by_key)
            replacement_value = _scalar_text(replacement.value) if replacement else None
            if replacement_value and _mentions(sentence, replacement_value):
                continue
            flagged.add(fact.pk)
            result.flags.append(
                VerifyFlag(sentence, index, start, end, "value", fact, replacement, matched_value=value)
            )
        if flagged:
            continue
        nearest = _nearest_retired(namespace_id=namespace.pk, subject=subject, embedding=embedding)
        if nearest is None or nearest[1] < min_similarity:
            continue
        best_active = vector_candidates(scope=scope, embedding=embedding, limit=1)
        active_similarity = best_active[0][1] if best_active else 0.0
        fact = retired_by_id.get(nearest[0]) or base.get(pk=nearest[0])
        if nearest[1] >= active_similarity + margin:
            result.flags.append(
                VerifyFlag(
                    sentence,
                    index,
                    start,
                    end,
                    "meaning",
                    fact,
                    _replacement(fact, active_by_key),
                    similarity=nearest[1],
                    best_active_similarity=active_similarity,
                )
            )
    return result
