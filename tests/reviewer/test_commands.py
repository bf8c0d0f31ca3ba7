from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memorypr.audit.models import AuditEvent
from reviewer.models import UploadedTranscript
from reviewer.pipeline import pull_review
from tests.reviewer.builders import fact, op_spec, submit


@pytest.mark.django_db
def test_rereview_command(proposer, merges):
    fact(key="home_city", value="Beijing")
    pull = submit(proposer, op_spec(confidence=0.6))
    pull_review(pull_id=str(pull.id))
    call_command("review_policy", "demo", "--confidence-approve-bar", "0.5", stdout=StringIO())
    out = StringIO()
    call_command("rereview", str(pull.id), stdout=out)
    assert out.getvalue().startswith("APPROVED\nApproved by rules")
    assert (
        AuditEvent.objects.get(pull_id=pull.id, event_type="pull.rereview_requested").actor
        == "operator:manage.py"
    )


@pytest.mark.django_db
def test_rereview_command_errors(proposer):
    with pytest.raises(CommandError, match="no KPR"):
        call_command("rereview", "00000000-0000-0000-0000-000000000000")
    with pytest.raises(CommandError, match="no user"):
        call_command("rereview", "00000000-0000-0000-0000-000000000000", "--user", "nobody")


@pytest.mark.django_db
def test_review_policy_command_shows_and_changes(proposer):
    out = StringIO()
    call_command(
        "review_policy",
        "demo",
        "--mode",
        "rules_only",
        "--human-categories",
        "derived,user_profile",
        stdout=out,
    )
    shown = json.loads(out.getvalue())
    assert shown["mode"] == "rules_only"
    assert shown["human_categories"] == ["derived", "user_profile"]
    with pytest.raises(CommandError, match="cannot be disabled"):
        call_command("review_policy", "demo", "--disabled-rules", "secrets")
    with pytest.raises(CommandError, match="no namespace"):
        call_command("review_policy", "nowhere")


@pytest.mark.django_db
def test_upload_transcript_command(proposer, tmp_path):
    path = tmp_path / "session.txt"
    path.write_text("用户：上个月我举家搬迁到了深圳", encoding="utf-8")
    out = StringIO()
    call_command("upload_transcript", "demo", "sess_8812", str(path), stdout=out)
    assert UploadedTranscript.objects.get(session_id="sess_8812").uploaded_by == "operator:manage.py"
    assert "for session sess_8812" in out.getvalue()
