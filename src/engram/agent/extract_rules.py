"""The rule-based extractor's rules: which plain statements become which facts, without an LLM.

A rule is a pattern and a builder turning its match into facts ``(key, content, type)``, said of
"The user" ("I hate mornings" -> "The user does not like mornings."). The key is a *slot*: saying
the same thing again, or changing it ("I like olives", later "I don't like olives"), lands on the
same memory. The slots:

- ``user-name``, ``user-location``, ``user-workplace``, ``user-occupation``, ``user-<thing>``
  ("my favourite editor is vim"), ``user-<who>-<what>`` for a person or animal ("my sister is a
  doctor": one slot per thing said of them), ``user-<who>-name`` ("my wife is called Anna");
- ``user-opinion-<thing>``: likes, loves and dislikes, however softly said ("I'm not a big fan of
  X" is the same dislike as "I hate X"); ``user-prefers-...``; ``decision-<what>``;
- ``user-plan-<what>``: what is planned, without its time ("tonight"), so planning the same thing
  for another time, or giving it up, updates it while another plan is a memory of its own;
- ``user-diet`` (one diet: vegetarian, then vegan, replaces it), ``user-eats-<food>``,
  ``user-allergy-<allergen>`` and ``user-intolerance-<what>``: one slot per allergen, so "I'm no
  longer allergic to nuts" updates that allergy and leaves the others; ``user-health-<condition>``
  likewise ("I have diabetes", "I'm diabetic": one);
- ``user-has-<thing>`` ("I have two cats"; with ``-<name>`` when named: "a dog named Rex").

What no rule reads as a fact about the user (``RuleExtractor`` applies these to every rule):
questions, with or without "?" ("Do I like sushi"); what follows "if", "I wish" and the like in
a sentence ("If I were vegetarian ..."), or someone else saying or believing it ("She said I'm
..."); other people: rules start at "I" or "my", and a sentence with no subject ("Likes to play
cricket on weekends", mem0's plain-string style) is read as the user's only when it starts with a
verb these rules know (``statements.first_person``), never "He likes ...".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from engram.agent.stops import NOT_A_STOP, STOP

Built = tuple[str, str, str]  # (slot key, or "" for none; content; memory type)

# A value ends at punctuation, at ", and" / "but", or where "and" starts the user's next
# statement ("I love sci-fi and I live in Lisbon": two facts, not one love of everything after it).
# A full stop ends it only where it ends a sentence (``stops.STOP``, as sentences are split): one
# inside a word is the value's ("my python version is 3.12", "bob@example.com", "Node.js"), and so
# is an abbreviation's or an initial's ("St. Louis", "Acme Inc. in Berlin", "J. R. R. Tolkien").
_END_AT = rf"\s*(?:{STOP}|;|,\s*(?:and|but)\b|\s+but\b|\s+and\s+(?:i|i'm|i’m|my)\b|$)"
_END = rf"(?={_END_AT})"
_CHAR = rf"(?:[^.!?;\n]|[.!?](?=\S)|{NOT_A_STOP})"  # a character of a value: no stop
_VALUE = rf"(?P<value>{_CHAR}{{1,80}}?)"
_I_AM = r"\bi(?:'m|’m|\s+am)\s+"
_NEG_STATE = r"(?P<neg>not\s+|no\s+longer\s+)?"  # "I'm not ...", "I'm no longer ...": the same slot, changed


def _slug(text: str, max_words: int = 4) -> str:
    words = re.findall(r"[a-z0-9+#]+", text.lower())
    words = [w for w in words if w not in {"a", "an", "the", "my", "to", "of"}][:max_words]
    return "-".join(words) or "thing"


def _singular(word: str) -> str:
    """For slot keys only: "cats" and "a cat", "peanuts" and "a peanut allergy" share one slot."""
    irregular = {"children": "child", "grandchildren": "grandchild", "puppies": "puppy", "babies": "baby",
                 "bunnies": "bunny", "ponies": "pony", "wives": "wife", "tomatoes": "tomato", "potatoes": "potato"}
    if word in irregular:
        return irregular[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if re.search(r"(?:ch|sh|x|ss)es$", word):
        return word[:-2]
    if word.endswith("s") and not re.search(r"(?:ss|us|is)$", word) and len(word) > 3:
        return word[:-1]
    return word


def _clean(value: str) -> str:
    return value.strip().strip("\"'").rstrip(",")


# Words after a statement that change nothing in it: "I don't eat meat anymore", "allergic to eggs too".
_TRAILING = re.compile(r"\s+(?:anymore|any\s+more|at\s+all|either|too|as\s+well|these\s+days|now|again|ever|instead)$",
                       re.IGNORECASE)


def _negation(m: re.Match[str]) -> str:
    """ "not " or "no longer " as the user said it, for "The user is {neg}allergic to nuts."."""
    neg = (m.groupdict().get("neg") or "").lower().split()
    return "no longer " if "longer" in neg else ("not " if neg else "")


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    build: Callable[[re.Match[str]], Built | list[Built] | None]
    # A catch-all ("remember that ..."): stored as said only when no specific rule found a fact
    # inside its value ("remember that I live in Oslo" is the location, once).
    generic: bool = False

    def facts(self, m: re.Match[str]) -> list[Built]:
        """What the match says: a rule may find several facts in one statement ("allergic to nuts and eggs")."""
        built = self.build(m)
        return [] if built is None else built if isinstance(built, list) else [built]


def _rule(pattern: str, build: Callable[[re.Match[str]], Built | list[Built] | None], *, generic: bool = False) -> Rule:
    return Rule(re.compile(pattern, re.IGNORECASE), build, generic)


# --- names and "my X is Y" -------------------------------------------------------------------------

# "My name is not important", "call me nobody": a refusal to give a name, not a name.
_REFUSALS = frozenset("not no none nobody nothing never unimportant irrelevant secret private confidential unknown "
                      "withheld anonymous a an the".split())


def _proper_name(value: str) -> str | None:
    """ "alice smith" -> "Alice Smith"; None for what is not a name ("not important", a sentence)."""
    value = _clean(value)
    # Up to three words, and any initials or title before them ("J. R. R. Tolkien", "Mr. Bean").
    if not re.match(r"^[A-Za-z][\w'. -]{0,40}$", value) or len([w for w in value.split() if w[-1] != "."]) > 3:
        return None
    if value.split()[0].lower() in _REFUSALS:
        return None
    return " ".join(w[:1].upper() + w[1:] for w in value.split())


def _name(m: re.Match[str]) -> Built | None:
    value = _proper_name(m["value"])
    return None if value is None else ("user-name", f"The user's name is {value}.", "social")


# Words that follow "I'm" capitalised for emphasis or at a line start, not as a name.
_NOT_NAMES = frozenset("not so sorry just also really very still going back here there fine okay ok good sure happy "
                       "glad tired busy new done ready afraid from in at on with planning allergic intolerant "
                       "lactose gluten vegetarian vegan pescatarian pescetarian flexitarian diabetic asthmatic epileptic "
                       "coeliac celiac autistic dyslexic".split())


def _name_stated(m: re.Match[str]) -> Built | None:
    """ "I'm Alice": a name only when every word is capitalised as the user wrote it."""
    words = m["value"].split()
    if not words or not all(w[:1].isupper() for w in words) or words[0].lower() in _NOT_NAMES:
        return None
    return _name(m)


# The people and animals in a user's life. "My X is Y" of one of them tells one thing of many about
# them ("my sister is a doctor", "my sister is allergic to cats"), not the value of a setting ("my
# favourite editor is vim"): each is its own slot, or the second replaced the first.
_BEINGS = frozenset("""mother mom mum father dad parent parents sister brother sibling siblings wife husband partner
    boyfriend girlfriend fiance fiancé fiancee fiancée son daughter kid kids child children baby friend boss manager
    colleague coworker co-worker neighbour neighbor roommate flatmate grandmother grandma granny grandfather grandpa
    aunt uncle cousin niece nephew teacher doctor therapist dog cat puppy kitten pet hamster rabbit parrot bird
    horse""".split())


def _my_x_is(m: re.Match[str]) -> Built | None:
    thing, value = m["thing"].strip().lower(), _clean(m["value"])
    if thing in {"name"} or len(thing.split()) > 4:
        return None
    if re.search(r"['’]s name$", thing) or re.match(r"(?:called|named)\b", value, re.IGNORECASE):
        return None  # "my wife's name is Anna", "my dog is called Rex": the named rule's, one slot for both
    thing = thing.replace("favorite", "favourite")
    slot = f"user-{_slug(thing)}"
    if thing.split()[-1] in _BEINGS:  # a fact about them: slotted by what it says too
        slot = f"{slot}-{_slug(value)}"
    return slot, f"The user's {thing} is {value}.", "social"


# "This is my doctor", "She is my sister": not a name.
_NOT_SUBJECTS = frozenset("this that it he she they there here who what which someone somebody everyone nobody".split())


def _is_my(m: re.Match[str]) -> Built | None:
    """ "Dr. Smith is my doctor": what "My doctor is Dr. Smith" says, in its slot and words."""
    if m["value"].split()[0].lower() in _NOT_SUBJECTS or _proper_name(m["value"]) is None:
        return None
    return _my_x_is(m)


def _named(m: re.Match[str]) -> Built | None:
    who, name = " ".join(m["who"].lower().split()), _proper_name(m["value"])
    if name is None or who in {"name", "user"}:
        return None
    return f"user-{_slug(who)}-name", f"The user's {who} is called {name}.", "social"


# --- likes and dislikes ------------------------------------------------------------------------------

_VAGUE = frozenset("it that this them these those you him her one so too much very me us myself everyone everybody "
                   "anyone anybody nobody anything everything something nothing and or but".split())


def _vague(value: str) -> bool:
    """Objects that only make sense in context ("I like it") are not facts on their own."""
    words = value.lower().split()
    return not words or words[0] in _VAGUE


def _opinion(m: re.Match[str]) -> Built | None:
    value = _clean(m["value"])
    if _vague(value):
        return None
    verb = m["verb"].lower().replace("’", "'")
    negative = bool(m["neg"]) or verb in {"hate", "dislike", "can't stand", "cannot stand"}
    phrase = "does not like" if negative else ("loves" if verb == "love" else "likes")
    return f"user-opinion-{_slug(value)}", f"The user {phrase} {value}.", "preference"


def _fan(m: re.Match[str]) -> Built | None:
    """ "I'm (not) a big fan of X", "I'm (not) keen on / fond of X": the opinion rule's slot and words."""
    value = _clean(m["value"])
    if _vague(value):
        return None
    phrase = "does not like" if m["neg"] or m["no"] else "likes"
    return f"user-opinion-{_slug(value)}", f"The user {phrase} {value}.", "preference"


