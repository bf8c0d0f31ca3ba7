from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.facts.models import EdgeType, FactEdge, FactStatus
from memorypr.retrieval.candidates import full_text_candidates
from memorypr.retrieval.scoring import final_score
from memorypr.retrieval.selectors import retrieve
from memorypr.vectors.embedding import embed_text
from memorypr.vectors.nearest import Scope, vector_candidates
from tests.retrieval.factories import fact_put, fact_replace

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    return namespace_get_or_create(name="demo")


def _values(found):
    return [item.fact.value for item in found.results]


def test_update_serves_the_new_value_and_never_the_old(demo):
    # given: the user lived in Beijing, then moved to Shenzhen
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing")
    shenzhen = fact_replace(beijing, value="Shenzhen")
    fact_put(namespace=demo, key="favorite_drink", value="green tea")
    # when
    found = retrieve(namespace=demo, subject="user-1", query="where does the user live", top_k=5)
    # then
    assert _values(found)[0] == "Shenzhen"
    assert "Beijing" not in _values(found)
    top = found.results[0]
    assert top.fact.pk == shenzhen.pk
    assert top.updates is not None and top.updates.pk == beijing.pk
    assert "home city: Shenzhen (this updates an older memory: home city: Beijing" in found.context
    assert "no longer true" in found.context


def test_chinese_query_finds_the_chinese_fact_by_full_text(demo):
    # given
    fact_put(namespace=demo, key="home_city", value="上个月搬到了深圳")
    fact_put(namespace=demo, key="favorite_food", value="喜欢吃火锅")
    # when
    found = retrieve(namespace=demo, subject="user-1", query="深圳", top_k=1)
    # then
    assert _values(found) == ["上个月搬到了深圳"]
    assert found.results[0].text_rank == 1


def test_exact_key_match_ranks_first_in_its_list(demo):
    # given
    fact = fact_put(namespace=demo, key="blood_type", value="O negative")
    fact_put(namespace=demo, key="favorite_color", value="blue")
    # when
    found = retrieve(namespace=demo, subject="user-1", query="blood type", top_k=2)
    # then
    assert found.results[0].fact.pk == fact.pk
    assert found.results[0].exact_rank == 1


def _world(namespace, facts: dict[str, str]) -> dict[str, object]:
    return {
        key: fact_put(namespace=namespace, subject="world", category="domain_fact", key=key, value=value)
        for key, value in facts.items()
    }


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("What is the official language of Japan?", "japan.official_language"),
        ("What is the capital of Japan?", "japan.capital"),
        ("Which country was basketball created in?", "basketball.country_of_origin"),
        ("Who is the developer of Windows Server 2008?", "windows_server_2008.developer"),
    ],
)
def test_a_question_naming_the_value_of_other_facts_ranks_the_fact_about_the_asked_entity_first(
    demo, query, asked
):
    # given: Japan and basketball are the entities of some facts and the values of others;
    # windows_server is a name inside windows_server_2008
    facts = _world(
        demo,
        {
            "sumo.country_of_origin": "Japan",
            "ayumi_hamasaki.country_of_citizenship": "Japan",
            "nintendo.country_of_origin": "Japan",
            "japan.official_language": "Japanese",
            "japan.capital": "Tokyo",
            "brazil.official_language": "Portuguese",
            "lebron_james.sport": "basketball",
            "michael_jordan.sport": "basketball",
            "tunisia_national_basketball_team.sport": "basketball",
            "basketball.country_of_origin": "United States of America",
            "basketball.creator": "James Naismith",
            "windows_server.developer": "Microsoft",
            "windows_server_2008.developer": "BlackBerry",
        },
    )
    # when
    found = retrieve(namespace=demo, subject="world", query=query, top_k=5)
    # then
    assert found.results[0].fact.pk == facts[asked].pk
    assert found.results[0].exact_rank == 1


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("日本的官方语言是什么？", "日本.官方语言"),
        ("日本的首都是哪里？", "日本.首都"),
        ("篮球起源于哪个国家？", "篮球.起源国家"),
    ],
)
def test_a_chinese_question_naming_the_value_of_other_facts_ranks_the_asked_entity_first(demo, query, asked):
    # given
    facts = _world(
        demo,
        {
            "相扑.起源国家": "日本",
            "滨崎步.国籍": "日本",
            "任天堂.起源国家": "日本",
            "日本.官方语言": "日语",
            "日本.首都": "东京",
            "巴西.官方语言": "葡萄牙语",
            "姚明.运动": "篮球",
            "易建联.运动": "篮球",
            "篮球.起源国家": "美国",
        },
    )
    # when
    found = retrieve(namespace=demo, subject="world", query=query, top_k=5)
    # then
    assert found.results[0].fact.pk == facts[asked].pk


