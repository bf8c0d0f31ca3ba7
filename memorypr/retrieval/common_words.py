"""Which of a subject's words its active facts hold too often for a full-text search of the whole subject.

In a subject searched through the HNSW index (tens of thousands of facts), a full-text phase
made only of such words would list thousands of matches in the index, then rank an arbitrary
MEMORYPR_FTS_MAX_MATCHES of them: the first found, not the best. Retrieval searches such a
phase among the vector channel's rows instead, where it tells which of the nearest facts share
the query's words (memorypr.retrieval.candidates). A phase with one word that is not common
still searches the whole subject: a rare name is what the text channel is there to find.

The words come from the statistics ANALYZE keeps of the text index (facts migration 0018),
kept for a minute in this process: they move as slowly as the statistics do.
"""

from __future__ import annotations

import time

from django.db import connection

from memorypr.retrieval.conf import conf
from memorypr.vectors.nearest import Scope

TTL_SECONDS = 60.0
_CACHE_MAX = 10_000
# (namespace id, subject, fewest rows) -> (when read, the subject's common words)
_WORDS: dict[tuple[int, str, int], tuple[float, frozenset[str]]] = {}


def _common_words_read(*, namespace_id: int, subject: str, min_rows: int) -> frozenset[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT fact_text_common_words(%s, %s, %s)", [namespace_id, subject, min_rows])
        return frozenset(row[0] for row in cursor.fetchall())


def subject_common_words(*, scope: Scope, now: float | None = None) -> frozenset[str]:
    """The words that at least MEMORYPR_FTS_MAX_MATCHES active facts of the subject hold (as
    the text index's statistics estimate it); empty before the first ANALYZE."""
    min_rows = int(conf("MEMORYPR_FTS_MAX_MATCHES"))
    key = (scope.namespace_id, scope.subject, min_rows)
    at = time.monotonic() if now is None else now
    known = _WORDS.get(key)
    if known is not None and at - known[0] < TTL_SECONDS:
        return known[1]
    words = _common_words_read(namespace_id=scope.namespace_id, subject=scope.subject, min_rows=min_rows)
    if len(_WORDS) >= _CACHE_MAX:
        _WORDS.clear()
    _WORDS[key] = (at, words)
    return words


def common_words_forget() -> None:
    """Read the statistics again at the next retrieval (after an ANALYZE, in tests)."""
    _WORDS.clear()