def _prefer(m: re.Match[str]) -> Built | None:
    value, purpose = _clean(m["value"]), m["purpose"]
    if _vague(value):
        return None
    if purpose:
        purpose = _clean(purpose)
        return f"user-prefers-for-{_slug(purpose)}", f"The user prefers {value} for {purpose}.", "preference"
    head = re.split(r"\s+(?:over|to|rather than|instead of)\s+", value, maxsplit=1)
    key = f"user-prefers-{_slug(head[0])}"
    if len(head) == 2:  # "X over Y": the slot is the pair, so "Y over X" later updates it
        key = "user-prefers-" + "-or-".join(sorted([_slug(head[0], 2), _slug(head[1], 2)]))
    return key, f"The user prefers {value}.", "preference"


# --- where the user lives and works; decisions; "remember that" ----------------------------------------

def _lives(m: re.Match[str]) -> Built | None:
    place = re.sub(r"\s+(?:now|these days|at the moment|currently)$", "", _clean(m["value"]), flags=re.IGNORECASE)
    return "user-location", f"The user lives in {place}.", "social"


_NOT_WORKPLACES = frozenset("first last least most all times once scale length random".split())


def _works(m: re.Match[str]) -> Built | None:
    value = _clean(m["value"])
    if _vague(value) or value.split()[0].lower().strip(",") in _NOT_WORKPLACES:  # "(that) works for me", "works at first"
        return None
    return "user-workplace", f"The user works {m['prep'].lower()} {value}.", "social"


