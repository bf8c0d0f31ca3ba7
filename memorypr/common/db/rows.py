"""Model instances from a written statement's rows, without a RawQuerySet.

A RawQuerySet looks up its columns, maps them to fields and builds its converters anew on
every run: on a hot read (a KPR polled by its proposer) that cost more than the statement.
`ModelRows` does that once per model: its `columns` go into the statement's select list, in
order, and `instances()` turns the rows into instances as the ORM would (the database
converters applied, `_state` set), extra trailing columns left for the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, signals
from django.db.models.base import ModelState

M = TypeVar("M", bound=Model)

Converter = Callable[[Any, Any, Any], Any]


class ModelRows(Generic[M]):
    def __init__(self, model: type[M], *, alias: str | None = None, deferred: Collection[str] = ()) -> None:
        """`deferred`: names of fields left out of `columns`, loaded on first access as after defer()."""
        self.model = model
        self.fields = [field for field in model._meta.concrete_fields if field.name not in deferred]
        self.field_names = [field.attname for field in self.fields]
        prefix = f"{alias}." if alias else ""
        self.columns = ", ".join(f'{prefix}"{field.column}"' for field in self.fields)
        self._converters: dict[str, list[tuple[int, list[Converter], Any]]] = {}

    def converters(self) -> list[tuple[int, list[Converter], Any]]:
        """(position, converters, column) of each field that has any, for this connection's backend."""
        return self._converters_for(connections[DEFAULT_DB_ALIAS])

    def _converters_for(self, db: Any) -> list[tuple[int, list[Converter], Any]]:
        vendor = db.vendor
        if vendor not in self._converters:
            found = []
            for position, field in enumerate(self.fields):
                column = field.get_col(self.model._meta.db_table)
                chain = db.ops.get_db_converters(column) + column.get_db_converters(db)
                if chain:
                    found.append((position, chain, column))
            self._converters[vendor] = found
        return self._converters[vendor]

    def instance(self, row: Sequence[Any]) -> M:
        """The instance of the row's first len(fields) values."""
        return self.instances([row])[0]

    def instances(self, rows: Iterable[Sequence[Any]]) -> list[M]:
        """The instances of the rows' first len(fields) values, in order."""
        # The default connection once for all rows: `django.db.connection` is a proxy that looks
        # it up again on each attribute (a few µs each, more than the rest of a row's work).
        db = connections[DEFAULT_DB_ALIAS]
        converters = self._converters_for(db)
        model, names, width, alias = self.model, self.field_names, len(self.fields), db.alias
        if signals.pre_init.has_listeners(model) or signals.post_init.has_listeners(model):
            made = []
            for row in rows:
                values = self._converted(row, width, converters, db)
                made.append(model.from_db(alias, names, values))
            return made
        instances = []
        for row in rows:
            values = self._converted(row, width, converters, db)
            # What Model.from_db() makes, made directly: __init__ sets each field through its
            # descriptor, and from_db() first finds each deferred field by a scan of the names, which
            # for a wide model cost more than the statement that read the row. A field left out of
            # `columns` is absent from __dict__, so it loads on first access, as after defer().
            instance = model.__new__(model)
            instance.__dict__.update(zip(names, values, strict=True))
            state = instance._state = ModelState()
            state.adding = False
            state.db = alias
            instances.append(instance)
        return instances

    @staticmethod
    def _converted(
        row: Sequence[Any], width: int, converters: list[tuple[int, list[Converter], Any]], db: Any
    ) -> list[Any]:
        values = list(row[:width])
        for position, chain, column in converters:
            value = values[position]
            for convert in chain:
                value = convert(value, column, db)
            values[position] = value
        return values
