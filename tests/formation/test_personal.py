"""Structural reading of first-person statements: keys from what is said, not from its wording."""

from __future__ import annotations

import pytest

from memorypr.formation.extract import Turn, extract_facts


def _facts(*turns: Turn) -> list[tuple[str, str | None, str]]:
    return [(f.key, f.value, f.polarity) for f in extract_facts(list(turns)).facts]


def _keys_and_values(text: str) -> list[tuple[str, str | None]]:
    """What a user's sentence gives, as (key, value)."""
    return [(key, value) for key, value, _ in _facts(Turn("user", text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have a big pet dog.", ("pet.dog", "a big pet dog", "set")),
        ("My favorite type of food is italian.", ("favorite_food", "italian", "set")),
        ("Blue is my favorite color.", ("favorite_color", "Blue", "set")),
        ("I want to be an actor when i grow up.", ("career_goal", "actor", "set")),
        ("I'm a baby delivery nurse.", ("occupation", "baby delivery nurse", "set")),
        ("I work as a nurse.", ("occupation", "nurse", "set")),
        ("I have three kids.", ("family.children", "three kids", "set")),
        ("I grew up in Kansas.", ("hometown", "Kansas", "set")),
        ("I'm diabetic.", ("health.diabetes", "diabetes", "set")),
        ("I am 25 years old.", ("age", "25", "set")),
        ("I'm vegan.", ("diet", "vegan", "set")),
        ("I no longer have a dog.", ("pet.dog", None, "unset")),
        ("I'm not a farmer anymore.", ("occupation", None, "unset")),
        ("我养了一只狗。", ("pet.dog", "一只狗", "set")),
        ("我最喜欢的颜色是蓝色。", ("favorite_color", "蓝色", "set")),
        ("我是老师。", ("occupation", "老师", "set")),
        ("我有两个孩子。", ("family.children", "两个孩子", "set")),
        ("我有糖尿病。", ("health.diabetes", "糖尿病", "set")),
    ],
)
def test_statements_are_keyed_by_what_they_are_about(text, expected):
    # when
    facts = _facts(Turn("user", text))
    # then
    assert facts == [expected]


def test_a_list_of_likes_is_one_fact_per_item():
    # when
    facts = _facts(Turn("user", "I like to grow roses, read books, and drink fancy tea."))
    # then
    assert [key for key, _, _ in facts] == ["likes_grow_rose", "likes_read_book", "likes_fancy_tea"]


@pytest.mark.parametrize(
    "text", ["I do too!", "Oh, I do too.", "I do the same thing.", "I do.", "That's what I do too."]
)
def test_i_do_as_a_reply_is_no_fact(text):
    # when
    facts = _facts(Turn("user", text))
    # then
    assert facts == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I don't tan, but I do drink fancy tea.", [("drink.fancy_tea", "drink fancy tea")]),
        ("I do yoga every morning.", [("do.yoga", "do yoga every morning")]),
    ],
)
def test_i_do_before_a_verb_stresses_it_and_before_a_thing_is_the_activity(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I love pizza with black olives.", [("likes_pizza", "likes pizza with black olives")]),
        ("I like hanging out with them.", [("likes_hanging_out", "likes hanging out")]),
        ("I like coffee with milk because it is creamy.", [("likes_coffee", "likes coffee with milk")]),
    ],
)
def test_what_a_liked_thing_is_with_stays_in_the_value_not_the_key(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm just working at the nursing home.", [("employer", "the nursing home")]),
        ("I've been working at Google for five years.", [("employer", "Google")]),
        (
            "I'm a 19 year old who works part time at Burger King.",
            [("age", "19"), ("employer", "Burger King"), ("work_arrangement", "part time")],
        ),
        ("I've never been a big fan of war movies.", [("likes_war_movie", "does not like war movies")]),
        ("I work for Johnson and Johnson.", [("employer", "Johnson and Johnson")]),
        ("I work at Barnes and Noble.", [("employer", "Barnes and Noble")]),
        ("I dance on the weekends.", [("dance.on_weekend", "dance on the weekends")]),
        ("I work at Google and I love it.", [("employer", "Google")]),
    ],
)
def test_progressive_perfect_and_relative_statements_of_work_and_taste(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I've been playing guitar since I was three.", [("play.guitar", "play guitar")]),
        ("I've been riding horses since I was a little kid.", [("ride.horse", "ride horses")]),
        ("I've been listening to jazz lately.", [("listen_to.jazz", "listen to jazz")]),
        ("I've been running for a few years now.", [("habit.run", "run")]),
        ("I've been playing since I was a kid.", []),
        ("I've been meaning to read it.", []),
        ("I've been trying to learn how to make pasta.", []),
    ],
)
def test_an_activity_kept_up_since_is_the_activity(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: the key is the one "I play guitar" gives
    assert facts == expected


def test_the_to_of_a_list_of_likes_is_every_items():
    # when
    facts = _keys_and_values("I like to hang out, go to the movies, and play video games, and the sea.")
    # then: the values read as the user said them
    assert facts == [
        ("likes_hang_out", "likes to hang out"),
        ("likes_movie", "likes to go to the movies"),
        ("likes_play_video_game", "likes to play video games"),
        ("likes_sea", "likes the sea"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I love making it.",
        "I like the way it can make you feel.",
        "I love their energy.",
        "I love them!",
        "我喜欢它",
    ],
)
def test_a_pronoun_object_with_nothing_to_stand_for_is_no_fact(text):
    # when
    facts = _facts(Turn("assistant", "Hello there."), Turn("user", text))
    # then
    assert facts == []


def test_a_pronoun_stands_for_what_the_previous_turn_asked_about():
    # when
    facts = _facts(Turn("assistant", "Do you like jazz?"), Turn("user", "I love it."))
    # then
    assert facts == [("likes_jazz", "likes jazz", "set")]


@pytest.mark.parametrize("text", ["Do you have a dog?", "Is your favorite color blue?", "你养狗吗？"])
def test_questions_give_no_fact(text):
    # when
    facts = _facts(Turn("user", text))
    # then
    assert facts == []


def test_assistant_turns_give_no_fact():
    # when
    facts = _facts(Turn("assistant", "I have a big pet dog and I'm a nurse."), Turn("user", "Nice."))
    # then
    assert facts == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a second first-person clause is read on its own, not swallowed by the first one's list
        (
            "I like to listen to classical music and I am a Christian.",
            [("likes_classical_music", "likes to listen to classical music"), ("religion", "christian")],
        ),
        ("I like country music, and I met Taylor Swift.", [("likes_country_music", "likes country music"),
                                                            ("met.taylor_swift", "met Taylor Swift")]),
        # a fan, a lover: a taste said as who one is
        ("I'm a big fan of the Insane Clown Posse.", [("likes_insane_clown_posse", "likes Insane Clown Posse")]),
        ("I'm also a big music fan.", [("likes_music", "likes music")]),
        ("I'm not a big fan of winter.", [("likes_winter", "does not like winter")]),
        # the user's family as the subject
        ("My father is in the army.", [("family.father.occupation", "is in the army")]),
        ("My dad was a construction worker.", [("family.dad.occupation", "was a construction worker")]),
        ("My mom passed away when I was young.", [("family.mom.deceased", "passed away")]),
        # who a relative or a pet is stays in the value
        ("I have a sister who's a pole dancer.", [("family.sister", "a sister who's a pole dancer")]),
        ("I have a cat named Spook.", [("pet.cat", "a cat named Spook")]),
        # a clause with a subject of its own is no item of the list before it, nor a taste of the user's
        ("I have a dog named Pedro and we love to go on hikes together.", [("pet.dog", "a dog named Pedro")]),
        ("I love nature poetry because it's so peaceful and calming.", [("likes_nature_poetry", "likes nature poetry")]),
        # a relative clause is the user's own
        (
            "I'm a retired gym teacher who volunteers at a soup kitchen.",
            [("occupation", "retired gym teacher"), ("volunteering", "at a soup kitchen")],
        ),
        # married with children, relationships, teams, work places, the long tail of activities
        ("I'm married with two kids.", [("family.children", "two kids"), ("marital_status", "married")]),
        ("I'm in an open polyamorous relationship.", [("marital_status", "open polyamorous relationship")]),
        ("I'm on the soccer team at my school.", [("member.soccer_team", "soccer team")]),
        ("I work in the insurance business.", [("employer", "the insurance business")]),
        ("I'm a stay at home dad.", [("occupation", "stay at home dad")]),
        ("I produce music for artists.", [("produce.music", "produce music")]),
        ("I workout four hours a day.", [("habit.workout", "workout four hours a day")]),
        # fears, places visited, plans and projects
        ("I was terrified of scorpions.", [("fear.scorpion", "scorpions")]),
        ("I've been to Spain a few times.", [("visited.spain", "Spain")]),
        ("I'm planning on going to business school.", [("plan.go", "going to business school")]),
        ("I'm working on building a robot.", [("project.building_robot", "building a robot")]),
        ("I'm currently looking for a new job.", [("job_search", "a new job")]),
        # outings are the thing liked, the value keeps the user's words
        ("I like to go for walks with my dog.", [("likes_walk", "likes to go for walks with my dog")]),
        ("I'm a 46 year old single dad.", [("age", "46"), ("identity.dad", "single dad")]),
        # each verb of a list of verbs is a statement, unless the first is a taste or a wish
        (
            "I listen to country music, drive a big truck, and work my parents' farm.",
            [("listen_to.country_music", "listen to country music"), ("vehicle", "big truck"),
             ("employer", "my parents' farm")],
        ),
        ("I'm in the 8th grade.", [("school_grade", "8th grade")]),
    ],
)  # fmt: skip
def test_constructions_of_real_conversation(text, expected):
    # when
    facts = _facts(Turn("user", text))
    # then
    assert sorted((key, value) for key, value, _ in facts) == sorted(expected)