def _job(m: re.Match[str]) -> Built | None:
    return "user-occupation", f"The user works as {m['art'] or ''}{_clean(m['value'])}.", "social"


def _decided(m: re.Match[str]) -> Built | None:
    value = _clean(m["value"])
    return f"decision-{_slug(value)}", f"The user decided to {value}.", "decision"


# "I don't remember the address", "you remember that trip": someone's memory, not a request.
_RECALLER_BEFORE = re.compile(r"\b(?:i|we|they|he|she|you)\s+(?:(?:do not|don't|don’t|can't|cannot|could not|couldn't|"
                              r"never|still|also|always|do|did)\s+)?$", re.IGNORECASE)


def _remember(m: re.Match[str]) -> Built | None:
    if _RECALLER_BEFORE.search(m.string[: m.start()]):
        return None
    value = _clean(m["value"])
    content = value[:1].upper() + value[1:]
    return None if len(value) < 3 else ("", content if content.endswith(".") else content + ".", "learned")


_JOBS = (r"(?:engineer|developer|programmer|designer|teacher|doctor|nurse|student|researcher|scientist|writer|"
         r"manager|lawyer|artist)")


# --- plans ---------------------------------------------------------------------------------------------

_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_PERIOD = rf"(?:morning|afternoon|evening|night|weekend|week|month|year|summer|winter|spring|autumn|fall|{_WEEKDAY})"
_WHEN = re.compile(
    rf"\b(?:tonight|today|tomorrow(?:\s+(?:morning|afternoon|evening|night))?|(?:this|next|coming|this\s+coming)\s+{_PERIOD}"
    rf"|on\s+(?:the\s+)?(?:{_WEEKDAY}|weekend)s?|in\s+(?:{_MONTH}|the\s+(?:morning|afternoon|evening)"
    r"|(?:a|an|one|two|three|a\s+few|\d+)\s+(?:days?|weeks?|months?|years?))|later(?:\s+today)?|soon"
    r"|at\s+\d{1,2}(?::\d\d)?(?:\s*[ap]m)?)\b", re.IGNORECASE)
