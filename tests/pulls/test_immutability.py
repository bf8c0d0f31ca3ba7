from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from memorypr.pulls.models import KnowledgePullRequest, Operation
from memorypr.pulls.services import pull_record_review
from tests.factories import pull_payload

URL = "/api/v1/pulls"


def _raw(sql: str, params: list[object]) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.fixture
def pull(agent_client) -> KnowledgePullRequest:
    return KnowledgePullRequest.objects.get(
        pk=agent_client.post(URL, pull_payload(), format="json").json()["id"]
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE pulls_knowledgepullrequest SET subject = 'someone-else' WHERE id = %s",
        "UPDATE pulls_knowledgepullrequest SET created_at = now() - interval '1 day' WHERE id = %s",
        "DELETE FROM pulls_knowledgepullrequest WHERE id = %s",
        "UPDATE pulls_operation SET new_value = '\"Shanghai\"' WHERE pull_id = %s",
        "UPDATE pulls_operation SET confidence = 1 WHERE pull_id = %s",
        "DELETE FROM pulls_operation WHERE pull_id = %s",
    ],
)
def test_raw_sql_cannot_rewrite_a_pull(pull, sql):
    with pytest.raises(DatabaseError, match="immutable|append-only"):
        _raw(sql, [pull.pk])
    stored = KnowledgePullRequest.objects.get(pk=pull.pk)
    assert stored.subject == pull.subject
    assert Operation.objects.get(pull=pull).new_value == "Beijing"


@pytest.mark.django_db
def test_status_columns_may_move(pull):
    _raw("UPDATE pulls_knowledgepullrequest SET review_status = 'REJECTED' WHERE id = %s", [pull.pk])
    assert KnowledgePullRequest.objects.get(pk=pull.pk).review_status == "REJECTED"


@pytest.mark.django_db
def test_review_events_are_append_only(pull):
    with transaction.atomic():
        event = pull_record_review(
            pull=pull, reviewer_kind="system", reviewer="test", verdict="ESCALATE",
            status_after="NEEDS_HUMAN_REVIEW", reasons="because",
        )  # fmt: skip
    with pytest.raises(DatabaseError, match="append-only"):
        _raw("UPDATE pulls_reviewevent SET verdict = 'APPROVE' WHERE id = %s", [event.pk])
    with pytest.raises(DatabaseError, match="append-only"):
        _raw("DELETE FROM pulls_reviewevent WHERE id = %s", [event.pk])
