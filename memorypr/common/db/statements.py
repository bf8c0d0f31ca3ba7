"""psycopg's cache of converted statements, widened to the long statements this project runs.

Before sending a statement, psycopg turns its `%(name)s` placeholders into `$n` with a regular
expression. It keeps the result in an LRU cache (128 texts), but only for texts of at most
4,096 characters with at most 50 parameters: longer ones are split again on every run.
Retrieval's statement of candidates (4.6 kB, all channels in one round trip) was one of them,
and splitting it cost 0.7 ms of the 4 ms of Python of a retrieval at 100k facts; a merge's bulk
inserts, with hundreds of parameters, were others.

Their texts come from a few fixed shapes, so caching them is bounded: at most 128 texts of at
most STATEMENT_LENGTH characters. psycopg reads both limits at every conversion.
"""

from __future__ import annotations

from psycopg import _queries

STATEMENT_LENGTH = 32_768
STATEMENT_PARAMS = 2_000


def statement_cache_widen() -> None:
    """Let psycopg cache the conversion of statements up to STATEMENT_LENGTH / STATEMENT_PARAMS."""
    _queries.MAX_CACHED_STATEMENT_LENGTH = max(_queries.MAX_CACHED_STATEMENT_LENGTH, STATEMENT_LENGTH)
    _queries.MAX_CACHED_STATEMENT_PARAMS = max(_queries.MAX_CACHED_STATEMENT_PARAMS, STATEMENT_PARAMS)
