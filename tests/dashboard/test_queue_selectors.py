from __future__ import annotations

from types import SimpleNamespace

import pytest

from memorypr.agents.services import reviewer_create
from reviewer.dashboard.queue_selectors import BadFilter, QueueFilters, pull_summary, queue_counts, queue_page
from reviewer.dashboard.services import claim_take
from tests.factories import operation_payload


def _op(position: int, **fields: object) -> SimpleNamespace:
    base = {"action": "UPDATE", "category": "user_profile", "key": "home_city", "old_value": "Beijing",
            "new_value": "Shenzhen", "position": position}  # fmt: skip
    return SimpleNamespace(**{**base, **fields})


def test_summary_names_the_first_fact_and_counts_the_derived_ones():
    operations = [_op(0), _op(1, action="CREATE", category="derived", key="offer_coffee", old_value=None)]
    assert pull_summary(operations=operations) == "home_city: Beijing → Shenzhen (+1 derived)"  # type: ignore[arg-type]


def test_summary_of_a_create_a_delete_and_a_long_value():
    assert pull_summary(operations=[_op(0, action="CREATE", old_value=None)]) == "home_city: + Shenzhen"  # type: ignore[list-item]
    deleted = pull_summary(operations=[_op(0, action="DELETE", new_value=None)])  # type: ignore[list-item]
    assert deleted == "home_city: Beijing → deleted"
    long = pull_summary(operations=[_op(0, action="CREATE", new_value="x" * 80), _op(1, key="diet")])  # type: ignore[list-item]
    assert long == "home_city: + " + "x" * 39 + "… (+1 more)"


def test_an_unknown_filter_value_is_refused_by_name():
    with pytest.raises(BadFilter) as error:
        QueueFilters.from_query({"age": "forever"})
    assert error.value.field == "age"


@pytest.mark.django_db
def test_search_finds_by_id_prefix_key_value_agent_and_session(reviewer, queued_pull):
    # given
    allergy = queued_pull(key="allergy", newValue="shrimp", agent="kitchen-bot", session="chat-42")
    diet = queued_pull(key="diet", newValue="vegan")

    def find(q: str) -> list[object]:
        return [row.pull.id for row in queue_page(user=reviewer, tab="needs", filters=QueueFilters(q=q))[1]]

    # then
    assert find(str(allergy.id)[:8]) == [allergy.id]
    assert find("allerg") == [allergy.id]
    assert find("SHRIMP") == [allergy.id]
    assert find("kitchen") == [allergy.id]
    assert find("chat-42") == [allergy.id]
    assert find("vegan") == [diet.id]
    assert find("user-1") == [allergy.id, diet.id]


@pytest.mark.django_db
def test_filters_narrow_rows_and_counts_alike(reviewer, queued_pull):
    # given two KPRs, one claimed by the reviewer, one with a derived operation
    first = queued_pull(key="allergy", newValue="shrimp")
    second = queued_pull(subject="user-2", operations=[
        operation_payload(key="diet", newValue="vegan"),
        operation_payload(key="offer_salad", category="derived", newValue=True),
    ])  # fmt: skip
    claim_take(pull_id=str(first.id), user=reviewer)
    # when / then
    cases = {
        QueueFilters(subject="user-2"): [second.id],
        QueueFilters(category="derived"): [second.id],
        QueueFilters(rule="protected_key"): [first.id, second.id],
        QueueFilters(rule="secrets"): [],
        QueueFilters(claimed="me"): [first.id],
        QueueFilters(claimed="nobody"): [second.id],
        QueueFilters(claimed="ann"): [first.id],
        QueueFilters(age="1h"): [first.id, second.id],
        QueueFilters(age="overdue"): [],
        QueueFilters(namespace="demo", agent="proposer-demo"): [first.id, second.id],
        QueueFilters(llm="REJECT"): [],
    }
    for filters, expected in cases.items():
        rows = queue_page(user=reviewer, tab="needs", filters=filters)[1]
        assert [row.pull.id for row in rows] == expected, filters
        assert queue_counts(user=reviewer, filters=filters)["needs"] == len(expected), filters
    assert queue_page(user=reviewer, tab="needs", filters=QueueFilters(category="derived"))[1][0].summary == (
        "diet: + vegan (+1 derived)"
    )


@pytest.mark.django_db
def test_pages_of_twenty_five(reviewer, queued_pull):
    # given 27 queued KPRs
    pulls = [queued_pull(key=f"k{i}", newValue=i) for i in range(27)]
    # when
    first, rows = queue_page(user=reviewer, tab="needs")
    second, rest = queue_page(user=reviewer, tab="needs", page=2)
    # then
    assert (first.paginator.count, first.paginator.num_pages) == (27, 2)
    assert [row.pull.id for row in rows + rest] == [pull.id for pull in pulls]


@pytest.mark.django_db
def test_another_namespaces_reviewer_sees_nothing(queued_pull):
    # given
    queued_pull(key="allergy", newValue="shrimp")
    stranger = reviewer_create(username="bob", password="bob-password-1", namespaces=["elsewhere"])
    # then
    assert queue_page(user=stranger, tab="needs")[1] == []
    assert queue_counts(user=stranger)["needs"] == 0
