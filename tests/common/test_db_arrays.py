"""A list of strings travels as one text[] in binary and arrives as the array its items make."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from memorypr.common.db.arrays import TextArrayParam

pytestmark = pytest.mark.django_db

# What a question's terms may hold: accents, CJK, quotes, backslashes, braces, commas, spaces.
AWKWARD = ["home_city", "cédric_klapisch", "日本", 'say "hi"', "back\\slash", "{braces}", "a,b", " ", ""]


def test_a_text_array_parameter_arrives_as_the_array_of_its_items():
    # when the items are bound as one parameter, and as psycopg binds a list
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %(a)s::text[], %(a)s::text[] = %(plain)s::text[], pg_typeof(%(a)s)::text",
            {"a": TextArrayParam(AWKWARD), "plain": AWKWARD},
        )
        items, same, typed = cursor.fetchone()
    # then the server holds the same text array, typed as one
    assert (items, same, typed) == (AWKWARD, True, "text[]")


def test_an_empty_text_array_parameter_arrives_empty_and_matches_nothing():
    # when no items are bound
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT cardinality(%(a)s::text[]), 'x' = ANY(%(a)s), (SELECT count(*) FROM unnest(%(a)s::text[]))",
            {"a": TextArrayParam([])},
        )
        # then the array is empty: nothing is in it, and it unnests to no rows
        assert cursor.fetchone() == (0, False, 0)


def test_a_text_array_parameter_bound_on_the_client_names_the_same_array():
    # given a cursor that binds on the client (as `mogrify` does)
    client = psycopg.ClientCursor(connection.connection)
    # when the same items are inlined in the statement's text
    client.execute("SELECT %(a)s::text[]", {"a": TextArrayParam(AWKWARD)})
    # then the server parses them back to the same array
    assert client.fetchone()[0] == AWKWARD