def test_a_question_about_a_value_still_finds_the_facts_holding_it(demo):
    # given: the value is what the question is about, and no key names it
    facts = _world(demo, {"sumo.country_of_origin": "Japan", "brazil.official_language": "Portuguese"})
    # when
    found = retrieve(namespace=demo, subject="world", query="Japan", top_k=1)
    # then
    assert [item.fact.pk for item in found.results] == [facts["sumo.country_of_origin"].pk]
    assert found.results[0].text_rank == 1
    assert found.results[0].exact_rank is None


def test_stale_derived_policy_is_never_returned(demo):
    # given: a policy derived from "likes coffee", which was then updated
    likes = fact_put(namespace=demo, key="likes_coffee", value="Likes coffee")
    policy = fact_put(
        namespace=demo,
        category="derived",
        key="offer_coffee_when_tired",
        value="Offer coffee when the user is tired",
        status=FactStatus.STALE,
    )
    FactEdge.objects.create(source=policy, target=likes, edge_type=EdgeType.DERIVED_FROM)
    fact_replace(likes, value="No longer drinks coffee for health reasons")
    # when
    found = retrieve(
        namespace=demo, subject="user-1", query="the user is tired, what should I offer?", top_k=5
    )
    # then
    assert policy.pk not in [item.fact.pk for item in found.results]
    assert "Offer coffee" not in found.context


def test_policy_resting_on_a_retired_fact_is_dropped_even_if_still_marked_active(demo):
    # given: a derived fact whose basis was superseded but which nobody marked stale
    likes = fact_put(namespace=demo, key="likes_coffee", value="Likes coffee")
    policy = fact_put(
        namespace=demo, category="derived", key="offer_coffee_when_tired", value="Offer coffee when tired"
    )
    FactEdge.objects.create(source=policy, target=likes, edge_type=EdgeType.DERIVED_FROM)
    fact_replace(likes, value="Drinks only tea now")
    # when
    found = retrieve(namespace=demo, subject="user-1", query="offer coffee when tired", top_k=5)
    # then
    assert policy.pk not in [item.fact.pk for item in found.results]


def test_as_of_before_the_update_returns_the_old_value(demo):
    # given
    start = timezone.now() - timedelta(days=10)
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing", created_at=start)
    moved = start + timedelta(days=5)
    fact_replace(beijing, value="Shenzhen", at=moved)
    # when
    before = retrieve(
        namespace=demo, subject="user-1", query="where does the user live", as_of=moved - timedelta(days=1)
    )
    after = retrieve(
        namespace=demo, subject="user-1", query="where does the user live", as_of=moved + timedelta(days=1)
    )
    earliest = retrieve(
        namespace=demo, subject="user-1", query="where does the user live", as_of=start - timedelta(days=1)
    )
    # then
    assert _values(before) == ["Beijing"]
    assert _values(after) == ["Shenzhen"]
    assert _values(earliest) == []
    assert "as of" in before.context


