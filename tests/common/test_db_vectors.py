"""A query vector travels in pgvector's binary form and arrives as the vector its text names."""

from __future__ import annotations

import numpy
import psycopg
import pytest
from django.db import connection

from memorypr.common.db.vectors import VectorParam
from memorypr.vectors.fields import vector_literal

pytestmark = pytest.mark.django_db


def _vector(seed: int) -> numpy.ndarray:
    return numpy.random.default_rng(seed).standard_normal(384)


def test_a_vector_parameter_arrives_as_the_single_precision_vector_its_literal_names():
    # given a vector of doubles, as an encoder may hand it over
    values = _vector(1)
    # when it is bound as a parameter of a statement that casts it
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %(q)s::vector = %(text)s::vector, vector_dims(%(q)s::vector), (%(q)s::vector <=> %(text)s::vector)",
            {"q": VectorParam(values), "text": vector_literal(values)},
        )
        same, dimensions, distance = cursor.fetchone()
    # then the server holds the very vector the text form names
    assert (same, dimensions, distance) == (True, 384, 0.0)


def test_a_vector_parameter_is_sent_in_binary_apart_from_the_statement():
    # when it is bound on the server
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_query(), %(q)s::vector", {"q": VectorParam([0.5, -1.0, 2.0])})
        text, vector = cursor.fetchone()
    # then the statement carries a placeholder, and the value arrives whole
    assert "$1" in text and "0.5" not in text
    assert vector == "[0.5,-1,2]"


def test_a_client_bound_statement_writes_the_vector_as_its_literal():
    # when a statement is bound on the client (psycopg's ClientCursor, as an EXPLAIN of a
    # prepared statement's values is)
    values = _vector(2)
    with psycopg.ClientCursor(connection.connection) as cursor:
        cursor.execute("SELECT %s::vector = %s::vector", [VectorParam(values), vector_literal(values)])
        assert cursor.fetchone()[0] is True


def test_a_vector_has_one_dimension():
    with pytest.raises(ValueError, match="one dimension"):
        VectorParam(numpy.zeros((2, 3)))
