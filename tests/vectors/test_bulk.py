from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from memorypr.vectors import bulk, embedding
from memorypr.vectors.bulk import Bf16Encoder, bulk_encoder_load, bulk_wanted, cpu_flags
from memorypr.vectors.embedding import (
    embed_texts,
    embedding_bulk_name,
)
from memorypr.vectors.encoders import EMBEDDING_DIMENSIONS, Encoder, OnnxEncoder
from tests.vectors.texts import AGREEMENT_TEXTS

TEXTS = [*AGREEMENT_TEXTS, "I just got back from walking my two dogs, they love the beach."]


pytestmark = pytest.mark.usefixtures("fresh_backend")


@pytest.fixture(scope="module")
def bf16_encoder() -> Bf16Encoder:
    return Bf16Encoder.load(threads=1)


class Counting:
    """Wraps an encoder and counts the texts it was given."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.name = inner.name
        self.texts = 0

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.encode(texts, batch_size=batch_size)


def test_bf16_vectors_agree_with_float32_onnx(bf16_encoder: Bf16Encoder, onnx_encoder: OnnxEncoder) -> None:
    # when
    fast = bf16_encoder.encode(TEXTS, batch_size=3)
    exact = onnx_encoder.encode(TEXTS, batch_size=3)
    # then
    assert fast.shape == (len(TEXTS), EMBEDDING_DIMENSIONS)
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert float((fast * exact).sum(axis=1).min()) >= bulk.MIN_COSINE
    assert bf16_encoder.agreement() >= bulk.MIN_COSINE


def test_auto_wants_the_bulk_encoder_only_where_the_cpu_multiplies_bfloat16(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # given
    with_amx = tmp_path / "amx"
    with_amx.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f amx_bf16 amx_tile\n")
    with_avx512_bf16 = tmp_path / "avx512"
    with_avx512_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 avx512_vnni\n")
    without = tmp_path / "plain"
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 fma avx512f avx512_vnni\n")
    # when auto is asked for
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "auto")
    # then
    cases = ((with_amx, True), (with_avx512_bf16, True), (without, False), (tmp_path / "missing", False))
    for cpuinfo, wanted in cases:
        monkeypatch.setattr(bulk, "cpu_flags", lambda cpuinfo=cpuinfo: cpu_flags(cpuinfo))
        assert bulk_wanted() is wanted
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "bf16")
    assert bulk_wanted() is True
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "off")
    monkeypatch.setattr(bulk, "cpu_flags", lambda: frozenset({"amx_bf16"}))
    assert bulk_wanted() is False


def test_the_bulk_encoder_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # given a CPU with AMX and no setting
    monkeypatch.delenv("MEMORYPR_EMBEDDING_BULK", raising=False)
    monkeypatch.setattr(bulk, "cpu_flags", lambda: frozenset({"amx_bf16"}))
    # then it is not wanted, and none is loaded
    assert bulk_wanted() is False
    assert embedding_bulk_name() is None


def test_an_unknown_setting_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "int4")
    with pytest.raises(ValueError, match="MEMORYPR_EMBEDDING_BULK"):
        bulk_wanted()


def test_large_bulk_batches_go_to_the_bulk_encoder_and_the_rest_to_the_main_backend(
    monkeypatch: pytest.MonkeyPatch, bf16_encoder: Bf16Encoder, onnx_encoder: OnnxEncoder
) -> None:
    # given: both encoders counted, no cache, a bulk batch from four texts on
    monkeypatch.setenv("MEMORYPR_EMBEDDING_CACHE_SIZE", "0")
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK_MIN_TEXTS", "4")
    fast, main = Counting(bf16_encoder), Counting(onnx_encoder)
    monkeypatch.setattr(embedding, "_bulk_backend", lambda: fast)
    monkeypatch.setattr(embedding, "_backend", lambda: main)
    # when
    large = embed_texts(TEXTS[:4], bulk=True)
    small = embed_texts(TEXTS[:3], bulk=True)
    query = embed_texts(TEXTS[:5])
    # then
    assert (fast.texts, main.texts) == (4, 3 + 5)
    assert len(large) == 4 and len(small) == 3 and len(query) == 5
    assert float(np.dot(large[0], query[0])) >= bulk.MIN_COSINE


def test_with_the_bulk_encoder_off_everything_goes_to_the_main_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "off")
    # when
    vectors = embed_texts([f"owns {n} bikes" for n in range(20)], bulk=True)
    # then
    assert embedding_bulk_name() is None
    assert len(vectors) == 20


def test_forced_bf16_is_loaded_and_used(monkeypatch: pytest.MonkeyPatch, onnx_encoder: OnnxEncoder) -> None:
    # given
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "bf16")
    texts = [f"lives in city number {n} with {n} cats" for n in range(10)]
    # when
    vectors = np.asarray(embed_texts(texts, bulk=True))
    # then
    assert embedding_bulk_name() == "torch-bf16"
    assert float((vectors * onnx_encoder.encode(texts, batch_size=10)).sum(axis=1).min()) >= bulk.MIN_COSINE


def test_a_bulk_encoder_that_disagrees_with_float32_is_not_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # given: a bf16 graph whose vectors drift
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "bf16")
    monkeypatch.setattr(Bf16Encoder, "agreement", lambda self: 0.97)
    # when
    with caplog.at_level(logging.WARNING, logger="memorypr.vectors.bulk"):
        encoder = bulk_encoder_load(threads=1)
    # then
    assert encoder is None
    assert "0.97000" in caplog.text


def test_a_bulk_encoder_that_fails_to_load_leaves_the_main_backend(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # given
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BULK", "bf16")

    def broken(cls: type[Bf16Encoder], *, threads: int) -> Bf16Encoder:
        raise OSError("no model here")

    monkeypatch.setattr(Bf16Encoder, "load", classmethod(broken))
    # when
    with caplog.at_level(logging.WARNING, logger="memorypr.vectors.bulk"):
        vectors = embed_texts([f"owns {n} bikes" for n in range(12)], bulk=True)
    # then
    assert embedding_bulk_name() is None
    assert len(vectors) == 12
    assert "bulk encoder is unavailable" in caplog.text