@pytest.mark.parametrize(
    "text",
    [
        "I think that's great.",  # talk and thought state no fact
        "I know what you mean.",
        "I've never been to Nordstrom.",  # a negation is no visit
        "I'm glad to hear you're a coffee lover.",  # someone else's taste
        "I'm looking forward to it.",  # a plan that leans on a pronoun
        "I'm looking forward to getting to know you better.",  # about the conversation
        "I like the way you think!",  # a manner, no thing
        "I work for our local supermarket.",  # whose, the sentence does not say
        "I'm allergic to them.",
        "My friend lives in Tokyo.",  # a friend's fact is not the user's
        "My mom is coming to visit me tomorrow.",  # the family's plans are plans
    ],
)
def test_what_is_not_a_fact_about_the_user_stays_out(text):
    # when
    facts = _facts(Turn("assistant", "Hello there."), Turn("user", text))
    # then
    assert facts == []


def test_a_dog_walking_business_is_no_dog():
    # when
    facts = _facts(Turn("user", "I have a dog walking business."))
    # then
    assert facts == [("has.dog_walking_business", "a dog walking business", "set")]


def test_a_person_named_as_an_object_is_no_reported_speech():
    # when
    facts = _facts(Turn("user", "I like to read and hang out with my friends."))
    # then: both are the user's, not read as what the friends said
    assert [key for key, _, _ in facts] == ["likes_read", "likes_hang_out"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I love getting to see the animals grow and develop.",
            [("likes_animal_grow", "likes getting to see the animals grow and develop")],
        ),
        (
            "I love watching my players learn and grow, and hiking.",
            [
                ("likes_player_learn", "likes watching my players learn and grow"),
                ("likes_hiking", "likes hiking"),
            ],
        ),
        (
            "I love watching movies and reading.",
            [("likes_movie", "likes watching movies"), ("likes_reading", "likes reading")],
        ),
    ],
)
def test_what_a_seen_object_also_does_is_no_liked_thing_of_its_own(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: "… grow and develop" is one thing liked, not "likes develop"
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I like to play video games, watch sports, and hang out with my friends and family.",
            [
                ("likes_play_video_game", "likes to play video games"),
                ("likes_sport", "likes to watch sports"),
                ("likes_hang_out", "likes to hang out with my friends and family"),
            ],
        ),
        (
            "I like to take pictures of nature, landscapes, and architecture.",
            [("likes_take_picture", "likes to take pictures of nature, landscapes, and architecture")],
        ),
        (
            "I like to shop for clothes, shoes, and accessories.",
            [("likes_shop", "likes to shop for clothes, shoes, and accessories")],
        ),
        (
            "I love helping people get fit and healthy.",
            [("likes_people_get_fit", "likes helping people get fit and healthy")],
        ),
    ],
)
def test_another_object_of_the_same_preposition_or_another_state_is_no_liked_thing_of_its_own(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: "… with my friends and family" is one thing liked, not "likes family"; "… fit and healthy"
    # is one, not "likes healthy"
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I like to spend time with my family, read, and go for walks.",
            ["likes_spend_time", "likes_read", "likes_walk"],
        ),
        ("I love playing with my dog and hiking.", ["likes_playing_dog", "likes_hiking"]),
        ("I like to go for walks with my dog and listen to music.", ["likes_walk", "likes_music"]),
        ("I like to stay fit and swim.", ["likes_stay_fit", "likes_swim"]),
        (
            "I love anything by Jane Austen, especially Emma and Persuasion.",
            ["likes_emma", "likes_persuasion"],
        ),
        ("I love God of War and Skyrim.", ["likes_god_war", "likes_skyrim"]),
    ],
)
def test_a_doing_an_example_or_a_name_after_and_is_a_liked_thing_of_its_own(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: a verb, a gerund, an example or the "of" inside a name starts a new liked thing
    assert [key for key, _ in facts] == expected


@pytest.mark.parametrize(
    "text", ["I love seeing new places.", "I love to see new places.", "I love getting to see new places."]
)
def test_seeing_a_thing_is_keyed_by_the_thing(text):
    # when
    facts = _keys_and_values(text)
    # then: the key is the one "I love watching new places" gives, whatever the verb's form
    assert [key for key, _ in facts] == ["likes_new_place"]


def test_a_counted_possession_is_keyed_by_what_is_had():
    # when
    facts = _keys_and_values("We have a lot of cows, pigs, and chickens.")
    # then
    assert facts == [("pet.cow", "a lot of cows"), ("pet.pig", "pigs"), ("pet.chicken", "chickens")]


def test_a_share_of_something_is_no_possession():
    # when
    facts = _keys_and_values("We have some of the best food in the world.")
    # then
    assert facts == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I especially like rock and roll.", [("likes_rock_roll", "likes rock and roll")]),
        ("I love the peace and quiet.", [("likes_peace_quiet", "likes the peace and quiet")]),
        ("I love R&B and jazz.", [("likes_r_b", "likes R&B"), ("likes_jazz", "likes jazz")]),
        ("I love rock and blues.", [("likes_rock", "likes rock"), ("likes_blues", "likes blues")]),
        (
            "I do like to get out and about sometimes, though.",
            [("likes_get_out", "likes to get out and about")],
        ),
    ],
)
def test_a_pair_said_as_one_thing_is_one_liked_thing(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: "rock and roll" is no "likes roll"; "rock and blues" are still two
    assert facts == expected


@pytest.mark.parametrize("text", ["I'm a big fan.", "They're great dogs, I love mine."])
def test_a_liking_of_nothing_said_is_no_fact(text):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == []


def test_vague_doings_are_keyed_with_their_objects():
    # given: two different likes said with one vague verb
    facts = _facts(
        Turn("user", "I love working with kids."), Turn("user", "I also love working with my hands.")
    )
    # then: two keys, so the second is no update of the first
    assert [(key, value) for key, value, _ in facts] == [
        ("likes_working_kid", "likes working with kids"),
        ("likes_working_hand", "likes working with my hands"),
    ]


def test_an_activity_is_keyed_by_itself_wherever_it_is_done():
    # when
    facts = _keys_and_values("I love hiking in the mountains.")
    # then: the key "I love hiking" gives
    assert facts == [("likes_hiking", "likes hiking in the mountains")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I want to be smart when I grow up.", []),
        ("I want to become president.", [("career_goal", "president")]),
        ("I'm a feminist.", [("identity.feminist", "feminist")]),
    ],
)
def test_a_quality_or_an_outlook_is_no_career(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


def test_a_verb_of_a_list_that_goes_on_to_keeps_its_to():
    # when
    facts = _keys_and_values("I like to go gambling, grill outdoors, and mow my lawn.")
    # then
    assert facts == [
        ("likes_go_gambling", "likes to go gambling"),
        ("likes_grill_outdoors", "likes to grill outdoors"),
        ("likes_mow_lawn", "likes to mow my lawn"),
    ]


def test_the_examples_of_a_list_are_its_things():
    # when
    facts = _keys_and_values("I also have some vegetables, like tomatoes, peppers, and cucumbers.")
    # then: no "like tomatoes"
    assert [key for key, _ in facts] == ["has.vegetable", "has.tomato", "has.pepper", "has.cucumber"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm a good cook.", [("identity.cook", "good cook", "set")]),
        ("I'm a much better swimmer now.", [("identity.swimmer", "much better swimmer", "set")]),
        ("I'm not a very good cook, but I try my best.", []),
        ("I'm a nurse.", [("occupation", "nurse", "set")]),
    ],
)
def test_how_well_one_does_something_is_no_occupation(text, expected):
    # when
    facts = _facts(Turn("user", text))
    # then: "not a very good cook" must not end the user's occupation
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in a two bedroom apartment.", [("home", "a two bedroom apartment")]),
        ("I live in Denver.", [("home_city", "Denver")]),
    ],
)
def test_a_dwelling_is_no_city(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I met Taylor Swift the other day.", [("met.taylor_swift", "met Taylor Swift")]),
        ("I do math like a 10 year old.", [("do.math", "do math")]),
        (
            "I move into my new apartment next week.",
            [("move.new_apartment", "move into my new apartment next week")],
        ),
        ("I came over.", []),
        ("I fell in love.", []),
    ],
)
def test_a_doing_is_keyed_by_what_is_done_not_when_or_like_what(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have a great dog.", [("pet.dog", "a great dog")]),
        ("I have a nice car.", [("has.nice_car", "a nice car")]),
        ("I have a long day tomorrow.", []),
        ("I have a great time with my friends.", []),
        ("I have a hard time picking just one favorite song.", []),
    ],
)
def test_a_thing_praised_is_had_but_how_a_time_goes_is_no_possession(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: "a great dog" is a dog the user has; "a long day" is no thing had
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I just like to skate around and have fun.", "likes to have fun"),
        ("I love getting to perform for people and share my music.", "likes to share my music"),
        ("I'm also a big fan of fish and chips.", "likes fish and chips"),
    ],
)
def test_a_later_doing_of_a_list_reads_as_a_doing(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: "likes to have fun", not "likes have fun"; a dish is no doing
    assert facts[-1][1] == expected


@pytest.mark.parametrize(
    "text",
    [
        "I like how it's both professional and stylish.",
        "I love the way they can be so gentle and loving.",
        "I love it when it's made with ricotta cheese and lots of sauce.",
        "I love how you never know what's going to happen next.",
    ],
)
def test_a_manner_of_something_named_elsewhere_is_no_liked_thing(text):
    # when
    facts = _keys_and_values(text)
    # then: no "likes stylish", "likes loving" or "likes lots of sauce"
    assert facts == []


def test_how_a_named_thing_is_is_still_liked():
    # when
    facts = _keys_and_values("I love how chewy chocolate chip cookies are.")
    # then: the cookies are named here, so the liking is the user's
    assert [value for _, value in facts] == ["likes how chewy chocolate chip cookies are"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I want to make a quilt.", "plan.make"),
        ("I'm looking forward to making a quilt.", "plan.make"),
        ("I want to dance.", "plan.dance"),
        ("I want to see more of the world.", "plan.see"),
        ("I want to focus on my career.", "plan.focus"),
        ("I dance every day.", "habit.dance"),
        ("I go skating every weekend.", "habit.skate"),
    ],
)
def test_a_verb_in_a_key_is_a_word_whatever_its_form(text, key):
    # when
    facts = _keys_and_values(text)
    # then: "plan.make" for "to make" and "making" alike, never "plan.mak", "plan.s" or "plan.focu"
    assert [k for k, _ in facts] == [key]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm a nurse myself.", [("occupation", "nurse")]),
        ("I'm a Buddhist myself.", [("religion", "buddhist")]),
        ("I'm a waitress during the day.", [("occupation", "waitress")]),
        ("I'm a little nervous.", []),
        ("I'm a little bit tired.", []),
        ("I'm a little girl.", [("identity.girl", "little girl")]),
        (
            "I love finding clothes that make me feel good about myself.",
            [("likes_finding_clothes", "likes finding clothes that make me feel good about myself")],
        ),
    ],
)
def test_who_the_user_is_without_how_they_feel_or_the_stress_on_myself(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: "I'm a nurse myself" is an occupation, not "identity.myself"; "a little nervous" is no one
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm glad we have some things in common.", []),
        ("We have similar taste in music!", []),
        ("I have a black lab named Trooper.", [("pet.dog", "a black lab named Trooper")]),
        ("I have a mutt.", [("pet.dog", "a mutt")]),
    ],
)
def test_what_the_speakers_share_is_no_possession_and_a_breed_is_a_dog(text, expected):
    # when
    facts = _keys_and_values(text)
    # then: no "has.thing" = "some things in common"; "a black lab" is a dog, not "has.black_lab"
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Colorado right now.", [("home_city", "Colorado")]),
        ("I'm working on a quilt right now.", [("project.quilt", "a quilt")]),
    ],
)
def test_right_now_is_no_part_of_the_value(text, expected):
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I like to play a lot of racing games.", "likes_play_racing_game"),
        ("I like to read all kinds of books.", "likes_read_book"),
        ("I like to play a lot of Call of Duty.", "likes_play_call_duty"),
        ("I love The Lord of the Rings.", "likes_lord_rings"),
    ],
)
def test_a_key_holds_the_thing_not_how_much_of_it(text, key):
    # when
    facts = _keys_and_values(text)
    # then: "a lot of" games and "Call of Duty" are no "likes_play"
    assert [found for found, _ in facts] == [key]


