from __future__ import annotations

import pytest

from memorypr.vectors.encoders import OnnxEncoder


@pytest.fixture(scope="module")
def onnx_encoder() -> OnnxEncoder:
    """The ONNX Runtime encoder, loaded once per test module."""
    return OnnxEncoder.load(threads=1)
