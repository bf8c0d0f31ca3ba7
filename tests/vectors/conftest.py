from __future__ import annotations

from collections.abc import Iterator

import pytest

from memorypr.vectors.embedding import embedding_reset
from memorypr.vectors.encoders import OnnxEncoder

# The settings that choose and size the embedding backends.
BACKEND_SETTINGS = (
    "MEMORYPR_EMBEDDING_BACKEND",
    "MEMORYPR_EMBEDDING_ONNX_PATH",
    "MEMORYPR_EMBEDDING_CACHE_SIZE",
    "MEMORYPR_EMBEDDING_BULK",
    "MEMORYPR_EMBEDDING_BULK_MIN_TEXTS",
)


@pytest.fixture(scope="module")
def onnx_encoder() -> OnnxEncoder:
    """The ONNX Runtime encoder, loaded once per test module."""
    return OnnxEncoder.load(threads=1)


@pytest.fixture
def fresh_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test reads the settings anew; the default backends are restored for the tests after it."""
    for name in BACKEND_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    embedding_reset()
    yield
    embedding_reset()
