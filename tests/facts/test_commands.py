from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactVersion
from memorypr.vectors.embedding import embed_texts, fact_text
from memorypr.vectors.store import vector_index_options
from tests.facts.kprs import create, merged, update

pytestmark = pytest.mark.django_db


def test_reembed_rebuilds_embeddings_and_search_text(proposer, namespace, capsys):
    # given merged facts whose vectors were lost
    merged(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat"))
    merged(proposer, namespace, update("home_city", "Beijing", "上个月我举家搬迁到了深圳"))
    FactVersion.objects.update(embedding=None, search_text="")
    out = StringIO()
    # when
    call_command("reembed", "--batch-size", "2", stdout=out)
    # then every version, retired ones too, has them again, with a progress bar on the way
    assert "re-embedded 3 fact version(s)" in out.getvalue()
    assert "reembed: 100%" in capsys.readouterr().err
    for fact in FactVersion.objects.all():
        [expected] = embed_texts([fact_text(key=fact.key, value=fact.value)])
        assert list(fact.embedding) == pytest.approx(expected, abs=1e-5)
    assert "深圳" in FactVersion.objects.get(key="home_city", version=2).search_text.split()
    event = AuditEvent.objects.get(event_type="vectors.reembedded")
    assert event.payload == {"versions": 3, "missingOnly": False, "index": None}


def test_reembed_missing_only_and_one_namespace(proposer, namespace):
    merged(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat"))
    FactVersion.objects.filter(key="pet").update(embedding=None)
    out = StringIO()
    call_command("reembed", "--missing-only", "--namespace", "demo", "--no-progress", stdout=out)
    assert "re-embedded 1 fact version(s)" in out.getvalue()
    assert not FactVersion.objects.filter(embedding__isnull=True).exists()
    with pytest.raises(CommandError, match="unknown namespace"):
        call_command("reembed", "--namespace", "nowhere")


def test_reembed_reindex_applies_the_hnsw_settings(db, settings):
    settings.MEMORYPR_HNSW_M = 12
    settings.MEMORYPR_HNSW_EF_CONSTRUCTION = 48
    out = StringIO()
    call_command("reembed", "--reindex", "--no-progress", stdout=out)
    assert "HNSW index rebuilt (m=12, ef_construction=48)" in out.getvalue()
    assert vector_index_options() == {"m": "12", "ef_construction": "48"}