# A plan ends at a comma too: "I'm planning to watch a movie tonight, any ideas" plans the movie only.
_PLAN_VALUE = rf"(?P<value>(?:(?!,){_CHAR}){{1,80}}?)(?=\s*,|{_END_AT})"
# "I'm going to X" is a plan only with a time, and not these: "I'm going to need help tomorrow".
_NOT_PLANS = frozenset("need have try let explain think die miss regret hate love like".split())
_BE_WHERE = frozenset("in at on away abroad out back home".split())  # "I'm going to be in Paris next week"
# "going to" a place rather than to do something: "I'm going to the gym tonight".
_PLACES = frozenset("the a an my our his her their bed school work church college university class town dinner lunch "
                    "breakfast practice".split())


def _base_verb(word: str) -> str:
    """ "visiting" -> "visit", for a plan's slot only (its words stay as said): "planning on visiting
    Japan" is the plan "to visit Japan". No lemmatiser is installed (nor worth a dependency for
    this), so the spelling rules of "-ing" do: a consonant doubled for it is one again ("running",
    British "travelling"; not "calling" or "adding"); a one-syllable stem ending in a single vowel
    and a consonant lost an "e" (a one-syllable verb without one doubles: "making", "hoping" but
    "hopping"), as did a stem ending in "v", "c" or "z" ("moving", "dancing"), and a longer one in
    "-at", "-or", "-ir", "-ur", "-is" ("relocating", "exploring", "retiring", "organising").
    A verb these miss keeps its own slot for its "-ing" form, as every verb did before."""
    stem = word[:-3]
    syllables = len(re.findall(r"[aeiouy]+", stem))
    if len(stem) > 3 and re.search(r"([b-df-hj-np-tv-z])\1$", stem) and (stem[-1] not in "lsfz" or
                                                                          (stem.endswith("ell") and syllables > 1)):
        return stem[:-1]
    if (re.search(r"[vcz]$", stem) or re.fullmatch(r"[^aeiouy]*[aeiouy][b-df-hj-np-tv]", stem)
            or (syllables > 1 and re.search(r"[^aeiou](?:at|or|ir|ur|is)$", stem))):
        return stem + "e"
    return stem


def _plan(activity: str, neg: str, prep: str = "to") -> Built | None:
    activity = _clean(activity)
    if _vague(activity) or re.search(r"\byou(?:r|rs)?\b", activity, re.IGNORECASE):  # talk to the assistant
        return None
    if re.search(r"\s+any\s*more$", activity, re.IGNORECASE):  # "I'm not planning to ... anymore"
        activity, neg = re.sub(r"\s+any\s*more$", "", activity, flags=re.IGNORECASE), neg and "no longer "
    what = _WHEN.sub(" ", _TRAILING.sub("", activity)).split()
    if prep.lower() == "on" and what and re.fullmatch(r"[a-z]{2,}ing", what[0].lower()):  # "planning on visiting ..."
        what[0] = _base_verb(what[0].lower())
    what = _slug(" ".join(what))
    return f"user-plan-{what}", f"The user is {neg}planning {prep.lower()} {activity}.", "decision"


def _planning(m: re.Match[str]) -> Built | None:
    return _plan(m["value"], _negation(m), m["prep"])


def _going(m: re.Match[str]) -> Built | None:
    value = _clean(m["value"])
    words = value.split()
    if not words or not _WHEN.search(value):
        return None
    first = words[0]
    if m["to"] is None:  # "I'm going hiking tomorrow"
        activity = f"go {value}" if first.lower().endswith("ing") and len(first) > 4 else None
    elif first[:1].isupper() or first.lower() in _PLACES:  # "I'm going to Paris next week"
        activity = f"go to {value}"
    elif first.lower() in _NOT_PLANS or (first.lower() == "be" and " ".join(words[1:2]).lower() not in _BE_WHERE):
        activity = None  # "I'm going to need help tomorrow", "I'm going to be late tonight"
    else:
        activity = value
    return None if activity is None else _plan(activity, _negation(m))


# --- diet and health -----------------------------------------------------------------------------------

_DIETS = (r"(?:lacto-ovo[\s-]+vegetarian|lacto-vegetarian|ovo-vegetarian|vegetarian|raw\s+vegan|vegan|pescatarian|"
          r"pescetarian|flexitarian|fruitarian|plant-based)")