def test_valid_time_bounds_what_is_served(demo):
    # given
    now = timezone.now()
    fact_put(
        namespace=demo, key="work_location", value="home office this week", valid_to=now - timedelta(hours=1)
    )
    fact_put(
        namespace=demo, key="travel_plan", value="in Tokyo next month", valid_from=now + timedelta(days=20)
    )
    current = fact_put(
        namespace=demo,
        key="temporary_phone",
        value="uses a loaner phone",
        valid_from=now - timedelta(days=1),
        valid_to=now + timedelta(days=1),
    )
    # when
    found = retrieve(namespace=demo, subject="user-1", query="work location travel plan phone", top_k=10)
    # then
    assert [item.fact.pk for item in found.results] == [current.pk]


def test_confidence_bar_filters_and_signals_reformation(demo):
    # given: only doubtful memories match
    fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.5)
    fact_put(namespace=demo, key="home_district", value="Chaoyang", confidence=0.3)
    # when
    found = retrieve(namespace=demo, subject="user-1", query="where does the user live", top_k=2)
    # then
    assert found.results == []
    assert found.reformation_needed is True
    assert found.below_confidence == 2
    assert "too uncertain" in found.context


def test_confident_fact_is_served_while_doubtful_ones_are_filtered(demo):
    # given
    fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.4)
    sure = fact_put(namespace=demo, key="home_country", value="China", confidence=0.8)
    # when
    found = retrieve(namespace=demo, subject="user-1", query="where does the user live", top_k=2)
    # then
    assert [item.fact.pk for item in found.results] == [sure.pk]
    assert found.reformation_needed is False


def test_score_parts_follow_the_formula_and_importance_is_exempt_from_decay(demo):
    # given: two facts last used 9 days ago, one of them critical
    long_ago = timezone.now() - timedelta(days=9)
    plain = fact_put(namespace=demo, key="allergy_note", value="sneezes near cats", last_accessed_at=long_ago)
    critical = fact_put(
        namespace=demo,
        key="allergy",
        value="allergic to penicillin",
        importance=0.95,
        last_accessed_at=long_ago,
    )
    # when
    found = retrieve(namespace=demo, subject="user-1", query="allergy", top_k=2)
    # then
    by_id = {item.fact.pk: item for item in found.results}
    assert by_id[plain.pk].recency == pytest.approx(1 / (1 + 9), rel=1e-3)
    assert by_id[plain.pk].decay_exempt is False
    assert by_id[critical.pk].recency == 1.0
    assert by_id[critical.pk].decay_exempt is True
    for item in found.results:
        assert item.final == pytest.approx(final_score(relevance=item.relevance, recency_factor=item.recency))
        assert item.final == pytest.approx(item.relevance * (1 + 0.5 * item.recency))


def test_other_subjects_and_namespaces_are_invisible(demo):
    # given
    other_ns = namespace_get_or_create(name="other")
    fact_put(namespace=other_ns, key="home_city", value="Paris")
    fact_put(namespace=demo, subject="user-2", key="home_city", value="Lisbon")
    mine = fact_put(namespace=demo, key="home_city", value="Shenzhen")
    # when
    found = retrieve(namespace=demo, subject="user-1", query="home city Paris Lisbon", top_k=5)
    # then
    assert [item.fact.pk for item in found.results] == [mine.pk]


@pytest.mark.parametrize("exact_ceiling", [20000, 0])
def test_vector_search_is_not_starved_by_the_subject_filter(demo, settings, exact_ceiling):
    # exact scan for small subjects (default) and the HNSW path (ceiling 0) alike
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = exact_ceiling
    # given: a big neighbouring subject with facts nearer to the query than ours
    for i in range(120):
        fact_put(namespace=demo, subject="crowd", key=f"city_{i}", value=f"lives in city number {i}")
    mine = [
        fact_put(namespace=demo, subject="me", key=f"note_{i}", value=f"owns {i} bicycles") for i in range(3)
    ]
    scope = Scope(namespace_id=demo.pk, subject="me", at=timezone.now())
    # when
    nearest = vector_candidates(
        scope=scope, embedding=embed_text("which city does the user live in"), limit=3
    )
    # then
    assert sorted(i for i, _ in nearest) == sorted(f.pk for f in mine)


