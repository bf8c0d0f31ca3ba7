from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memorypr.audit.selectors import audit_chain_verify
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.working_memory.models import SessionTurn


def _statuses() -> dict[str, tuple[str, str]]:
    return {
        pull.idempotency_key: (pull.review_status, pull.merge_status)
        for pull in KnowledgePullRequest.objects.all()
    }


@pytest.mark.django_db(transaction=True)
def test_demo_tells_the_seed_stories_and_loads_once():
    # when
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    # then: the prints make run shows
    lines = out.getvalue().splitlines()
    assert lines[-3] == "demo admin login: admin / admin-demo-pass"
    assert lines[-2] == "demo reviewer login: reviewer / review-demo-pass"
    # the reviewer sees the demo namespace only; the admin is someone else
    users = {user.username: user for user in get_user_model().objects.all()}
    assert (users["reviewer"].is_superuser, users["admin"].is_superuser) == (False, True)
    assert list(users["reviewer"].memberships.values_list("namespace__name", flat=True)) == ["demo"]
    assert lines[-1].split()[-1] == "mpr_demo_token_for_local_use_only"
    statuses = _statuses()
    assert statuses["demo-04-moved-shenzhen"] == ("APPROVED", "MERGED")
    assert statuses["demo-08-shrimp-allergy"] == ("NEEDS_HUMAN_REVIEW", "UNMERGED")
    assert statuses["demo-09-mars"][0] != "APPROVED"
    facts = {(f.key, f.version): f.status for f in FactVersion.objects.all()}
    assert facts[("home_city", 1)] == "superseded" and facts[("home_city", 2)] == "active"
    assert facts[("offer_coffee_when_tired", 1)] == "stale"
    assert facts[("meeting_tomorrow_afternoon", 1)] == "retracted"
    assert facts[("remind_meeting_prep", 1)] == "stale"
    # the user's words are in the sessions' transcripts, so the evidence was checked verbatim
    assert SessionTurn.objects.filter(session_id="demo-session-3", role="user").count() == 2
    # and a second start changes nothing
    call_command("load_demo", stdout=io.StringIO())
    assert _statuses() == statuses
    assert KnowledgePullRequest.objects.count() == 9
    assert SessionTurn.objects.count() == 9
    assert audit_chain_verify()[1] is None
