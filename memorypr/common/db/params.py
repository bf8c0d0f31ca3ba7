"""The parameter types memorypr sends in binary: query vectors and lists of terms.

Each has a binary form (what a `%s` placeholder sends) and a text form (for what binds on the
client: psycopg's ClientCursor, `mogrify`).
"""

from __future__ import annotations

from psycopg import adapt

from memorypr.common.db.arrays import TextArrayParam, TextArrayParamDumper, TextArrayParamTextDumper
from memorypr.common.db.vectors import VectorParam, VectorParamDumper, VectorParamTextDumper

_DUMPERS: list[tuple[type, type[adapt.Dumper], type[adapt.Dumper]]] = [
    (VectorParam, VectorParamTextDumper, VectorParamDumper),
    (TextArrayParam, TextArrayParamTextDumper, TextArrayParamDumper),
]
_WITH_PARAMS: dict[int, adapt.AdaptersMap] = {}


def adapters_with_params(template: adapt.AdaptersMap) -> adapt.AdaptersMap:
    """The connection's adapters map, able to send each of these types (built once per template)."""
    if id(template) not in _WITH_PARAMS:
        adapters = adapt.AdaptersMap(template)
        for kind, text_dumper, binary_dumper in _DUMPERS:
            # Registered last, the binary form is what a `%s` placeholder sends.
            adapters.register_dumper(kind, text_dumper)
            adapters.register_dumper(kind, binary_dumper)
        _WITH_PARAMS[id(template)] = adapters
    return _WITH_PARAMS[id(template)]