_STATE_TAIL = r"(?P<tail>\s+(?:now|too|as\s+well|these\s+days|again|anymore|any\s+more))?"


def _state_negation(m: re.Match[str]) -> str:
    neg = _negation(m)
    return "no longer " if neg and re.search(r"any\s*more", m["tail"] or "", re.IGNORECASE) else neg  # "not ... anymore"


def _diet(m: re.Match[str]) -> Built | None:
    return "user-diet", f"The user is {_state_negation(m)}{' '.join(m['diet'].lower().split())}.", "preference"


def _diet_named(m: re.Match[str]) -> Built | None:
    """ "I'm on a keto diet", "I follow a vegan diet": the one diet slot."""
    diet = " ".join(m["diet"].lower().split())
    if _vague(diet):
        return None
    article = "an" if diet[0] in "aeiou" else "a"
    verb = "follows" if m["follow"] else f"is {_state_negation(m)}on"
    return "user-diet", f"The user {verb} {article} {diet} diet.", "preference"


# "I don't eat much", "I don't eat after 8": not a food.
_NOT_FOODS = frozenset("much a lot out after before at in on during until till here there anything enough well fast "
                       "late early properly right when while with like any".split())
_LIST_SEP = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|nor)\s+", re.IGNORECASE)


def _items(value: str) -> list[str]:
    """ "nuts, shellfish and eggs too" -> ["nuts", "shellfish", "eggs"]."""
    items = [_clean(_TRAILING.sub("", item)) for item in _LIST_SEP.split(_clean(value))]
    return [item for item in items if item and len(item.split()) <= 4]


def _item_slug(item: str) -> str:
    return "-".join(_singular(w) for w in _slug(item).split("-"))


def _not_eaten(m: re.Match[str]) -> list[Built] | None:
    said = " ".join(m["neg"].lower().replace("’", "'").split())
    verb = m["verb"].lower()
    phrase = {"no longer": f"no longer {verb}s", "can't": f"cannot {verb}", "cannot": f"cannot {verb}",
              "never": f"never {verb}s"}.get(said, f"does not {verb}")
    items = _items(m["value"])
    if not items or any(_vague(i) or i.split()[0].lower() in _NOT_FOODS for i in items):
        return None
    return [(f"user-{verb}s-{_item_slug(i)}", f"The user {phrase} {i}.", "preference") for i in items]


def _allergic(m: re.Match[str]) -> list[Built] | None:
    neg, items = _negation(m), _items(m["value"])
    if not items or any(_vague(i) for i in items):
        return None
    return [(f"user-allergy-{_item_slug(i)}", f"The user is {neg}allergic to {i}.", "social") for i in items]


def _allergy(m: re.Match[str]) -> Built | None:
    """ "I have a peanut allergy": the slot of "I'm allergic to peanuts"."""
    item = _clean(m["value"])
    if _vague(item):
        return None
    return f"user-allergy-{_item_slug(item)}", f"The user has {m['art'].lower()} {item} allergy.", "social"


def _intolerant(m: re.Match[str]) -> Built | None:
    what = _clean(m["value"]).lower()
    if _vague(what):
        return None
    neg, to = _negation(m), m.groupdict().get("to")
    content = f"The user is {neg}intolerant {to.lower()} {what}." if to else f"The user is {neg}{what} intolerant."
    return f"user-intolerance-{_item_slug(what)}", content, "social"


_INTOLERANCES = r"(?P<value>lactose|gluten|fructose|histamine|dairy|wheat)"

# Health conditions, as mem0's extraction keeps them: one slot per condition (``user-health-<it>``),
# as for allergies, so "I no longer have asthma" updates that one. "I have ..." is a condition only
# for a known one ("I have a question" is not), or a disease, syndrome or disorder by that word;
# a diagnosis or "I suffer from" is one whatever it names.
_CONDITIONS = (r"(?:(?:type\s+[12]\s+|gestational\s+)?diabetes|pre-?diabetes|asthma|c(?:o|oe|e)liac(?:\s+disease)?|"
               r"epilepsy|hypertension|(?:high|low)\s+blood\s+pressure|high\s+cholesterol|migraines?|"
               r"(?:rheumatoid\s+|psoriatic\s+|osteo)?arthritis|eczema|psoriasis|adhd|autism|dyslexia|depression|"
               r"anxiety|ibs|copd|(?:[a-z]+\s+)?cancer|hypothyroidism|hyperthyroidism|lupus|multiple\s+sclerosis|pcos|"
               r"endometriosis|gout|sleep\s+apno?ea|insomnia|tinnitus|an(?:a)?emia|hiv|hepatitis\s+[abc]|fibromyalgia|"
               r"long\s+covid|ocd|ptsd|[a-z'’-]+\s+(?:disease|syndrome|disorder))")
