from __future__ import annotations

from memorypr.retrieval.query import key_part_terms, key_terms, name_inside, query_terms, query_tokens


def test_key_part_terms_name_entities_of_several_words_as_keys_spell_them():
    # given: keys are slugs ('joan_didion.educated_at', 'university_of_california_berkeley.…')
    # when
    didion = key_part_terms("Which university was Joan Didion educated at?")
    berkeley = key_part_terms("Who studied at the University of California, Berkeley?")
    accented = key_part_terms("What is the country of citizenship of Cédric Klapisch?")
    # then
    assert "joan_didion" in didion
    assert "educated_at" in didion
    assert "university_of_california_berkeley" in berkeley
    assert "cédric_klapisch" in accented


def test_key_part_terms_leave_out_lone_stop_words():
    # when
    terms = key_part_terms("What is the capital of Japan?")
    # then
    assert "japan" in terms and "capital" in terms
    assert not {"what", "is", "the", "of"} & set(terms)
    assert "capital_of_japan" in terms  # a stop word inside a run is part of a name


def test_key_part_terms_use_the_segmenter_words_for_chinese():
    # when
    terms = key_part_terms("日本的官方语言是什么？")
    # then
    assert "日本" in terms
    assert "官方语言" in terms
    assert "的" not in terms


def test_key_terms_also_name_keys_written_without_underscores():
    # when
    terms = key_terms("home city")
    # then
    assert {"home_city", "homecity", "home.city", "home-city"} <= set(terms)


def test_query_tokens_drop_stop_words_and_lone_chinese_characters():
    # when
    english = query_tokens("What is the official language of Japan?")
    chinese = query_tokens("日本的官方语言是什么？")
    # then
    assert english == ["official", "language", "japan"]
    assert "日本" in chinese and "官方语言" in chinese
    assert not [t for t in chinese if len(t) == 1]


def test_query_tokens_drop_what_an_apostrophe_leaves_of_possessives_and_contractions():
    # when
    tokens = query_tokens("What's the user's favorite food? She doesn't eat meat; we'll see, I'm sure")
    # then: "s", "t", "ll" and "m" would have to be in a fact's text for every word to match
    assert tokens == ["favorite", "food", "eat", "meat", "see", "sure"]


def test_name_inside_is_a_run_of_whole_words_or_of_chinese_characters():
    assert name_inside("windows_server", "windows_server_2008")
    assert name_inside("server_2008", "windows_server_2008")
    assert name_inside("日本", "日本国")
    assert not name_inside("japan", "japanese_language")
    assert not name_inside("windows_server", "windows_server")
    assert not name_inside("server_windows", "windows_server_2008")


def test_a_querys_terms_are_worked_out_once_and_are_those_of_each_function():
    # given a question
    text = "What is the official language of Japan?"
    # when its terms are asked for twice
    first = query_terms(text)
    again = query_terms(text)
    # then they are what each function gives, and the second time the same, not worked out again
    assert first == (tuple(query_tokens(text)), tuple(key_part_terms(text)), tuple(key_terms(text)))
    assert again is first
    assert "official_language" in first.key_parts and "japan" in first.keys


def test_key_terms_leave_out_runs_of_stop_words_alone():
    # given: each whole key is one lookup of the key index per retrieval
    # when
    terms = key_terms("what is the user's bank?")
    # then: no key is made of "what", "is", "the", "user" and "s" alone
    assert not {"what_is", "is_the", "the_user", "user_s", "what_is_the_user_s", "what.is", "whatis"} & set(
        terms
    )
    # and a run that names something keeps its stop words, as keys do ('capital_of', 'educated_at')
    assert {"bank", "user_s_bank", "s.bank"} <= set(terms)
    assert {"capital_of", "capital_of_japan", "capital.of"} <= set(key_terms("the capital of Japan"))


def test_query_tokens_leave_out_like_which_every_preference_says() -> None:
    # given: preferences are stored as "likes jazz", "does not like cats"
    # when
    tokens = query_tokens("does the user like jazz?")
    # then
    assert tokens == ["jazz"]
