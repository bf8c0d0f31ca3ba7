"""The embedding column writes the very vector pgvector's own field writes, only faster."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from pgvector.django import VectorField

from memorypr.vectors.fields import EmbeddingField

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", [list, tuple, np.asarray])
def test_the_embedding_field_stores_the_vector_the_stock_field_stores(kind):
    # given 384 double-precision values, as a list, a tuple or an array
    values = np.random.default_rng(7).standard_normal(384).tolist()
    ours, stock = EmbeddingField(dimensions=384), VectorField(dimensions=384)
    # when each field prepares them and the server reads both as vectors
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s::vector = %s::vector, %s::vector::real[]",
            [
                ours.get_prep_value(kind(values)),
                stock.get_prep_value(values),
                ours.get_prep_value(kind(values)),
            ],
        )
        same, stored = cursor.fetchone()
    # then the stored vectors are equal: every value rounded to single precision, as the server would
    assert same is True
    assert np.array_equal(np.asarray(stored, dtype=np.float32), np.asarray(values, dtype=np.float32))


def test_the_embedding_field_leaves_a_missing_vector_missing():
    assert EmbeddingField(dimensions=384).get_prep_value(None) is None
