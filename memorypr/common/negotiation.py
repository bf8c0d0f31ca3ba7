"""Content negotiation with a shortcut for what agents send.

DRF's negotiation parses the Accept header into media types and matches them against every
renderer, on every request: about 3 % of a web process's CPU under load. Almost every agent
sends no Accept header, `*/*` or `application/json`, and for those the answer is always the
first renderer when it is JSON. That case is answered directly; anything else (another type,
parameters, a `?format=`) goes through DRF's full negotiation, so answers and 406s are the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

JSON = "application/json"
_PLAIN_ACCEPTS = frozenset({"*/*", JSON})


class JsonFirstNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: Any = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        accept = request.META.get("HTTP_ACCEPT", "*/*").strip()
        if (
            accept in _PLAIN_ACCEPTS
            and format_suffix is None
            and renderers
            and renderers[0].media_type == JSON
            and self.settings.URL_FORMAT_OVERRIDE not in request._request.GET
        ):
            return renderers[0], JSON
        return super().select_renderer(request, renderers, format_suffix)
