"""Filling a relation from rows already read, as prefetch_related() or select_related() would.

Hot read paths (every API request's token, a KPR read by its proposer) read their rows in one
written statement each; this hands those rows to the model so that `instance.<set>.all()` and
the serializers read no more, exactly as after prefetch_related().
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Model


def prefetched_set(instance: Model, name: str, objects: Iterable[Model]) -> None:
    """`instance.<name>.all()` returns `objects` from now on, without a query."""
    rows = list(objects)
    for row in rows:
        row._state.adding = False
        row._state.db = instance._state.db
    queryset: Any = getattr(instance, name).all()
    queryset._result_cache = rows
    queryset._prefetch_done = True
    cache: dict[str, Any] = instance.__dict__.setdefault("_prefetched_objects_cache", {})
    cache[name] = queryset


def related_set(instance: Model, name: str, related: Model) -> None:
    """`instance.<name>` returns `related` from now on, without a query, as after select_related()."""
    instance._meta.get_field(name).set_cached_value(instance, related)  # type: ignore[union-attr]
