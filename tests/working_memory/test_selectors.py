from __future__ import annotations

import pytest

from memorypr.agents.services import namespace_get_or_create
from memorypr.working_memory.selectors import session_transcript
from memorypr.working_memory.services import turn_append

pytestmark = pytest.mark.django_db


def test_transcript_holds_every_turn_in_order_for_evidence_checks():
    # given: more turns than working memory keeps
    demo = namespace_get_or_create(name="demo")
    for i in range(25):
        turn_append(namespace=demo, session_id="sess_8812", role="user", content=f"turn {i}", agent=None)
    turn_append(
        namespace=demo, session_id="sess_8812", role="user", content="上个月我举家搬迁到了深圳", agent=None
    )
    turn_append(
        namespace=demo, session_id="sess_8812", role="assistant", content="Welcome to Shenzhen!", agent=None
    )
    # when
    transcript = session_transcript(namespace_id=demo.pk, session_id="sess_8812")
    # then
    assert transcript is not None
    lines = transcript.split("\n")
    assert len(lines) == 27
    assert lines[0] == "user: turn 0"
    assert lines[-2:] == ["user: 上个月我举家搬迁到了深圳", "assistant: Welcome to Shenzhen!"]
    assert "上个月我举家搬迁到了深圳" in transcript


def test_unknown_session_or_other_namespace_has_no_transcript():
    # given
    demo = namespace_get_or_create(name="demo")
    other = namespace_get_or_create(name="other")
    turn_append(namespace=demo, session_id="s", role="user", content="hello", agent=None)
    # then
    assert session_transcript(namespace_id=demo.pk, session_id="nope") is None
    assert session_transcript(namespace_id=other.pk, session_id="s") is None