# "I'm diabetic": the condition's slot, by its noun.
_CONDITION_OF = {"diabetic": "diabetes", "prediabetic": "prediabetes", "pre-diabetic": "prediabetes", "asthmatic": "asthma",
                 "epileptic": "epilepsy", "anaemic": "anaemia", "anemic": "anaemia", "celiac": "celiac disease",
                 "coeliac": "celiac disease", "autistic": "autism", "dyslexic": "dyslexia",
                 "hypertensive": "hypertension", "bipolar": "bipolar disorder", "insomniac": "insomnia"}
_CONDITION_ADJ = "|".join(sorted(_CONDITION_OF, key=len, reverse=True))
# Said after a condition, not part of it: "I was diagnosed with asthma last year".
_SINCE = re.compile(r"\s+(?:last\s+\w+|this\s+\w+|in\s+\d{4}|(?:a|an|one|two|three|a\s+few|several|\d+)\s+"
                    r"(?:days?|weeks?|months?|years?)\s+ago|(?:as\s+a|when\s+i\s+was\s+a)\s+(?:child|kid|teenager|baby)|"
                    r"at\s+(?:the\s+)?(?:age\s+(?:of\s+)?)?\d+|recently)$", re.IGNORECASE)


_NO_CONDITION = frozenset("no any some the my his her their your a an".split())  # "I have no disease"


def _condition_slot(condition: str) -> str:
    condition = re.sub(r"['’]s\b", "", condition.lower())
    condition = re.sub(r"\bc(?:o|oe)liac\b", "celiac", re.sub(r"\banemia\b", "anaemia", condition))
    condition = re.sub(r"\bceliac$", "celiac disease", re.sub(r"\bapnoea\b", "apnea", condition))
    condition = re.sub(r"\bmigraines\b", "migraine", condition)  # "I suffer from migraine(s)"
    return f"user-health-{_slug(condition, 5)}"


def _has_condition(m: re.Match[str]) -> Built | None:
    condition = _clean(m["value"])
    if m["verb"].lower().startswith("diagnosed"):
        condition = _SINCE.sub("", condition)
        if _vague(condition) or len(condition.split()) > 5 or condition.lower() in _NO_CONDITION:
            return None
        return _condition_slot(condition), f"The user was diagnosed with {_clean(m['value'])}.", "social"
    neg = " ".join((m["neg"] or "").lower().replace("’", "'").split())
    suffers = m["verb"].lower().startswith("suffer")
    bare = re.sub(r"^an?\s+", "", condition, flags=re.IGNORECASE)  # "an eating disorder"
    if _vague(bare) or len(bare.split()) > 4 or bare.split()[0].lower() in _NO_CONDITION:
        return None
    verb = ("suffers from" if suffers else "has") if not neg else (
        f"no longer {'suffers from' if suffers else 'has'}" if neg == "no longer" else
        f"does not {'suffer from' if suffers else 'have'}")
    return _condition_slot(condition), f"The user {verb} {condition}.", "social"


def _condition_adj(m: re.Match[str]) -> Built | None:
    """ "I'm diabetic", "I'm a type 1 diabetic": the slot of "I have (type 1) diabetes"."""
    adj, kind = m["adj"].lower(), " ".join((m["kind"] or "").lower().split())
    said = " ".join(w for w in (m["art"] and m["art"].lower(), kind, adj) if w)
    return _condition_slot(f"{kind} {_CONDITION_OF[adj]}"), f"The user is {_state_negation(m)}{said}.", "social"


# --- possessions, pets, family -------------------------------------------------------------------------

_COUNT = (r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2}|no|twin|several|a\s+few|"
          r"a\s+couple\s+of)")
_OWNED = (r"(?:dogs?|cats?|puppy|puppies|kittens?|pets?|hamsters?|rabbits?|bunny|bunnies|parrots?|birds?|goldfish|"
          r"fish|horses?|pony|ponies|turtles?|tortoises?|snakes?|lizards?|guinea\s+pigs?|ferrets?|"
          r"kids?|child|children|sons?|daughters?|baby|babies|brothers?|sisters?|siblings?|twins|wife|husband|partner|"
          r"boyfriend|girlfriend|fianc[eé]e?|grandchild|grandchildren|grandsons?|granddaughters?|stepsons?|"
          r"stepdaughters?|cars?|bikes?|bicycles?|motorbikes?|motorcycles?|scooters?|boats?|house|houses|apartment|"
          r"apartments|cottage)")
