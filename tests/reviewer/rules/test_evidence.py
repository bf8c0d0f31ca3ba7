from __future__ import annotations

import pytest

from reviewer.rules import evidence
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view

TRANSCRIPT = (
    "user: Hi!\nuser: I moved to  Shenzhen last month.\nassistant: 恭喜！\nuser：上个月我举家搬迁到了深圳。"
)


@pytest.mark.parametrize("quote", [None, "", "   "])
def test_missing_evidence_is_rejected(quote):
    outcome = evidence.check(pull_view(), op_view(quote=quote))
    assert outcome.verdict == Verdict.REJECT
    assert outcome.reason.startswith("no evidence")


def test_unknown_transcript_passes_unverified():
    outcome = evidence.check(pull_view(transcript=None), op_view())
    assert outcome.verdict == Verdict.PASS
    assert "not verified" in outcome.reason


@pytest.mark.parametrize(
    "quote",
    ["I moved to Shenzhen last month", "i moved to shenzhen LAST MONTH", "“I moved to Shenzhen last month”",
     "上个月我举家搬迁到了深圳", "上个月我举家搬迁到了深圳。"],
)  # fmt: skip
def test_verbatim_quotes_are_found(quote):
    outcome = evidence.check(pull_view(transcript=TRANSCRIPT), op_view(quote=quote))
    assert outcome.verdict == Verdict.PASS
    assert outcome.reason == "quote found verbatim in a user turn of session 'session-1'"


@pytest.mark.parametrize(
    "quote", ["I moved to Guangzhou last month", "上个月我搬到了深圳", "I moved to Shenzhen last year"]
)
def test_quotes_not_in_the_transcript_escalate(quote):
    outcome = evidence.check(pull_view(transcript=TRANSCRIPT), op_view(quote=quote))
    assert outcome.verdict == Verdict.ESCALATE
    assert "possible hallucination" in outcome.reason


PARIS = "user: Hi, can you help me plan a trip?\nassistant: Sure! You live in Paris and love sushi, right?"


@pytest.mark.parametrize("quote", ["love sushi", "You live in Paris"])
def test_a_quote_only_the_agent_said_is_escalated_as_its_own_words(quote):
    # given a transcript in which only the assistant speaks of Paris and sushi
    pull = pull_view(transcript=PARIS)
    # when the KPR cites the assistant's words
    outcome = evidence.check(pull, op_view(quote=quote, key="favorite_food", new_value="sushi"))
    # then it is held as the agent's own words
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.reason.startswith("the agent's own words")
    assert "assistant turns of session 'session-1'" in outcome.reason


def test_a_tool_turn_is_the_agents_words_too():
    turns = [("user", "What's the weather?"), ("tool", "User profile: lives in Paris")]
    pull = pull_view()
    pull.loaders["turns"] = lambda: turns
    outcome = evidence.check(pull, op_view(quote="lives in Paris"))
    assert outcome.verdict == Verdict.ESCALATE
    assert "tool turns" in outcome.reason


def test_the_user_saying_it_as_well_passes():
    pull = pull_view(transcript=PARIS + "\nuser: Yes, I love sushi!")
    assert evidence.check(pull, op_view(quote="love sushi")).verdict == Verdict.PASS


def test_a_quote_across_two_user_turns_passes():
    pull = pull_view(transcript="user: I moved to\nassistant: ok\nuser: Shenzhen last month")
    pull.loaders["turns"] = lambda: [
        ("user", "I moved to"),
        ("assistant", "ok"),
        ("user", "Shenzhen last month"),
    ]
    assert evidence.check(pull, op_view(quote="I moved to Shenzhen")).verdict == Verdict.PASS


def test_a_transcript_without_speakers_passes_and_says_so():
    outcome = evidence.check(pull_view(transcript="I moved to Shenzhen last month"), op_view())
    assert outcome.verdict == Verdict.PASS
    assert "speaker not recorded" in outcome.reason


@pytest.mark.parametrize(
    ("subjects", "says"),
    [
        (("user-2",), "of another subject ('user-2')"),
        (("user-1",), "of the same subject 'user-1'"),
        ((), "whose subject is not known"),
    ],
)
def test_a_quote_from_another_session_names_it_and_its_subject(subjects, says):
    # given a session without the quote, and another session whose user said it
    pull = pull_view(transcript="user: Hello")
    pull.loaders["quote_elsewhere"] = lambda quote: [("session-9", subjects)]
    # when
    outcome = evidence.check(pull, op_view())
    # then
    assert outcome.verdict == Verdict.ESCALATE
    assert "it is in a user turn of another session, 'session-9', " + says in outcome.reason


def _never(*_: object) -> None:
    raise AssertionError("the whole transcript was read")


def test_a_quote_in_a_user_turn_is_found_without_reading_the_whole_session():
    # given a long session whose user turns can be searched by a word
    pull = pull_view()
    pull.loaders["turns"] = _never
    asked: list[str] = []
    pull.loaders["user_turns_containing"] = lambda fragment, recent=None: (
        asked.append(fragment) or ["Well, I moved to  SHENZHEN last month."]
    )
    # when the rule checks a quote of that turn
    outcome = evidence.check(pull, op_view(quote="“I moved to Shenzhen last month.”"))
    # then only the turns holding its longest word were read, and it passes as before
    assert asked == ["Shenzhen"]
    assert outcome.verdict == Verdict.PASS
    assert outcome.reason == "quote found verbatim in a user turn of session 'session-1'"


def test_a_quote_older_than_the_newest_turns_is_found_in_the_whole_session():
    # given a session whose newest turns do not hold the quote, and an older user turn that does
    pull = pull_view()
    pull.loaders["turns"] = _never
    reads: list[int | None] = []

    def containing(fragment: str, recent: int | None = None) -> list[str]:
        reads.append(recent)
        return [] if recent is not None else ["I moved to Shenzhen last month."]

    pull.loaders["user_turns_containing"] = containing
    # when
    outcome = evidence.check(pull, op_view(quote="I moved to Shenzhen last month"))
    # then the newest turns were read first, then the session's turns holding the word
    assert reads == [evidence.RECENT_TURNS, None]
    assert outcome.verdict == Verdict.PASS


@pytest.mark.parametrize(
    ("turns", "verdict", "says"),
    [
        # the word in another width: the narrow search misses it, the transcript finds it
        ([("user", "I moved to Ｓｈｅｎｚｈｅｎ last month")], Verdict.PASS, "in a user turn"),
        # the word only in the agent's words
        ([("assistant", "I moved to Shenzhen last month")], Verdict.ESCALATE, "the agent's own words"),
        # the quote across two user turns
        ([("user", "I moved to"), ("user", "Shenzhen last month")], Verdict.PASS, "across user turns"),
    ],
)
def test_when_the_narrow_search_finds_nothing_the_transcript_decides(turns, verdict, says):
    # given a session whose user turns hold no turn with the whole quote
    pull = pull_view()
    pull.loaders["turns"] = lambda: turns
    pull.loaders["user_turns_containing"] = lambda fragment, recent=None: [
        content for role, content in turns if role == "user" and fragment.lower() in content.lower()
    ]
    # when
    outcome = evidence.check(pull, op_view(quote="I moved to Shenzhen last month"))
    # then the answer is the whole transcript's
    assert outcome.verdict == verdict
    assert says in outcome.reason
