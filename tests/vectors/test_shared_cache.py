from __future__ import annotations

import numpy as np
import pytest

from memorypr.vectors import embedding
from memorypr.vectors.embedding import embed_texts, shared_embeddings_fill
from memorypr.vectors.shared_cache import (
    shared_vectors_clear,
    shared_vectors_get,
    shared_vectors_put,
    shared_work_claim,
)


@pytest.fixture
def redis_cache(settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": settings.TEST_REDIS_URL,
                    "KEY_PREFIX": "shared-test"}
    }  # fmt: skip
    shared_vectors_clear()
    yield
    shared_vectors_clear()


def test_vectors_stored_by_one_process_are_read_back_by_text_and_backend(redis_cache):
    # given a vector stored for a text by the onnx backend
    vector = np.arange(384, dtype=np.float32) / 384
    shared_vectors_put(backend="onnx", vectors={"home city: Lisbon": vector})
    # when it is read back, with a text nobody stored and under another backend
    found = shared_vectors_get(backend="onnx", texts=["home city: Lisbon", "pet: cat"])
    other = shared_vectors_get(backend="torch", texts=["home city: Lisbon"])
    # then only the stored text comes back, with the same values, and never across backends
    assert list(found) == ["home city: Lisbon"] and np.array_equal(found["home city: Lisbon"], vector)
    assert other == {}


def test_work_is_claimed_once_within_the_claim_time(redis_cache):
    # given one helper that claimed two of three KPRs
    assert shared_work_claim(names=["a", "b", "c"], limit=2) == ["a", "b"]
    # when another helper claims from the same list
    # then it gets only what nobody claimed
    assert shared_work_claim(names=["a", "b", "c"], limit=2) == ["c"]
    assert shared_work_claim(names=["a", "b", "c"], limit=2) == []


def test_without_a_redis_cache_nothing_is_shared(settings):
    # given the tests' local-memory cache
    assert settings.CACHES["default"]["BACKEND"].endswith("LocMemCache")
    # when vectors are stored and work claimed
    shared_vectors_put(backend="onnx", vectors={"x": np.zeros(384, dtype=np.float32)})
    # then nothing is found, and nothing can be claimed (nobody else could use it)
    assert shared_vectors_get(backend="onnx", texts=["x"]) == {}
    assert shared_work_claim(names=["a"], limit=1) == []


def test_a_shared_embedding_reads_what_another_process_embedded_instead_of_running_the_model(
    redis_cache, monkeypatch
):
    # given a text that another process embedded into the shared store, and not this process
    text = "favourite tea: a strong 普洱 in the morning"
    assert shared_embeddings_fill([text]) == 1
    expected = embed_texts([text])[0]
    embedding.embedding_cache().__init__(embedding.embedding_cache().maxsize)  # this process forgets it
    calls: list[list[str]] = []
    backend = embedding._backend()
    real = backend.encode
    monkeypatch.setattr(backend, "encode", lambda texts, **kw: calls.append(texts) or real(texts, **kw))
    # when it is embedded with the shared store, next to a new text
    got = embed_texts([text, "pet: a small dog"], shared=True)
    # then the model ran for the new text only, and the shared vector is the one the model gives
    assert calls == [["pet: a small dog"]]
    assert np.allclose(got[0], expected, atol=0) and np.allclose(got[1], embed_texts(["pet: a small dog"])[0])
    # and the new one was left for the others
    assert list(shared_vectors_get(backend=backend.name, texts=["pet: a small dog"])) == ["pet: a small dog"]
