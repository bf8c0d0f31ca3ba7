from __future__ import annotations

import pytest
from django.db import transaction

from memorypr.agents.services import reviewer_create
from memorypr.pulls.serializers import PullInSerializer
from memorypr.pulls.services import pull_submit
from tests.factories import agent_with_token, operation_payload, pull_payload


def _pull(namespace: str):  # type: ignore[no-untyped-def]
    agent, _ = agent_with_token(name=f"admin-proposer-{namespace}", namespaces=[namespace])
    serializer = PullInSerializer(data=pull_payload(operation_payload()))
    serializer.is_valid(raise_exception=True)
    with transaction.atomic():
        pull, _ = pull_submit(agent=agent, namespace=agent.namespaces.get(), spec=serializer.to_spec())
    return pull


@pytest.mark.django_db
def test_a_reviewer_opens_a_kpr_of_their_namespace_read_only(client):
    # given a KPR with its operations and review events, and a reviewer of its namespace
    pull = _pull("demo")
    reviewer_create(username="ann", password="pw-123456", namespaces=["demo"])
    client.login(username="ann", password="pw-123456")
    # when the reviewer opens it in the admin, then it is shown, with nothing to edit
    page = client.get(f"/admin/pulls/knowledgepullrequest/{pull.pk}/change/")
    assert page.status_code == 200
    assert b"home_city" in page.content
    assert client.post(f"/admin/pulls/knowledgepullrequest/{pull.pk}/delete/").status_code == 403


@pytest.mark.django_db
def test_a_reviewer_does_not_see_another_namespaces_kprs(client):
    pull = _pull("elsewhere")
    reviewer_create(username="ann", password="pw-123456", namespaces=["demo"])
    client.login(username="ann", password="pw-123456")
    listing = client.get("/admin/pulls/knowledgepullrequest/")
    assert listing.status_code == 200 and listing.context["cl"].result_count == 0
    page = client.get(f"/admin/pulls/knowledgepullrequest/{pull.pk}/change/", follow=False)
    assert page.status_code == 302  # the admin's "does not exist", with no content of it


@pytest.mark.django_db
def test_the_kpr_page_lists_review_events_read_only(client):
    # given a KPR the review held, as the pipeline leaves it
    from memorypr.pulls.services import pull_record_review

    pull = _pull("demo")
    with transaction.atomic():
        pull_record_review(pull=pull, reviewer_kind="rules", reviewer="rules", verdict="ESCALATE",
                           status_after="NEEDS_HUMAN_REVIEW", reasons="protected key needs a person")  # fmt: skip
    reviewer_create(username="root", password="pw-123456", namespaces=["demo"], is_admin=True)
    client.login(username="root", password="pw-123456")
    # when / then: the page opens and lists the event with its time
    page = client.get(f"/admin/pulls/knowledgepullrequest/{pull.pk}/change/")
    assert page.status_code == 200
    assert b"protected key needs a person" in page.content


@pytest.mark.django_db
@pytest.mark.parametrize("length", [8, 36])
def test_kpr_search_finds_the_id_prefix_the_dashboard_shows(client, length):
    # given two KPRs
    pull, other = _pull("demo"), _pull("demo")
    reviewer_create(username="ann", password="pw-123456", namespaces=["demo"])
    client.login(username="ann", password="pw-123456")
    # when searching the 8-character id the dashboard shows, or the whole id
    listing = client.get("/admin/pulls/knowledgepullrequest/", {"q": str(pull.pk)[:length]})
    # then only that KPR is found
    assert [row.pk for row in listing.context["cl"].result_list] == [pull.pk]
    assert other.pk != pull.pk
