from __future__ import annotations

import pytest
from django.db import connection
from psycopg import _queries

from memorypr.common.db.statements import STATEMENT_LENGTH

pytestmark = pytest.mark.django_db


def _long_statement(parameters: int) -> str:
    # a statement longer than psycopg's own limit (4,096 characters), as retrieval's candidates are
    selects = " UNION ALL ".join(f"SELECT %(p{i})s::int AS value" for i in range(parameters))
    padding = "/*" + "x" * 5_000 + "*/"
    return f"SELECT sum(value) FROM ({selects}) AS v {padding}"


def test_a_long_statement_is_converted_once_and_then_read_from_psycopgs_cache():
    # given a statement of more than 4,096 characters and more than 50 parameters
    sql = _long_statement(60)
    params = {f"p{i}": i for i in range(60)}
    assert 4_096 < len(sql) <= STATEMENT_LENGTH
    # when it runs three times
    before = _queries._query2pg.cache_info()
    answers = []
    for _ in range(3):
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            answers.append(cursor.fetchone()[0])
    after = _queries._query2pg.cache_info()
    # then each run answers right, and only the first converted the text
    assert answers == [sum(range(60))] * 3
    assert after.hits - before.hits >= 2
    assert after.misses - before.misses <= 1
