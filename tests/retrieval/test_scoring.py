"""The scoring arithmetic: fusion, recency and the final score, alone and over many candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memorypr.retrieval.scoring import final_score, final_scores, recency, rrf_scores

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_rank_fusion_sums_the_reciprocal_ranks_of_every_list_a_candidate_is_in():
    # when one candidate heads two lists and another is second in one
    scores = rrf_scores([[7, 8], [7]])
    # then each scores 1 / (60 + rank) per list
    assert scores == {7: 2 / 61, 8: 1 / 62}


def test_a_fact_touched_a_day_ago_weighs_half_and_one_never_touched_or_exempt_weighs_whole():
    assert recency(last_touched=NOW - timedelta(days=1), now=NOW) == 0.5
    assert recency(last_touched=None, now=NOW) == 1.0
    # a time after the moment of retrieval counts as now
    assert recency(last_touched=NOW + timedelta(days=3), now=NOW) == 1.0
    assert final_score(relevance=0.2, recency_factor=0.5) == 0.2 * 1.25


def test_the_scores_of_many_candidates_are_each_candidates_recency_and_final_score():
    # given candidates touched at various times, one never, one exempt from decay
    candidates = [
        (1, 0.03, NOW - timedelta(days=1), False),
        (2, 0.02, NOW - timedelta(hours=5, seconds=7), False),
        (3, 0.01, None, False),
        (4, 0.016, NOW - timedelta(days=400), True),
        (5, 0.012, NOW + timedelta(minutes=1), False),
    ]
    # when they are scored together
    scores = final_scores(iter(candidates), now=NOW)
    # then each is what the one-candidate formulas give, exactly
    for fact_id, relevance, touched, exempt in candidates:
        factor = 1.0 if exempt else recency(last_touched=touched, now=NOW)
        assert scores[fact_id] == (factor, final_score(relevance=relevance, recency_factor=factor))
    assert scores[4] == (1.0, 0.016 * 1.5)
