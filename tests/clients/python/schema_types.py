"""The OpenAPI schema's types and the client's annotations, reduced to comparable sets.

A type is reduced to a frozenset of atoms: a Python type (`int`, `str`, a model class), `None`
for null, `ANY` for "anything", or `("list", atoms)` / `"dict"` for containers.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from datetime import datetime
from typing import Any

from memorypr_client import models

ANY = "any"
Atoms = frozenset[Any]

MODEL_OF_COMPONENT: dict[str, type] = {}
for _cls in models.MODELS:
    # The first model of a component is the one its references decode to (EvidenceIn before Evidence).
    MODEL_OF_COMPONENT.setdefault(_cls.__schema__, _cls)  # type: ignore[attr-defined]


def schema_atoms(prop: dict[str, Any], components: dict[str, Any]) -> Atoms:
    atoms: set[Any] = set()
    if prop.get("nullable"):
        atoms.add(None)
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[1]
        target = components[name]
        if "enum" in target:
            return frozenset(atoms | {str})
        if name.startswith("Paginated"):
            return frozenset(atoms | {models.Page})
        return frozenset(atoms | {MODEL_OF_COMPONENT.get(name, f"unmapped component {name}")})
    for combinator in ("allOf", "oneOf", "anyOf"):
        for option in prop.get(combinator, []):
            atoms |= schema_atoms(option, components)
    if any(c in prop for c in ("allOf", "oneOf", "anyOf")):
        return frozenset(atoms)
    if "enum" in prop:
        return frozenset(atoms | {str})
    kind = prop.get("type")
    if kind is None:
        return frozenset(atoms | {ANY})
    if kind == "string":
        atoms.add(datetime if prop.get("format") == "date-time" else str)
    elif kind == "integer":
        atoms.add(int)
    elif kind == "number":
        atoms.add(float)
    elif kind == "boolean":
        atoms.add(bool)
    elif kind == "array":
        atoms.add(("list", schema_atoms(prop.get("items", {}), components)))
    elif kind == "object":
        atoms.add("dict")
    return frozenset(atoms)


def annotation_atoms(tp: Any) -> Atoms:
    if tp is Any:
        return frozenset({ANY})
    if tp is type(None) or tp is None:
        return frozenset({None})
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        out: set[Any] = set()
        for arg in typing.get_args(tp):
            out |= annotation_atoms(arg)
        return frozenset(out)
    if origin is list:
        return frozenset({("list", annotation_atoms(typing.get_args(tp)[0]))})
    if origin is dict:
        return frozenset({"dict"})
    return frozenset({tp})


def covers(wider: Atoms, narrower: Atoms) -> bool:
    """Whether every value of `narrower` is a value of `wider`."""
    if ANY in wider or ANY in narrower:
        return True
    for atom in narrower:
        if atom in wider:
            continue
        if atom is int and float in wider:
            continue  # JSON numbers: a float field takes an integer
        if atom is datetime and str in wider:
            continue  # a date-time is a string on the wire
        if atom is str and datetime in wider:
            continue
        if isinstance(atom, tuple) and any(isinstance(w, tuple) and covers(w[1], atom[1]) for w in wider):
            continue
        return False
    return True


def model_fields(cls: type) -> dict[str, tuple[Atoms, bool]]:
    """wire name -> (atoms, required) of a model class."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out[models.wire_name(f.name)] = (annotation_atoms(hints[f.name]), required)
    return out
