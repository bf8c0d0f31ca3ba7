from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    """The schema the server serves at /api/schema/, generated in-process."""
    schema: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    return schema
