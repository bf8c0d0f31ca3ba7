"""Extraction and the importance gate: what a conversation's user turns say, and what is no fact."""

from __future__ import annotations

import pytest

from memorypr.formation.extract import IMPORTANCE_GATE, Turn, extract_facts, parse_transcript
from memorypr.formation.text import split_sentences


def _facts(text: str) -> list[tuple[str, str, str | None, str]]:
    extraction = extract_facts([Turn("user", text)])
    return [(f.category, f.key, f.value, f.polarity) for f in extraction.facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Beijing.", ("user_profile", "home_city", "Beijing", "set")),
        ("I moved to Shenzhen last month.", ("user_profile", "home_city", "Shenzhen", "set")),
        (
            "My wife and I relocated to New York two years ago.",
            ("user_profile", "home_city", "New York", "set"),
        ),
        ("I'm allergic to peanuts.", ("user_profile", "allergy.peanut", "allergic to peanuts", "set")),
        ("I like green tea.", ("user_profile", "likes_green_tea", "likes green tea", "set")),
        ("I no longer drink coffee.", ("user_profile", "likes_coffee", "does not like coffee", "set")),
        ("My name is Li Lei.", ("user_profile", "name", "Li Lei", "set")),
        ("I work at Tencent.", ("user_profile", "employer", "Tencent", "set")),
        ("I'm a software engineer.", ("user_profile", "occupation", "software engineer", "set")),
        ("Please answer in Chinese.", ("system_preference", "reply_language", "Chinese", "set")),
        ("I no longer live in Beijing.", ("user_profile", "home_city", "Beijing", "unset")),
    ],
)
def test_english_first_person_statements_become_facts(text, expected):
    # when
    facts = _facts(text)
    # then
    assert facts == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我住在北京。", [("user_profile", "home_city", "北京", "set")]),
        ("上个月我举家搬迁到了深圳", [("user_profile", "home_city", "深圳", "set")]),
        ("我对花生过敏", [("user_profile", "allergy.花生", "对花生过敏", "set")]),
        (
            "我对花生不过敏了，但对虾过敏",
            [
                ("user_profile", "allergy.花生", None, "unset"),
                ("user_profile", "allergy.虾", "对虾过敏", "set"),
            ],
        ),
        ("我喜欢喝绿茶", [("user_profile", "likes_绿茶", "喜欢绿茶", "set")]),
        ("我不喜欢咖啡了", [("user_profile", "likes_咖啡", "不再喜欢咖啡", "set")]),
        (
            "我叫李雷，在腾讯工作。",
            [("user_profile", "name", "李雷", "set"), ("user_profile", "employer", "腾讯", "set")],
        ),
        ("请用中文回答", [("system_preference", "reply_language", "中文", "set")]),
    ],
)
def test_chinese_first_person_statements_become_facts(text, expected):
    # when
    facts = _facts(text)
    # then
    assert facts == expected


def test_evidence_is_the_verbatim_sentence_and_the_turn_time():
    # given
    turn = Turn("user", "Hi there! I moved to Shenzhen last month. The weather is great.", 1732096800000)
    # when
    (fact,) = extract_facts([turn]).facts
    # then
    assert fact.quote == "I moved to Shenzhen last month."
    assert fact.quote in turn.content
    assert fact.timestamp_ms == 1732096800000
    assert fact.importance >= IMPORTANCE_GATE


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("If I moved to Paris, I would learn French.", "a hypothetical"),
        ("I moved to Mars yesterday. Just kidding!", "a joke"),
        ("Do I live in Beijing?", "a question"),
        ("Maybe I live in Paris, not sure.", "a hedge"),
        ("我现在住在北京吗？", "a question"),
        ("如果我搬到上海就好了", "a hypothetical"),
        ("我搬到火星了哈哈", "a joke"),
        ("我打算搬到上海", "a future plan"),
    ],
)
def test_jokes_hypotheticals_and_questions_stay_below_the_gate(text, reason):
    # when
    extraction = extract_facts([Turn("user", text)])
    # then
    assert extraction.facts == []
    assert extraction.dropped, "the candidate is kept, with its reasons, below the gate"
    assert all(f.importance < IMPORTANCE_GATE for f in extraction.dropped)
    assert any(reason in r for f in extraction.dropped for r in f.reasons)


