"""`bench merge`: each pass pays for its own embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from bench import merge as merge_bench
from memorypr.facts.services.plan import stored_key
from memorypr.pulls.models import Operation
from memorypr.vectors.embedding import embed_texts, embedding_backend_name, embedding_cache
from memorypr.vectors.shared_cache import shared_vectors_get, shared_vectors_put
from memorypr.vectors.store import embedding_texts

pytestmark = pytest.mark.django_db


def _workload_texts() -> list[str]:
    return embedding_texts(items=[(op.key, op.new_value) for ops in merge_bench._workload(0) for op in ops])


def test_a_pass_finds_no_vector_an_earlier_pass_left(monkeypatch):
    # given the workload's values embedded by an earlier pass, in this process's cache and in the shared store
    texts = _workload_texts()
    embed_texts(texts)
    shared_vectors_put(
        backend=embedding_backend_name(), vectors={text: np.ones(384, dtype=np.float32) for text in texts}
    )
    assert all(vector is not None for vector in embedding_cache().get_many(texts))
    seen: dict[str, object] = {}

    def merge(pulls):
        operations = Operation.objects.filter(pull__in=pulls)
        merged_texts = embedding_texts(items=[(stored_key(op), op.new_value) for op in operations])
        seen["cached"] = [v for v in embedding_cache().get_many(merged_texts) if v is not None]
        seen["shared"] = shared_vectors_get(backend=embedding_backend_name(), texts=merged_texts)
        seen["texts"] = merged_texts
        return [], 1.0

    monkeypatch.setattr(merge_bench, "_summary", lambda *args, **kwargs: {})
    # when a pass of one subject runs
    merge_bench._pass("cache-test", 1, merge)
    # then its merge embeds every value itself: none is waiting in either cache
    assert set(seen["texts"]) & set(texts)
    assert seen["cached"] == []
    assert seen["shared"] == {}
