from __future__ import annotations

import pytest

from reviewer.rules.clause import clause_align, clauses_split, part_of_fact, tokens

YOGA = "Been busy volunteering at the homeless shelter… Just started doing aerial yoga, have you tried it?"


def test_a_quote_splits_into_sentences_and_clauses():
    clauses = clauses_split(YOGA)
    assert [c.text for c in clauses] == [
        "Been busy volunteering at the homeless shelter…",
        "Just started doing aerial yoga",
        "have you tried it?",
    ]
    assert [c.sentence for c in clauses] == [0, 1, 1]
    assert [c.text for c in clauses_split("你好！我住在深圳，你呢？")] == ["你好！", "我住在深圳", "你呢？"]


def test_a_coordinated_main_clause_is_its_own_clause():
    texts = [
        c.text for c in clauses_split("My parents taught me survival skills and I walk dogs for a living.")
    ]
    assert texts == ["My parents taught me survival skills", "and I walk dogs for a living."]


@pytest.mark.parametrize(
    ("key", "value", "clause"),
    [
        ("hobby", "aerial yoga", "Just started doing aerial yoga"),
        ("volunteering", "homeless shelter", "Been busy volunteering at the homeless shelter…"),
        ("diet", "素食", "我其实吃素已经三年了"),
    ],
)
def test_the_clause_that_carries_the_fact_is_aligned(key, value, clause):
    quote = YOGA if key != "diet" else "你好！我其实吃素已经三年了，你呢？"
    assert clause_align(quote=quote, key=key, value=value).own() == clause


def test_the_lead_holds_the_words_that_govern_the_clause():
    alignment = clause_align(
        quote="If I won the lottery, I would buy a boat.", key="wish", value="buy a boat"
    )
    assert alignment.own() == "I would buy a boat."
    assert alignment.lead() == "If I won the lottery, I would buy a boat."


def test_a_clause_after_a_comma_and_a_coordinator_is_not_governed_by_the_one_before():
    quote = "I want to be a lawyer, but I'm currently working on my family's horse farm."
    alignment = clause_align(quote=quote, key="work", value="family's horse farm")
    assert alignment.lead() == "but I'm currently working on my family's horse farm."


def test_without_the_comma_an_opening_wish_still_governs():
    alignment = clause_align(
        quote="I wish I love cooking but I also enjoy fishing.", key="enjoy", value="fishing"
    )
    assert alignment.lead() == "I wish I love cooking but I also enjoy fishing."


def test_the_tail_is_the_rest_of_the_sentence_and_the_next_one():
    alignment = clause_align(quote="I live on Mars. Just kidding! Anyway.", key="home", value="Mars")
    assert alignment.own() == "I live on Mars."
    assert alignment.tail() == "Just kidding!"


def test_a_single_clause_is_judged_whole_without_the_embedding_model():
    alignment = clause_align(quote="I moved to Shenzhen last month", key="home city", value="shenzhen")
    assert alignment.whole
    assert alignment.lead() == "I moved to Shenzhen last month"


def test_chinese_text_is_compared_by_characters_and_bigrams():
    assert {"深圳", "素"} <= tokens("我住在深圳，吃素") and "我" not in tokens("我")


@pytest.mark.parametrize(
    ("cue", "fact", "part"),
    [("want to", "want be to be a pilot", True), ("my father", "father was a pilot", True),
     ("if", "about me terrified of scorpions", False), ("打算", "计划 打算去日本", True), ("tomorrow", "home city mars", False)],
)  # fmt: skip
def test_a_cue_the_fact_itself_states_is_part_of_it(cue, fact, part):
    assert part_of_fact(cue, fact) is part