def test_include_history_lists_every_version(demo):
    # given
    v1 = fact_put(namespace=demo, key="home_city", value="Beijing")
    v2 = fact_replace(v1, value="Shanghai")
    v3 = fact_replace(v2, value="Shenzhen")
    # when
    found = retrieve(namespace=demo, subject="user-1", query="home city", include_history=True, top_k=1)
    # then
    assert [f.pk for f in found.results[0].history] == [v1.pk, v2.pk, v3.pk]
    assert [f.status for f in found.results[0].history] == ["superseded", "superseded", "active"]
    assert found.results[0].updates.pk == v2.pk


def test_categories_filter(demo):
    # given
    fact_put(namespace=demo, key="home_city", value="Shenzhen")
    pref = fact_put(namespace=demo, category="system_preference", key="reply_language", value="Chinese")
    # when
    found = retrieve(
        namespace=demo,
        subject="user-1",
        query="home city language",
        categories=("system_preference",),
        top_k=5,
    )
    # then
    assert [item.fact.pk for item in found.results] == [pref.pk]


def test_updates_looks_through_a_confidence_only_version(demo):
    # given: Beijing -> Shenzhen, then Shenzhen again with lower confidence
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing")
    shenzhen = fact_replace(beijing, value="Shenzhen")
    lowered = fact_replace(shenzhen, value="Shenzhen", confidence=0.7)
    # when
    found = retrieve(namespace=demo, subject="user-1", query="home city", top_k=1)
    # then
    assert found.results[0].fact.pk == lowered.pk
    assert found.results[0].updates.pk == beijing.pk
    assert "updates an older memory: home city: Beijing" in found.context


def test_full_text_ranks_rows_holding_every_word_even_past_the_match_cap(demo, settings):
    # given: many facts mention coffee, one mentions coffee and Osaka; ranking sees 2 matches
    settings.MEMORYPR_FTS_MAX_MATCHES = 2
    for i in range(6):
        fact_put(namespace=demo, key=f"coffee_note_{i}", value=f"coffee note {i}")
    both = fact_put(namespace=demo, key="trip", value="drank coffee in Osaka")
    scope = Scope(namespace_id=demo.pk, subject="user-1", at=timezone.now())
    # when
    hits = full_text_candidates(scope=scope, query="coffee Osaka", limit=5)
    # then
    assert hits[0].fact_id == both.pk
    assert 2 <= len(hits) <= 3  # the AND hit, then what the capped OR phase adds


def test_a_retrieval_reads_its_candidates_with_their_scores_then_the_facts_it_serves(demo):
    # given facts, and a first retrieval (which counts the subject and sets the search once)
    fact_put(namespace=demo, key="favorite_drink", value="green tea")
    fact_put(namespace=demo, key="favorite_food", value="dumplings")
    retrieve(namespace=demo, subject="user-1", query="what does the user drink", top_k=5)
    # when the next one runs
    with CaptureQueriesContext(connection) as queries:
        found = retrieve(namespace=demo, subject="user-1", query="what does the user like to drink", top_k=5)
    # then two reads: the channels with the scoring columns, and the served rows (a generic-plan
    # setting and its reset travel in the first read's round trip; now and then the connection
    # looks at how it plans that read; a walk of the index inside this test's transaction sets the
    # search settings, transaction-local)
    assert _values(found)[0] == "green tea"
    settings = (
        "SELECT set_config('hnsw.",
        "SELECT set_config('plan_cache_mode'",
        "RESET plan_cache_mode",
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements",
    )
    reads = [query["sql"] for query in queries if not query["sql"].startswith(settings)]
    assert len(reads) == 2, [sql[:80] for sql in reads]