def test_a_dwelling_in_a_named_city_gives_both():
    # when
    facts = _keys_and_values("I live in an apartment in Chicago.")
    # then
    assert facts == [("home", "an apartment in Chicago"), ("home_city", "Chicago")]


def test_a_negated_list_joined_by_or_negates_each_item() -> None:
    # given: "or" under a negation is neither of them; "and" may be the two together
    # when / then
    assert _keys_and_values("I don't like video games or reading.") == [
        ("likes_video_game", "does not like video games"),
        ("likes_reading", "does not like reading"),
    ]
    assert _keys_and_values("I don't like cats and dogs.") == [("likes_cat", "does not like cats")]


def test_a_verb_without_an_object_gives_no_liked_thing() -> None:
    # given: "drink" has no object here; "or do drugs" is the second verb
    # when / then
    assert _keys_and_values("I don't drink or do drugs.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I love Charles Dickens.", ("likes_charles_dickens", "likes Charles Dickens")),
        ("I love the Rolling Stones.", ("likes_rolling_stones", "likes the Rolling Stones")),
        ("I love Ender's Game.", ("likes_ender_game", "likes Ender's Game")),
        ("I love dogs.", ("likes_dog", "likes dogs")),
    ],
)
def test_a_name_keeps_its_words_in_the_key(text: str, expected: tuple[str, str]) -> None:
    # given: every word of a key used to be made singular, names too ('likes_charle_dicken')
    # when / then
    assert _keys_and_values(text) == [expected]


