from __future__ import annotations

import pytest

from engram.agent.extract import LLMExtractor, NopExtractor, RuleExtractor, parse_fact_lines
from engram.llm.openai import OpenAIChat
from engram.testing.llm_servers import OpenAICompatServer, Reply


def test_sclaw_line_parsing():
    facts = parse_fact_lines("- User prefers dark mode\n\n* Name is Alice\n1. Lives in Oslo\n• Likes tea\n", source="s1")
    assert [f.content for f in facts] == ["User prefers dark mode", "Name is Alice", "Lives in Oslo", "Likes tea"]
    assert all(f.source == "s1" for f in facts)
    ids = [f.id for f in facts]
    assert len(set(ids)) == 4
    nano, index, seq = ids[1].split("-")
    assert int(nano) > 0 and index == "1" and int(seq) > 0
    assert parse_fact_lines("NONE") == [] and parse_fact_lines("none.") == [] and parse_fact_lines("") == []


def test_ids_unique_across_calls():
    ids = [f.id for _ in range(50) for f in parse_fact_lines("a\nb")]
    assert len(set(ids)) == 100


def test_llm_extractor_sends_sclaw_prompt():
    with OpenAICompatServer(Reply.say("- The user is vegetarian\n- The user lives in Lyon"), Reply.say("NONE")) as server:
        extractor = LLMExtractor(OpenAIChat("m", base_url=server.base_url))
        facts = extractor.extract("[Memory context]\n- x: y\n[/Memory context]\n\nI'm vegetarian, living in Lyon", "Noted!")
        assert [f.content for f in facts] == ["The user is vegetarian", "The user lives in Lyon"]
        prompt = server.requests[0].body["messages"][0]["content"]
        assert prompt.startswith("Analyze the following exchange and extract important facts about the user.")
        assert 'return "NONE"' in prompt and "Memory context" not in prompt
        assert extractor.extract("hello", "hi") == []
    assert NopExtractor().extract("My name is Bob") == []


@pytest.mark.parametrize("text, key, content", [
    ("My name is alice.", "user-name", "The user's name is Alice."),
    ("Hi, call me Bob", "user-name", "The user's name is Bob."),
    ("My favorite editor is vim.", "user-favourite-editor", "The user's favourite editor is vim."),
    ("I prefer tea over coffee", "user-prefers-coffee-or-tea", "The user prefers tea over coffee."),
    ("I prefer Python for scripting.", "user-prefers-for-scripting", "The user prefers Python for scripting."),
    ("I don't like olives.", "user-opinion-olives", "The user does not like olives."),
    ("I love hiking", "user-opinion-hiking", "The user loves hiking."),
    ("I live in Berlin.", "user-location", "The user lives in Berlin."),
    ("I work at Acme Corp.", "user-workplace", "The user works at Acme Corp."),
    ("I'm a software engineer", "user-occupation", "The user works as a software engineer."),
    ("I decided to learn Rust", "decision-learn-rust", "The user decided to learn Rust."),
])
def test_rule_extractor_statements(text, key, content):
    facts = RuleExtractor().extract(text)
    assert [(f.key, f.content) for f in facts] == [(key, content)]


def test_rule_extractor_ignores_questions_and_small_talk():
    ex = RuleExtractor()
    assert ex.extract("What is my name?") == []
    assert ex.extract("Hello there, how are you") == []
    assert ex.extract("I like it. I love you too. I prefer that.") == []
    assert ex.extract("[Memory context]\n- user-name: My name is Zed\n[/Memory context]\n\nhello") == []


def test_rule_extractor_several_facts_and_same_slot_changes():
    facts = RuleExtractor().extract("My name is Alice. I live in Paris, and I hate mornings.")
    assert [f.key for f in facts] == ["user-name", "user-location", "user-opinion-mornings"]
    a, b = RuleExtractor().extract("I like olives")[0], RuleExtractor().extract("I don't like olives")[0]
    assert a.key == b.key and a.content != b.content
    c, d = RuleExtractor().extract("I prefer tea over coffee")[0], RuleExtractor().extract("I prefer coffee to tea")[0]
    assert c.key == d.key


