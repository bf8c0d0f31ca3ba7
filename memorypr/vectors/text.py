"""Search text for PostgreSQL full-text search with the `simple` configuration.

PostgreSQL's parsers do not segment Chinese, so the application makes the tokens:
jieba words for CJK runs (search-engine mode, so 搬到深圳 yields 深圳), lower-cased
words for everything else. The same function builds documents and queries.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from memorypr.common.text import CJK_RUN

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=1)
def _jieba():  # type: ignore[no-untyped-def]
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def search_segmenter_warm() -> None:
    """Load jieba's dictionary now: about 0.9 s of CPU and 70 MB, paid once.

    Called in a server's master before it forks (gunicorn, the Celery worker), so that every
    process it starts shares the one copy, and none pays for it on the first Chinese text it
    reads: a request's, or a merge's while a batch waits behind it.
    """
    _jieba()


def search_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    for word in _WORD.findall(text.lower()):
        if CJK_RUN.search(word):
            for run in CJK_RUN.findall(word):
                tokens.extend(t for t in _jieba().cut_for_search(run) if t.strip())
                # single characters too, so one-character queries still match
                if len(run) > 1:
                    tokens.extend(run)
            rest = CJK_RUN.sub(" ", word).split()
            tokens.extend(rest)
        else:
            tokens.append(word)
    return tokens


def search_text(text: str) -> str:
    """Space-joined tokens, ready for to_tsvector('simple', ...)."""
    return " ".join(dict.fromkeys(search_tokens(text)))
