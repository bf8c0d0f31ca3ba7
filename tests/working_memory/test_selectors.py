from __future__ import annotations

import pytest

from memorypr.agents.services import namespace_get_or_create
from memorypr.working_memory.selectors import session_transcript, session_user_turns_containing
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


def test_a_sessions_user_turns_are_searched_by_a_word_in_any_case():
    # given a session with user and agent turns, the same words in another session and namespace
    demo = namespace_get_or_create(name="demo")
    other = namespace_get_or_create(name="other")
    for session, role, content in [
        ("s", "user", "I moved to Shenzhen."),
        ("s", "assistant", "Shenzhen is lovely."),
        ("s", "user", "hello"),
        ("s", "user", "SHENZHEN again, 100% sure_thing"),
        ("t", "user", "I moved to Shenzhen too."),
    ]:
        turn_append(namespace=demo, session_id=session, role=role, content=content, agent=None)
    turn_append(namespace=other, session_id="s", role="user", content="Shenzhen", agent=None)
    # when
    found = session_user_turns_containing(namespace_id=demo.pk, session_id="s", fragment="shenzhen")
    # then only this session's user turns holding the word, in order; LIKE's wildcards are literal
    assert found == ["I moved to Shenzhen.", "SHENZHEN again, 100% sure_thing"]
    assert session_user_turns_containing(namespace_id=demo.pk, session_id="s", fragment="0%") == [
        "SHENZHEN again, 100% sure_thing"
    ]
    assert session_user_turns_containing(namespace_id=demo.pk, session_id="s", fragment="o_m") == []


def test_a_search_of_the_newest_turns_reads_no_older_one():
    # given a session whose word is in an old user turn and in the newest one
    demo = namespace_get_or_create(name="demo")
    turn_append(namespace=demo, session_id="s", role="user", content="Shenzhen, long ago", agent=None)
    for index in range(5):
        turn_append(namespace=demo, session_id="s", role="assistant", content=f"Shenzhen {index}", agent=None)
    turn_append(namespace=demo, session_id="s", role="user", content="Shenzhen today", agent=None)
    # when the last three turns are searched, and then the whole session
    recent = session_user_turns_containing(
        namespace_id=demo.pk, session_id="s", fragment="shenzhen", recent=3
    )
    whole = session_user_turns_containing(namespace_id=demo.pk, session_id="s", fragment="shenzhen")
    # then
    assert recent == ["Shenzhen today"]
    assert whole == ["Shenzhen, long ago", "Shenzhen today"]