@pytest.mark.parametrize(("text", "expected"), [
    ("I love sci-fi movies and I live in Lisbon.",
     [("user-opinion-sci-fi-movies", "The user loves sci-fi movies."), ("user-location", "The user lives in Lisbon.")]),
    ("I like tea and I hate coffee",
     [("user-opinion-tea", "The user likes tea."), ("user-opinion-coffee", "The user does not like coffee.")]),
    ("I am John Smith and I work at Acme",
     [("user-name", "The user's name is John Smith."), ("user-workplace", "The user works at Acme.")]),
    ("Hi, I'm Alice.", [("user-name", "The user's name is Alice.")]),
    ("I live in Porto now", [("user-location", "The user lives in Porto.")]),
    ("I like salt and pepper", [("user-opinion-salt-and-pepper", "The user likes salt and pepper.")]),
    ("I am tired", []),
    ("I'm Not sure", []),
    ("I'm a software engineer", [("user-occupation", "The user works as a software engineer.")]),
])
def test_rule_extractor_one_fact_per_statement_and_stated_names(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


@pytest.mark.parametrize("text", [
    "Don't remember that my PIN is 1234",
    "Please don't remember that my PIN is 1234.",
    "Do not remember this: I live in Mordor",
    "Never store that my name is Mallory",
    "don’t save that I work at Acme",
])
def test_a_negated_remember_stores_nothing_from_its_sentence(text):
    # QA: "Don't remember that my PIN is 1234" stored the PIN.
    assert RuleExtractor().extract(text) == []


def test_a_negated_remember_leaves_other_sentences_alone():
    facts = RuleExtractor().extract("My name is Ada. Don't remember that my PIN is 1234.")
    assert [f.key for f in facts] == ["user-name"]
    # A statement about the user's memory is not a request.
    facts = RuleExtractor().extract("I don't remember the address but I live in Oslo")
    assert [f.key for f in facts] == ["user-location"]


@pytest.mark.parametrize(("text", "expected"), [
    # QA: stored both "I live in Oslo." and "The user lives in Oslo."
    ("Please remember that I live in Oslo", [("user-location", "The user lives in Oslo.")]),
    ("Remember that my favourite editor is vim.", [("user-favourite-editor", "The user's favourite editor is vim.")]),
    ("Remember that the deploy server is atlas", [(None, "The deploy server is atlas.")]),
    ("Remember my name is Ada and I work at Acme",
     [("user-name", "The user's name is Ada."), ("user-workplace", "The user works at Acme.")]),
])
def test_a_remember_request_holding_a_specific_fact_stores_that_fact_only(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


@pytest.mark.parametrize("text", [
    "My name is not important", "My name is unimportant.", "My name is irrelevant",
    "My name is none of your business", "Call me nobody", "My name is a secret",
])
def test_refusals_are_not_names(text):
    # QA: "My name is not important" stored the name "Not Important".
    assert [f for f in RuleExtractor().extract(text) if f.key == "user-name"] == []


# --- statements mem0's fact extraction is built for, without an LLM ------------------------------

@pytest.mark.parametrize(("text", "key", "content"), [
    # dislikes said softly: the slot and words of "I hate X"
    ("I'm not a big fan of thriller movies.", "user-opinion-thriller-movies", "The user does not like thriller movies."),
    ("I am not a huge fan of horror films", "user-opinion-horror-films", "The user does not like horror films."),
    ("I'm no fan of jazz", "user-opinion-jazz", "The user does not like jazz."),
    ("I'm not keen on spicy food", "user-opinion-spicy-food", "The user does not like spicy food."),
    ("I really don't like olives", "user-opinion-olives", "The user does not like olives."),
    ("I don't really enjoy crowds", "user-opinion-crowds", "The user does not like crowds."),
    ("I can’t stand loud music", "user-opinion-loud-music", "The user does not like loud music."),
    ("I'm a big fan of jazz", "user-opinion-jazz", "The user likes jazz."),
    # plans: keyed by what is planned, not when
    ("I'm planning to watch a movie tonight.", "user-plan-watch-movie", "The user is planning to watch a movie tonight."),
    ("I'm planning to watch a movie tonight, any ideas", "user-plan-watch-movie",
     "The user is planning to watch a movie tonight."),
    ("I plan to visit Japan next year", "user-plan-visit-japan", "The user is planning to visit Japan next year."),
    ("I intend to learn Rust.", "user-plan-learn-rust", "The user is planning to learn Rust."),
    ("I'm going to watch a movie tomorrow", "user-plan-watch-movie", "The user is planning to watch a movie tomorrow."),
    ("I'm going to Paris next week", "user-plan-go-paris", "The user is planning to go to Paris next week."),
    ("I'm going to the gym tonight", "user-plan-go-gym", "The user is planning to go to the gym tonight."),
    ("I'm going hiking this weekend", "user-plan-go-hiking", "The user is planning to go hiking this weekend."),
    ("I'm planning a trip to Japan in May", "user-plan-trip-japan", "The user is planning a trip to Japan in May."),
    ("I'm not planning to go hiking tomorrow anymore", "user-plan-go-hiking",
     "The user is no longer planning to go hiking tomorrow."),
    # diet and health
    ("I'm vegetarian", "user-diet", "The user is vegetarian."),
    ("I'm a vegan.", "user-diet", "The user is vegan."),
    ("I am a pescatarian", "user-diet", "The user is pescatarian."),
    ("I'm not vegan anymore.", "user-diet", "The user is no longer vegan."),
    ("I'm on a keto diet", "user-diet", "The user is on a keto diet."),
    ("I don't eat meat", "user-eats-meat", "The user does not eat meat."),
    ("I no longer eat red meat", "user-eats-red-meat", "The user no longer eats red meat."),
    ("I never drink alcohol", "user-drinks-alcohol", "The user never drinks alcohol."),
    ("I am allergic to nuts", "user-allergy-nut", "The user is allergic to nuts."),
    ("I'm severely allergic to peanuts.", "user-allergy-peanut", "The user is allergic to peanuts."),
    ("I have a peanut allergy", "user-allergy-peanut", "The user has a peanut allergy."),
    ("I'm no longer allergic to penicillin.", "user-allergy-penicillin", "The user is no longer allergic to penicillin."),
    ("I'm lactose intolerant", "user-intolerance-lactose", "The user is lactose intolerant."),
    ("I'm gluten-intolerant.", "user-intolerance-gluten", "The user is gluten intolerant."),
    ("I have lactose intolerance", "user-intolerance-lactose", "The user is lactose intolerant."),
    # possessions, pets, family
    ("I have two cats", "user-has-cat", "The user has two cats."),
    ("I have a cat.", "user-has-cat", "The user has a cat."),
    ("I have a dog named Rex", "user-has-dog-rex", "The user has a dog named Rex."),
    ("I've got three kids.", "user-has-kid", "The user has three kids."),
    ("I have no kids", "user-has-kid", "The user has no kids."),
    ("I don't have any pets", "user-has-pet", "The user does not have any pets."),
    ("I own a motorbike", "user-has-motorbike", "The user has a motorbike."),
    ("My wife is called Anna.", "user-wife-name", "The user's wife is called Anna."),
    ("My wife's name is Anna", "user-wife-name", "The user's wife is called Anna."),
    ("My dog is named rex", "user-dog-name", "The user's dog is called Rex."),
    # mem0's plain strings: a sentence with no subject that starts with a verb the rules know
    ("Likes to play cricket on weekends", "user-opinion-play-cricket-on-weekends",
     "The user likes to play cricket on weekends."),
    ("likes to play cricket on weekends.", "user-opinion-play-cricket-on-weekends",
     "The user likes to play cricket on weekends."),
    ("Is allergic to nuts", "user-allergy-nut", "The user is allergic to nuts."),
    ("Is vegetarian", "user-diet", "The user is vegetarian."),
    ("Has two cats", "user-has-cat", "The user has two cats."),
    ("Doesn't eat meat", "user-eats-meat", "The user does not eat meat."),
    ("Lives in Pune", "user-location", "The user lives in Pune."),
    ("Works as a teacher", "user-occupation", "The user works as a teacher."),
    ("Is not a big fan of thrillers", "user-opinion-thrillers", "The user does not like thrillers."),
    ("Plans to visit Japan next year", "user-plan-visit-japan", "The user is planning to visit Japan next year."),
])
def test_rule_extractor_personal_facts(text, key, content):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == [(key, content)]


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm a vegetarian and I'm allergic to nuts.",
     [("user-diet", "The user is vegetarian."), ("user-allergy-nut", "The user is allergic to nuts.")]),
    ("I'm allergic to nuts, shellfish and penicillin.",  # each allergen its own slot
     [("user-allergy-nut", "The user is allergic to nuts."), ("user-allergy-shellfish", "The user is allergic to shellfish."),
      ("user-allergy-penicillin", "The user is allergic to penicillin.")]),
    ("I don't eat meat or fish anymore",
     [("user-eats-meat", "The user does not eat meat."), ("user-eats-fish", "The user does not eat fish.")]),
    ("I have a dog, two cats, and a hamster named Bob.",
     [("user-has-dog", "The user has a dog."), ("user-has-cat", "The user has two cats."),
      ("user-has-hamster-bob", "The user has a hamster named Bob.")]),
    ("I'm not a big fan of thriller movies but I love sci-fi movies.",
     [("user-opinion-thriller-movies", "The user does not like thriller movies."),
      ("user-opinion-sci-fi-movies", "The user loves sci-fi movies.")]),
    ("Loves sci-fi, hates thrillers",
     [("user-opinion-sci-fi", "The user loves sci-fi."), ("user-opinion-thrillers", "The user does not like thrillers.")]),
    ("Likes cricket and lives in Pune",
     [("user-opinion-cricket", "The user likes cricket."), ("user-location", "The user lives in Pune.")]),
])
def test_rule_extractor_several_personal_facts_in_one_statement(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


@pytest.mark.parametrize(("text", "expected"), [
    # A dot inside a word is the value's: these were stored cut at it ("The user's python version is 3.").
    ("My python version is 3.12", [("user-python-version", "The user's python version is 3.12.")]),
    ("My email is bob@example.com.", [("user-email", "The user's email is bob@example.com.")]),
    ("I like Node.js", [("user-opinion-node-js", "The user likes Node.js.")]),
    ("I prefer vim 9.1 for editing", [("user-prefers-for-editing", "The user prefers vim 9.1 for editing.")]),
    ("I'm planning to upgrade to Python 3.13 next week, any tips",
     [("user-plan-upgrade-python-3-13", "The user is planning to upgrade to Python 3.13 next week.")]),
    # ... and a stop before a space still ends the statement.
    ("I prefer vim. It is fast", [("user-prefers-vim", "The user prefers vim.")]),
    ("My site is example.org. I like tea.", [("user-site", "The user's site is example.org."),
                                             ("user-opinion-tea", "The user likes tea.")]),
])
def test_a_value_keeps_the_dots_inside_its_words(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


def test_each_thing_said_of_a_person_or_pet_is_its_own_slot_and_a_setting_keeps_one():
    # "my sister is a doctor" then "... allergic to cats" shared the slot user-sister: the second
    # replaced the first, which left recall (kept only as an earlier version).
    extract = RuleExtractor().extract
    said = [extract(text)[0] for text in ("My sister is a doctor", "My sister is allergic to cats", "my dog is a beagle",
                                          "My dog is shy")]
    assert [f.key for f in said] == ["user-sister-doctor", "user-sister-allergic-cats", "user-dog-beagle", "user-dog-shy"]
    assert said[0].content == "The user's sister is a doctor."
    assert extract("My sister is a doctor.")[0].key == "user-sister-doctor"  # said again: the same slot
    # A setting's value changes in place: one slot, whatever it holds.
    assert extract("My favourite editor is vim")[0].key == extract("My favourite editor is emacs")[0].key


def test_a_soft_dislike_is_the_same_slot_and_words_as_hate():
    hate, soft = RuleExtractor().extract("I hate mornings")[0], RuleExtractor().extract("I'm not a big fan of mornings")[0]
    assert (soft.key, soft.content) == (hate.key, hate.content) == ("user-opinion-mornings", "The user does not like mornings.")


def _kind(key: str | None) -> str:
    return "-".join((key or "").split("-")[:2])  # user-plan, user-diet, user-allergy, user-has ...


@pytest.mark.parametrize(("refused", "told"), [
    # questions, with or without "?"
    ("Am I allergic to nuts?", "I am allergic to nuts."),
    ("Am I allergic to nuts", "I am allergic to nuts"),
    ("Do I like sushi", "I like sushi"),
    ("Do I have two cats?", "I have two cats"),
    ("Is Alice vegetarian", "Is vegetarian"),
    ("Likes?", "Likes cricket"),
    # suppositions, wishes, doubts
    ("If I were vegetarian I would eat tofu.", "I'm vegetarian"),
    ("If I'm allergic to nuts, I should avoid this.", "I'm allergic to nuts"),
    ("I wish I had a dog", "I have a dog"),
    ("Maybe I'm lactose intolerant", "I'm lactose intolerant"),
    ("If I have time I'm going to watch a movie tonight", "I'm going to watch a movie tonight"),
    # other people
    ("My friend is vegetarian", "I'm vegetarian"),
    ("She is allergic to nuts", "Is allergic to nuts"),
    ("He likes cricket", "Likes cricket"),
    ("My friend has two cats", "I have two cats"),
    ("My sister doesn't eat meat", "Doesn't eat meat"),
    # requests not to remember
    ("Don't remember that I'm allergic to nuts", "I'm allergic to nuts"),
    ("Please don't store that I have two cats.", "I have two cats"),
    ("Never save that I'm planning to quit my job next month", "I'm planning to quit my job next month"),
    # not the statement its words look like
    ("I'm going to be late tonight", "I'm going to be in Paris tonight"),
    ("I'm going to need help tomorrow", "I'm going to visit my parents tomorrow"),
    ("I'm going to ask you something tomorrow", "I'm going to ask my boss for a raise tomorrow"),
    ("I'm going to the store", "I'm going to the store tonight"),  # no time: not a plan
    ("Is going to rain tonight", "Is planning to visit Paris tonight"),
    ("I have a meeting tomorrow", "I have a dog"),
    ("I have a question about my car", "I have a car"),
    ("I don't eat after 8pm", "I don't eat meat"),
    ("I'm not allergic to anything", "I'm not allergic to nuts"),
    ("I'm not a fan of it", "I'm not a fan of jazz"),
    ("I'm a vegan chef", "I'm a vegan"),
    ("Works for me", "Works at Acme"),
    ("Works at first, then crashes", "Works at Acme"),
])
def test_rule_extractor_refuses_what_is_not_a_statement_about_the_user(refused, told):
    facts = RuleExtractor().extract(told)
    assert facts, f"{told!r} is a fact"  # the same kind of fact, told, is one
    assert _kind(facts[0].key) not in {_kind(f.key) for f in RuleExtractor().extract(refused)}


def test_a_supposition_or_question_stores_nothing_at_all():
    ex = RuleExtractor()
    assert ex.extract("Do I like sushi") == [] and ex.extract("If my name is Bob, what then.") == []
    # a request phrased as a question is still a statement
    assert [f.key for f in ex.extract("Could you remember that I live in Oslo")] == ["user-location"]


# --- through mem0's facade, on a real SQLite file -----------------------------------------------------

MEM0_QUICKSTART = [  # mem0's python quickstart conversation
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]


@pytest.fixture
def mem0(engram):
    from engram.compat.mem0 import Memory

    memory = Memory(engram)
    yield memory
    memory.close()


def _memories(mem0, user_id: str) -> list[str]:
    return sorted(r["memory"] for r in mem0.get_all(user_id=user_id)["results"])


def test_mem0_quickstart_gives_mem0s_three_facts(mem0):
    added = mem0.add(MEM0_QUICKSTART, user_id="alice")["results"]
    assert [(r["memory"], r["event"]) for r in added] == [
        ("The user is planning to watch a movie tonight.", "ADD"),
        ("The user does not like thriller movies.", "ADD"),
        ("The user loves sci-fi movies.", "ADD"),
    ]
    assert len(_memories(mem0, "alice")) == 3


def test_mem0_plain_strings_of_its_docs(mem0):
    assert [r["memory"] for r in mem0.add("I'm a vegetarian and I'm allergic to nuts.", user_id="alex")["results"]] == [
        "The user is vegetarian.", "The user is allergic to nuts."]
    assert [r["memory"] for r in mem0.add("Likes to play cricket on weekends", user_id="alex")["results"]] == [
        "The user likes to play cricket on weekends."]


def test_an_allergy_said_twice_is_one_memory_and_each_allergen_its_own(mem0):
    first = mem0.add("I'm allergic to nuts", user_id="alex")["results"]
    assert mem0.add("I am allergic to nuts.", user_id="alex")["results"] == []  # said again: nothing new
    assert _memories(mem0, "alex") == ["The user is allergic to nuts."]
    mem0.add("I'm allergic to shellfish", user_id="alex")
    assert _memories(mem0, "alex") == ["The user is allergic to nuts.", "The user is allergic to shellfish."]
    # "no longer" changes that allergy, and only it
    changed = mem0.add("I'm no longer allergic to nuts", user_id="alex")["results"]
    assert [(r["id"], r["event"]) for r in changed] == [(first[0]["id"], "UPDATE")]
    assert _memories(mem0, "alex") == ["The user is allergic to shellfish.", "The user is no longer allergic to nuts."]


def test_a_new_plan_is_kept_beside_the_old_and_the_same_plan_retimed_updates_it(mem0):
    movie = mem0.add("I'm planning to watch a movie tonight", user_id="alice")["results"]
    hiking = mem0.add("I'm planning to go hiking tomorrow", user_id="alice")["results"]
    assert [r["event"] for r in movie + hiking] == ["ADD", "ADD"]
    assert _memories(mem0, "alice") == ["The user is planning to go hiking tomorrow.",
                                        "The user is planning to watch a movie tonight."]
    moved = mem0.add("I'm going to watch a movie tomorrow instead", user_id="alice")["results"]
    assert [(r["id"], r["event"]) for r in moved] == [(movie[0]["id"], "UPDATE")]
    dropped = mem0.add("I'm not planning to go hiking tomorrow anymore", user_id="alice")["results"]
    assert [(r["id"], r["event"]) for r in dropped] == [(hiking[0]["id"], "UPDATE")]
    assert _memories(mem0, "alice") == ["The user is no longer planning to go hiking tomorrow.",
                                        "The user is planning to watch a movie tomorrow instead."]


@pytest.mark.parametrize(("text", "expected"), [
    # An abbreviation's or an initial's dot ended the sentence: each was stored cut at it ("St.").
    ("I live in St. Louis", [("user-location", "The user lives in St. Louis.")]),
    ("I work at Acme Inc. in Berlin", [("user-workplace", "The user works at Acme Inc. in Berlin.")]),
    ("My favourite author is J. R. R. Tolkien",
     [("user-favourite-author", "The user's favourite author is J. R. R. Tolkien.")]),
    ("My doctor is Dr. Smith", [("user-doctor-dr-smith", "The user's doctor is Dr. Smith.")]),
    ("Dr. Smith is my doctor", [("user-doctor-dr-smith", "The user's doctor is Dr. Smith.")]),
    ("My neighbour is Mrs. Jones.", [("user-neighbour-mrs-jones", "The user's neighbour is Mrs. Jones.")]),
    ("My boss is Ms. Lee", [("user-boss-ms-lee", "The user's boss is Ms. Lee.")]),
    ("My name is Mr. Bean", [("user-name", "The user's name is Mr. Bean.")]),
    ("I like fruit, e.g. apples", [("user-opinion-fruit-e-g-apples", "The user likes fruit, e.g. apples.")]),
    # ... while a sentence after one still starts where it should.
    ("I work at Acme Inc. I like tea.", [("user-workplace", "The user works at Acme Inc."),
                                          ("user-opinion-tea", "The user likes tea.")]),
    ("I live in St. Louis. I like tea", [("user-location", "The user lives in St. Louis."),
                                         ("user-opinion-tea", "The user likes tea.")]),
    ("My grade is A. My name is Ada", [("user-grade", "The user's grade is A."), ("user-name", "The user's name is Ada.")]),
    ("This is my doctor. She is my sister", []),
])
def test_an_abbreviation_or_initial_does_not_end_a_sentence(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


def test_sentences_keep_abbreviations_whole():
    from engram.agent.stops import sentences

    assert sentences("Dr. Smith is my doctor. I live in St. Louis!\nOK") == [
        "Dr. Smith is my doctor.", "I live in St. Louis!", "OK"]
    # A request not to keep something covers its whole sentence, past an abbreviation.
    assert RuleExtractor().extract("Don't remember that Dr. Smith is my doctor") == []


@pytest.mark.parametrize("text", [
    "I'm planning to visit Japan", "I plan to visit Japan", "I'm planning on visiting Japan",
    "I plan on visiting Japan next year", "Plans to visit Japan", "I'm also planning on visiting Japan in May",
])
def test_a_plan_is_one_slot_whichever_form_of_its_verb(text):
    # QA: "I'm planning on visiting Japan" was user-plan-visiting-japan, "... to visit Japan" user-plan-visit-japan.
    assert [f.key for f in RuleExtractor().extract(text)] == ["user-plan-visit-japan"]


@pytest.mark.parametrize(("said", "base"), [
    ("I'm planning on moving to Berlin", "I'm planning to move to Berlin"),
    ("I'm planning on running a marathon", "I'm planning to run a marathon"),
    ("I'm planning on making pasta tonight", "I plan to make pasta"),
    ("I'm planning on travelling to Peru", "I'm planning to travel to Peru"),
    ("I'm planning on relocating to Porto", "I'm planning to relocate to Porto"),
    ("I'm planning on studying French", "I'm planning to study French"),
    ("I'm planning on installing Linux", "I'm planning to install Linux"),
    ("I'm planning on hopping on a train", "I'm planning to hop on a train"),
])
def test_planning_on_doing_is_the_slot_of_planning_to_do(said, base):
    (a,), (b,) = RuleExtractor().extract(said), RuleExtractor().extract(base)
    assert a.key == b.key and a.content != b.content  # the same plan, in the user's own words
    assert a.content.startswith("The user is planning on ")


def test_a_plan_said_in_another_form_updates_its_memory(mem0):
    first = mem0.add("I'm planning to visit Japan", user_id="alice")["results"]
    again = mem0.add("I'm planning on visiting Japan next spring", user_id="alice")["results"]
    assert [(r["id"], r["event"]) for r in again] == [(first[0]["id"], "UPDATE")]
    assert _memories(mem0, "alice") == ["The user is planning on visiting Japan next spring."]


@pytest.mark.parametrize(("text", "expected"), [
    # Someone else's words or beliefs about the user: were stored as the user's own facts.
    ("She said I'm vegetarian", []),
    ("He thinks I love jazz", []),
    ("My friend told me I like sushi", []),
    ("My friend told me he likes sushi", []),
    ("My sister says that I'm allergic to nuts.", []),
    ("According to my mum I live in Bergen", []),
    ("Anna has always said my name is Bob", []),
    ("I live in Oslo but my mum thinks I live in Bergen", [("user-location", "The user lives in Oslo.")]),
    # The user's own words, reported by the user, are the user telling.
    ("I told her I'm vegetarian", [("user-diet", "The user is vegetarian.")]),
    ("I've always said I live in Oslo", [("user-location", "The user lives in Oslo.")]),
    ("I think I'm allergic to nuts", [("user-allergy-nut", "The user is allergic to nuts.")]),
    ("Told her I'm vegetarian", [("user-diet", "The user is vegetarian.")]),
    ("You know I'm vegetarian", [("user-diet", "The user is vegetarian.")]),
    ("I have to say I love jazz", [("user-opinion-jazz", "The user loves jazz.")]),
    ("Let me tell you, I love jazz", [("user-opinion-jazz", "The user loves jazz.")]),
    ("Needless to say, I love jazz", [("user-opinion-jazz", "The user loves jazz.")]),
    ("That said, I love jazz", [("user-opinion-jazz", "The user loves jazz.")]),
    ("Truth be told, I love jazz", [("user-opinion-jazz", "The user loves jazz.")]),
    ("My mum would say I love jazz", []),
])
def test_someone_elses_words_about_the_user_are_not_the_users_facts(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


@pytest.mark.parametrize(("text", "key", "content"), [
    # Health conditions: none was read ("I have diabetes" stored nothing); one slot per condition.
    ("I have diabetes", "user-health-diabetes", "The user has diabetes."),
    ("I'm diabetic", "user-health-diabetes", "The user is diabetic."),
    ("I don't have diabetes", "user-health-diabetes", "The user does not have diabetes."),
    ("I'm not diabetic anymore.", "user-health-diabetes", "The user is no longer diabetic."),
    ("I have type 2 diabetes", "user-health-type-2-diabetes", "The user has type 2 diabetes."),
    ("I'm a type 2 diabetic", "user-health-type-2-diabetes", "The user is a type 2 diabetic."),
    ("I have asthma.", "user-health-asthma", "The user has asthma."),
    ("I no longer have asthma", "user-health-asthma", "The user no longer has asthma."),
    ("I was diagnosed with celiac disease", "user-health-celiac-disease", "The user was diagnosed with celiac disease."),
    ("I'm coeliac", "user-health-celiac-disease", "The user is coeliac."),
    ("I've been diagnosed with ADHD last year", "user-health-adhd", "The user was diagnosed with ADHD last year."),
    ("I was diagnosed with celiac disease, so I avoid gluten", "user-health-celiac-disease",
     "The user was diagnosed with celiac disease."),
    ("I suffer from migraines", "user-health-migraine", "The user suffers from migraines."),
    ("I suffer from back pain", "user-health-back-pain", "The user suffers from back pain."),
    ("I have high blood pressure", "user-health-high-blood-pressure", "The user has high blood pressure."),
    ("I have an eating disorder", "user-health-eating-disorder", "The user has an eating disorder."),
    ("I have Crohn's disease", "user-health-crohn-disease", "The user has Crohn's disease."),
    ("Has asthma", "user-health-asthma", "The user has asthma."),
])
def test_a_health_condition_is_a_fact_in_its_own_slot(text, key, content):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == [(key, content)]


@pytest.mark.parametrize("text", [
    "I have a question", "I have anxiety about the exam", "I have no disease", "My dad has diabetes",
    "Do I have asthma", "If I have diabetes I should know", "She said I have asthma", "I suffer from nothing",
    "Don't remember that I have diabetes",
])
def test_what_is_not_the_users_health_condition_is_not_one(text):
    assert [f for f in RuleExtractor().extract(text) if (f.key or "").startswith("user-health-")] == []


def test_a_condition_said_again_or_changed_is_its_memory_and_each_condition_its_own(mem0):
    first = mem0.add("I have asthma", user_id="bo")["results"]
    mem0.add("I'm diabetic", user_id="bo")
    assert mem0.add("I have asthma.", user_id="bo")["results"] == []  # said again: nothing new
    changed = mem0.add("I no longer have asthma", user_id="bo")["results"]
    assert [(r["id"], r["event"]) for r in changed] == [(first[0]["id"], "UPDATE")]
    assert _memories(mem0, "bo") == ["The user is diabetic.", "The user no longer has asthma."]
    # A request not to record health covers its own sentence only, as for every extractor (docs/agent.md).
    assert [r["memory"] for r in mem0.add("Never record my health. I have gout.", user_id="bo")["results"]] == [
        "The user has gout."]
