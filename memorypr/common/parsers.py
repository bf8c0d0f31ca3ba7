"""The API's JSON parser: strict, so that bad input is a 4xx naming the field, never a 500.

`json.loads` alone recurses once per nesting level (a few thousand `[` are a RecursionError),
accepts `NaN`/`Infinity`, turns `1e999999` into `inf`, raises a bare ValueError past Python's
4,300-digit integer limit, and lets through `\\u0000` and lone surrogates, which PostgreSQL
and psycopg refuse only when the row is written. Each of those is refused here, before any
view sees the body.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import BaseParser

from memorypr.common.errors import InvalidBody, PayloadTooLarge

MAX_DEPTH = 64
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
MAX_ERRORS = 20

# A JSON string, escapes included: what lies between its quotes is no structure. An unterminated
# one runs to the end, so that every match succeeds and the scan stays linear (json.loads then
# reports the unterminated string).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# NUL: PostgreSQL text and jsonb refuse it. Lone surrogates: no UTF-8 encoding exists for them.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Refused:
    """Stands in for a number the parser refuses, so the walk can report where it was."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _parse_int(text: str) -> int | _Refused:
    digits = text.lstrip("-")
    # Checked before int(): past 4,300 digits int() raises, and long ones cost quadratic time.
    if len(digits) > 19:
        return _Refused(f"Integer with {len(digits)} digits; integers must fit in 64 bits.")
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        return _Refused("Integer out of range; integers must fit in 64 bits.")
    return value


def _parse_float(text: str) -> float | _Refused:
    value = float(text)
    if math.isinf(value):
        return _Refused(f"Number {text[:40]}{'...' if len(text) > 40 else ''} overflows a float.")
    return value


def _parse_constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number.")


def nests_deeper_than(text: str, limit: int) -> bool:
    """Whether arrays and objects nest past `limit`, found without recursion (strings skipped)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # too few brackets to nest that deep, whatever the strings hold
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_BRACKET_STEP[char] for char in brackets), default=0) > limit


def _key_path(path: str, key: str) -> str:
    shown = key if re.fullmatch(r"[A-Za-z_][\w]*", key) else json.dumps(key)
    return f"{path}.{shown}" if path else shown


def _string_problem(value: str) -> str | None:
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    if found.group() == "\x00":
        return "NUL characters are not allowed."
    return "Lone surrogate characters are not allowed (strings must be valid Unicode)."


def unstorable_values(data: Any) -> list[dict[str, str]]:
    """Field paths of refused numbers and of strings PostgreSQL cannot store, walked iteratively."""
    errors: list[dict[str, str]] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack and len(errors) < MAX_ERRORS:
        path, value = stack.pop()
        if isinstance(value, _Refused):
            errors.append({"field": path or "body", "message": value.message})
        elif isinstance(value, str):
            problem = _string_problem(value)
            if problem:
                errors.append({"field": path or "body", "message": problem})
        elif isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                child = _key_path(path, key)
                problem = _string_problem(key)
                if problem:
                    errors.append({"field": child, "message": f"Field name: {problem}"})
                stack.append((child, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value))))
    return errors


def loads_strict(raw: bytes) -> Any:
    """Decode a JSON body or raise InvalidBody naming what is wrong and where."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"Body is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})."
        raise InvalidBody([{"field": "body", "message": message}]) from None
    if nests_deeper_than(text, MAX_DEPTH):
        raise InvalidBody([{"field": "body", "message": f"JSON nesting deeper than {MAX_DEPTH} levels."}])
    try:
        data = json.loads(
            text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
        )
    except json.JSONDecodeError as exc:
        raise InvalidBody([{"field": "body", "message": f"Malformed JSON: {exc}."}]) from None
    except (ValueError, RecursionError) as exc:  # belt and braces: the checks above should prevent these
        raise InvalidBody([{"field": "body", "message": f"Unreadable JSON: {exc}"}]) from None
    errors = unstorable_values(data)
    if errors:
        raise InvalidBody(errors)
    return data


class StrictJSONParser(BaseParser):
    """JSON bodies for the API: an object, UTF-8, at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes.

    Not a JSONParser subclass on purpose: DRF hands JSONParser `request.body`, whose size check
    raises Django's RequestDataTooBig (an HTML 400); reading the stream here answers 413 JSON.
    """

    media_type = "application/json"

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        if request is not None and limit is not None:
            declared = request.META.get("CONTENT_LENGTH") or "0"
            if declared.isdigit() and int(declared) > limit:
                raise PayloadTooLarge.over_limit(int(declared))
        raw = b"" if stream is None else stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge.over_limit()
        if not raw.strip():
            return {}
        data = loads_strict(raw)
        if not isinstance(data, dict):
            kind = "an array" if isinstance(data, list) else "a scalar"
            raise InvalidBody([{"field": "body", "message": f"Expected a JSON object, got {kind}."}])
        return data