@pytest.mark.parametrize(
    "text",
    [
        "My friend lives in Tokyo.",
        "我是不是对花生过敏？",
        "我明天要去火星上班，开玩笑的",
        "Nice weather today!",
        "I love you",
        "我在家工作",
        "I used to live in Beijing.",
        "I'm going to move to Tokyo next month.",
    ],
)
def test_no_fact_about_the_user_is_read_from_other_speech(text):
    # when
    extraction = extract_facts([Turn("user", text)])
    # then
    assert extraction.facts == []


def test_only_user_turns_are_read():
    # given
    turns = [
        Turn("assistant", "I live in Paris, and I'm allergic to cats."),
        Turn("user", "I live in Berlin."),
    ]
    # when
    facts = extract_facts(turns).facts
    # then
    assert [(f.key, f.value) for f in facts] == [("home_city", "Berlin")]


@pytest.mark.parametrize(
    ("sentence", "key", "value"),
    [
        ("The chairperson of Fatah is Mahmoud Abbas.", "fatah.chairperson", "Mahmoud Abbas"),
        ("Thomas Kyd was born in the city of London.", "thomas_kyd.place_of_birth", "London"),
        ("Pedro Pierluisi worked in the city of Washington, D.C..", "pedro_pierluisi.work_location", "Washington, D.C."),
        ("The univeristy where Galileo Galilei was educated is University of Pisa.", "galileo_galilei.educated_at", "University of Pisa"),
        ("The name of the current head of state in Sarawak is Salva Kiir Mayardit.", "sarawak.head_of_state", "Salva Kiir Mayardit"),
        ("The name of the current head of the Tucson government is Jonathan Rothschild.", "tucson.head_of_government", "Jonathan Rothschild"),
        ("Benjamin Silliman, Sr.'s child is Charles FitzRoy, 2nd Duke of Grafton.", "benjamin_silliman_sr.child", "Charles FitzRoy, 2nd Duke of Grafton"),
        ("Alta IF is associated with the sport of association football.", "alta_if.sport", "association football"),
        ("Will Smith is married to Jada Pinkett Smith.", "will_smith.spouse", "Jada Pinkett Smith"),
        ("The Prime Minister of Sweden is Stefan Löfven.", "prime_minister_of_sweden.office_holder", "Stefan Löfven"),
    ],
)  # fmt: skip
def test_templated_world_facts_key_the_entity_and_relation(sentence, key, value):
    # when
    (fact,) = extract_facts([Turn("user", sentence)]).facts
    # then: "Will" and "IF" inside names read as names, not as a plan or a hypothetical
    assert (fact.category, fact.key, fact.value) == ("domain_fact", key, value)
    assert fact.quote == sentence
    assert fact.reasons == ()


def test_sentences_survive_abbreviations_and_initials():
    # when
    parts = split_sentences("Dr. Seuss wrote it. Ursula K. Le Guin too! 我住在北京。你呢？")
    # then
    assert parts == ["Dr. Seuss wrote it.", "Ursula K. Le Guin too!", "我住在北京。", "你呢？"]


def test_transcript_lines_carry_roles_or_default_to_the_user():
    # when
    turns = parse_transcript(
        "user: I live in Beijing.\n\nassistant: Noted!\n用户：我对花生过敏\nI moved to Shenzhen.\n"
    )
    # then
    assert [(t.role, t.content) for t in turns] == [
        ("user", "I live in Beijing."),
        ("assistant", "Noted!"),
        ("user", "我对花生过敏"),
        ("user", "I moved to Shenzhen."),
    ]