def test_how_sure_the_user_is_is_no_part_of_the_value() -> None:
    # when / then
    assert _keys_and_values("My favorite genre is probably death metal.") == [
        ("favorite_genre", "death metal")
    ]


def test_a_doing_whose_object_is_a_possessive_pronoun_gives_nothing() -> None:
    # given: "mine" is what the other speaker named
    # when / then
    assert _keys_and_values("I like to get mine from the corner shop.") == []
    assert _keys_and_values("I love hanging out with a friend of mine.") == [
        ("likes_hanging_out", "likes hanging out with a friend of mine")
    ]


def test_the_name_of_a_pet_or_a_relative_is_kept_under_its_key() -> None:
    # given: "my son's name" read as another person's speech, and nothing was kept
    # when / then
    assert _keys_and_values("My son's name is John and my daughter's name is Mary.") == [
        ("family.son.name", "John"),
        ("family.daughter.name", "Mary"),
    ]
    assert _keys_and_values("My turtle's name is Larry.") == [("pet.turtle.name", "Larry")]
    # and someone else's thing is still theirs, and a name of no one of the user's is no fact
    assert _keys_and_values("My sister's dog is a poodle.") == []
    assert _keys_and_values("My boss's name is Tom.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I was born in 1922.", ("birth_date", "1922")),
        ("I was born on July 4th, 1990.", ("birth_date", "July 4th, 1990")),
        ("I was born in the 80s.", ("birth_date", "the 80s")),
        ("I was born in Ohio.", ("hometown", "Ohio")),
        ("I was born in Mayfield.", ("hometown", "Mayfield")),
    ],
)
def test_born_in_a_year_is_a_birth_date_not_a_hometown(text: str, expected: tuple[str, str]) -> None:
    # given: "I was born in 1922" gave hometown = 1922
    # when / then
    assert _keys_and_values(text) == [expected]
