"""Each app declares its tunable MEMORYPR_* numbers once, with their defaults, in its `conf.py`.

Values are read from settings when used, not at import, so a deployment (or a test) changes
them without a restart of the code that reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings


class AppSettings:
    def __init__(self, defaults: Mapping[str, Any]) -> None:
        self.defaults = dict(defaults)

    def __call__(self, name: str) -> Any:
        """The setting's value, or its declared default; an undeclared name is a KeyError."""
        return getattr(settings, name, self.defaults[name])
