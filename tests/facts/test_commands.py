from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactVersion
from memorypr.retrieval.candidates import full_text_candidates
from memorypr.vectors.embedding import embed_texts, fact_text
from memorypr.vectors.nearest import Scope
from memorypr.vectors.store import SEARCH_INDEX_NAME, vector_index_options
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


def _search_index_file() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_filenode(%s::regclass)", [SEARCH_INDEX_NAME])
        return int(cursor.fetchone()[0])


def test_reembed_reindex_applies_the_hnsw_settings_and_rebuilds_the_full_text_index(
    proposer, namespace, settings
):
    # given a merged fact, and the full-text index as the merge left it
    merged(proposer, namespace, create("home_city", "Beijing"))
    with connection.cursor() as cursor:
        # the merge's deferred checks run now, as at its commit: an index is not built over pending ones
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    before = _search_index_file()
    settings.MEMORYPR_HNSW_M = 12
    settings.MEMORYPR_HNSW_EF_CONSTRUCTION = 48
    out = StringIO()
    # when
    call_command("reembed", "--reindex", "--no-progress", stdout=out)
    # then both indexes are new, and the rewritten search text is found through the rebuilt one
    assert "HNSW graphs rebuilt (m=12, ef_construction=48) and full-text index rebuilt" in out.getvalue()
    assert vector_index_options() == {"m": "12", "ef_construction": "48"}
    assert _search_index_file() != before
    scope = Scope(namespace_id=namespace.pk, subject="user-1", at=timezone.now())
    [hit] = full_text_candidates(scope=scope, query="Beijing", limit=5)
    assert hit.key == "home_city"
