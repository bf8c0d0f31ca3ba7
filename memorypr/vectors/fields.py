"""The embedding column, and pgvector's text form of a vector as this project writes it."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy
from pgvector.django import VectorField


def vector_literal(embedding: Sequence[float] | numpy.ndarray) -> str:
    """pgvector's text form of a vector, for a `%s::vector` parameter.

    pgvector stores single precision, so each value is rounded to it here, as the server would
    round it, and written with the nine significant digits that give back that very value: the
    same vector as the full double's text, in half the characters, formatted in one C call
    (a third of the time of a `repr` per value).
    """
    values = numpy.asarray(embedding, dtype=numpy.float32).tolist()
    return _literal_format(len(values)) % tuple(values)


@lru_cache(maxsize=8)
def _literal_format(dimensions: int) -> str:
    return "[" + ",".join(["%.9g"] * dimensions) + "]"


class EmbeddingField(VectorField):
    """pgvector's field, writing a list or an array as `vector_literal` does.

    The stock field formats a list with a `str()` per value: 320 µs for 384 dimensions here,
    against 110 µs, for the same stored vector (the server keeps single precision either way).
    A merge writes one per operation.
    """

    def get_prep_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple | numpy.ndarray):
            return vector_literal(value)
        return super().get_prep_value(value)