_NAME_WORD = r"(?-i:[A-Z][\w'-]*)"
_MODIFIER = r"(?:(?!(?:about|with|for|from|in|on|at|to|by|like|of)\b)[a-z-]+\s+)"
_OWNED_ITEM = (rf"(?P<count>{_COUNT})\s+(?P<noun>{_MODIFIER}{{0,2}}?{_OWNED})\b"
               rf"(?:\s+(?P<how>named|called)\s+(?P<names>{_NAME_WORD}(?:\s*(?:,|and)\s*{_NAME_WORD})*))?")
_ITEM = re.compile(_OWNED_ITEM + r"(?=\s*,|\s+and\b|\s*$)", re.IGNORECASE)  # "a pet dog" is a dog
_ITEMS = re.sub(r"\(\?P<\w+>", "(?:", _OWNED_ITEM)  # the same, without its groups, to repeat in the rule


def _has(m: re.Match[str]) -> list[Built] | None:
    facts = []
    for item in _ITEM.finditer(m["value"]):
        count, noun = " ".join(item["count"].lower().split()), " ".join(item["noun"].lower().split())
        key, content = f"user-has-{_singular(noun.split()[-1])}", f"The user has {count} {noun}"
        if item["names"]:
            names = " ".join(item["names"].split())
            key, content = f"{key}-{_slug(names)}", f"{content} {item['how'].lower()} {names}"
        facts.append((key, content + ".", "social"))
    return facts or None


def _has_not(m: re.Match[str]) -> Built | None:
    noun = " ".join(m["noun"].lower().split())
    return f"user-has-{_singular(noun)}", f"The user does not have {m['any'] or ''}{noun}.", "social"


# --- the rules, in no particular order: facts come out in the order they were said ----------------------

_OPINION_VERB = r"(?P<verb>like|love|hate|dislike|enjoy|can't stand|can’t stand|cannot stand)"
_ADVERB = r"(?:(?:really|also|just|absolutely|truly|totally|honestly|still)\s+)"

RULES: tuple[Rule, ...] = (
    _rule(r"\b(?:my name is|call me|i am called|i'm called)\s+" + _VALUE + _END, _name),
    _rule(_I_AM + r"(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2})" + _END, _name_stated),
    _rule(r"\bmy\s+(?P<thing>(?:favou?rite\s+)?[a-z][a-z ']{1,40}?)\s+(?:is|are)\s+" + _VALUE + _END, _my_x_is),
    _rule(r"^\W*(?P<value>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,4})\s+is\s+my\s+(?P<thing>"
          + "|".join(sorted(_BEINGS, key=len, reverse=True)) + r")" + _END, _is_my),
    _rule(r"\bmy\s+(?P<who>[a-z][a-z'’ -]{0,30}?)(?:['’]s\s+name\s+is|\s+is\s+(?:called|named))\s+" + _VALUE + _END,
          _named),
    _rule(r"\bi\s+" + _ADVERB + r"?(?P<neg>(?:do not|don't|don’t)\s+(?:(?:really|much|particularly|especially)\s+)?)?"
          + _OPINION_VERB + r"\s+" + _VALUE + _END, _opinion),
    _rule(_I_AM + _NEG_STATE + r"(?:(?:really|exactly|actually|also|very|too|that|particularly|overly|super|so)\s+)?"
          r"(?:(?:a|an)\s+(?:(?:really\s+|very\s+)?(?:big|huge|great|massive|real|die-hard|diehard|total)\s+)?fan\s+of"
          r"|(?P<no>no)\s+(?:(?:big|great|real)\s+)?fan\s+of|keen\s+on|fond\s+of)\s+" + _VALUE + _END, _fan),
    _rule(r"\bi\s+(?:really\s+)?prefer\s+" + rf"(?P<value>{_CHAR}{{1,80}}?)(?:\s+for\s+(?P<purpose>{_CHAR}{{1,60}}?))?" + _END,
          _prefer),
    _rule(r"\bi\s+(?:live|am based|'m based)\s+in\s+" + _VALUE + _END, _lives),
    _rule(r"\bi\s+work\s+(?P<prep>at|for)\s+" + _VALUE + _END, _works),
    _rule(r"\bi(?:\s+work as|\s+am|'m|’m)\s+(?P<art>an?\s+)?(?P<value>(?:software |data |web )?" + _JOBS
          + rf"{_CHAR}{{0,40}}?)" + _END, _job),
    _rule(r"\bi(?:'ve| have)?\s+decided\s+to\s+" + _VALUE + _END, _decided),
    # plans: "I'm planning to ...", "I plan to ...", "I intend to ...", "I'm going (to) ... tomorrow"
    _rule(_I_AM + _NEG_STATE + r"(?:(?:also|still|now|really|currently|actually)\s+)?(?:planning|intending(?=\s+to\b))\s+"
          r"(?P<prep>to|on|a|an)\s+" + _PLAN_VALUE, _planning),
    _rule(r"\bi\s+(?:(?P<neg>don't|don’t|do\s+not|no\s+longer)\s+)?(?:(?:also|still|now|really)\s+)?(?:plan|intend)\s+"
          r"(?P<prep>to|on)\s+" + _PLAN_VALUE, _planning),
    _rule(_I_AM + _NEG_STATE + r"(?:(?:also|now|really|actually)\s+)?going\s+(?P<to>to\s+)?" + _PLAN_VALUE,
          _going),
    # diet and health
    _rule(_I_AM + _NEG_STATE + r"(?:(?:a|an)\s+)?(?:(?:strict|full-time|mostly|fully|committed|lifelong|also)\s+)?"
          r"(?P<diet>" + _DIETS + ")" + _STATE_TAIL + _END, _diet),
    _rule(r"\bi(?:(?:'m|’m|\s+am)\s+" + _NEG_STATE + r"on|\s+(?P<follow>follow))\s+(?:a|an|the)\s+"
          r"(?P<diet>(?:[a-z-]+\s+)?[a-z-]+)\s+diet" + _STATE_TAIL + _END, _diet_named),
    _rule(r"\bi\s+(?:(?:also|really|just|strictly)\s+)?(?P<neg>don't|don’t|do\s+not|never|no\s+longer|can't|can’t|cannot)"
          r"\s+(?:(?:really|ever)\s+)?(?P<verb>eat|drink)\s+" + _VALUE + _END, _not_eaten),
    _rule(_I_AM + _NEG_STATE + r"(?:(?:very|severely|highly|mildly|slightly|deathly|really|super|extremely|also)\s+)?"
          r"allergic\s+to\s+" + _VALUE + _END, _allergic),
    _rule(r"\bi\s+have\s+(?P<art>a|an)\s+(?:(?:severe|mild|serious|bad|slight)\s+)?(?P<value>[a-z-]+(?:\s+[a-z-]+)?)"
          r"\s+allergy" + _END, _allergy),
    _rule(_I_AM + _NEG_STATE + r"(?:(?:very|really|slightly|mildly|severely|also)\s+)?" + _INTOLERANCES
          + r"[\s-]+intolerant" + _END, _intolerant),
    _rule(_I_AM + _NEG_STATE + r"(?:(?:very|really|slightly|mildly|severely|also)\s+)?intolerant\s+(?P<to>to|of)\s+"
          r"(?P<value>[a-z-]+(?:\s+[a-z-]+)?)" + _END, _intolerant),
    _rule(r"\bi\s+have\s+(?:an?\s+)?(?:(?:severe|mild|slight)\s+)?" + _INTOLERANCES + r"\s+intolerance" + _END,
          _intolerant),
    _rule(r"\bi\s+(?:(?:also|still|now|only)\s+)?(?:(?P<neg>don't|don’t|do\s+not|no\s+longer)\s+)?"
          r"(?P<verb>have|have\s+got|suffer\s+from|live\s+with)\s+(?:(?:mild|severe|chronic|bad|slight)\s+)?"
          r"(?P<value>(?:(?:a|an)\s+)?" + _CONDITIONS + r")" + _STATE_TAIL + _END, _has_condition),
    # a diagnosis, and what the user suffers from, end at a comma as a plan does ("..., so I avoid gluten")
    _rule(r"\bi\s+(?:(?:also|still|now|only)\s+)?(?P<neg>)(?P<verb>suffer\s+from)\s+" + _PLAN_VALUE, _has_condition),
    _rule(r"\bi(?:\s+was|['’]ve\s+been|\s+have\s+been|['’]m|\s+am|\s+got|\s+just\s+got)?\s+"
          r"(?:(?:just|recently|finally|officially|also)\s+)?(?P<neg>)(?P<verb>diagnosed)\s+with\s+" + _PLAN_VALUE,
          _has_condition),
    _rule(_I_AM + _NEG_STATE + r"(?:(?P<art>a|an)\s+)?(?P<kind>type\s+[12]\s+)?(?P<adj>" + _CONDITION_ADJ + r")"
          + _STATE_TAIL + _END, _condition_adj),
    # possessions, pets, family
    _rule(r"\bi(?:\s+(?:(?:also|now|still|already|only)\s+)?(?:have\s+got|have|own)|['’]ve\s+got)\s+(?P<value>"
          + _ITEMS + r"(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)" + _ITEMS + r")*)" + _END, _has),
    _rule(r"\bi\s+(?:don't|don’t|do\s+not)\s+(?:have|own)\s+(?P<any>(?:any|a|an)\s+)?(?P<noun>" + _OWNED + r")" + _END,
          _has_not),
    _rule(r"\b(?:please\s+)?remember\s+(?:that\s+)?" + _VALUE + _END, _remember, generic=True),
)
