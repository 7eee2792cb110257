"""The rule-based extractor's rules: which plain statements become which facts, without an LLM.

A rule is a pattern and a builder turning its match into facts ``(key, content, type)``, said of
"The user" ("I hate mornings" -> "The user does not like mornings."). The key is a *slot*: saying
the same thing again, or changing it ("I like olives", later "I don't like olives"), lands on the
same memory. Rules are built of ``extract_parts`` (where a value ends, a slot's spelling). The slots:

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
  likewise ("I have diabetes", "I'm diabetic": one) (these in ``extract_health``);
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

from engram.agent import extract_health
from engram.agent.extract_parts import (
    CHAR,
    END,
    I_AM,
    NEG_STATE,
    PHRASE,
    TRAILING,
    VALUE,
    Built,
    Rule,
    clean,
    negation,
    rule,
    singular,
    slug,
    vague,
)

# --- names and "my X is Y" -------------------------------------------------------------------------

# "My name is not important", "call me nobody": a refusal to give a name, not a name.
_REFUSALS = frozenset("not no none nobody nothing never unimportant irrelevant secret private confidential unknown "
                      "withheld anonymous a an the".split())


def _proper_name(value: str) -> str | None:
    """ "alice smith" -> "Alice Smith"; None for what is not a name ("not important", a sentence)."""
    value = clean(value)
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
    thing, value = m["thing"].strip().lower(), clean(m["value"])
    if thing in {"name"} or len(thing.split()) > 4:
        return None
    if re.search(r"['’]s name$", thing) or re.match(r"(?:called|named)\b", value, re.IGNORECASE):
        return None  # "my wife's name is Anna", "my dog is called Rex": the named rule's, one slot for both
    thing = thing.replace("favorite", "favourite")
    slot = f"user-{slug(thing)}"
    if thing.split()[-1] in _BEINGS:  # a fact about them: slotted by what it says too
        slot = f"{slot}-{slug(value)}"
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
    return f"user-{slug(who)}-name", f"The user's {who} is called {name}.", "social"


# --- likes and dislikes ------------------------------------------------------------------------------

def _opinion(m: re.Match[str]) -> Built | None:
    value = clean(m["value"])
    if vague(value):
        return None
    verb = m["verb"].lower().replace("’", "'")
    negative = bool(m["neg"]) or verb in {"hate", "dislike", "can't stand", "cannot stand"}
    phrase = "does not like" if negative else ("loves" if verb == "love" else "likes")
    return f"user-opinion-{slug(value)}", f"The user {phrase} {value}.", "preference"


def _fan(m: re.Match[str]) -> Built | None:
    """ "I'm (not) a big fan of X", "I'm (not) keen on / fond of X": the opinion rule's slot and words."""
    value = clean(m["value"])
    if vague(value):
        return None
    phrase = "does not like" if m["neg"] or m["no"] else "likes"
    return f"user-opinion-{slug(value)}", f"The user {phrase} {value}.", "preference"


def _prefer(m: re.Match[str]) -> Built | None:
    value, purpose = clean(m["value"]), m["purpose"]
    if vague(value):
        return None
    if purpose:
        purpose = clean(purpose)
        return f"user-prefers-for-{slug(purpose)}", f"The user prefers {value} for {purpose}.", "preference"
    head = re.split(r"\s+(?:over|to|rather than|instead of)\s+", value, maxsplit=1)
    key = f"user-prefers-{slug(head[0])}"
    if len(head) == 2:  # "X over Y": the slot is the pair, so "Y over X" later updates it
        key = "user-prefers-" + "-or-".join(sorted([slug(head[0], 2), slug(head[1], 2)]))
    return key, f"The user prefers {value}.", "preference"


# --- where the user lives and works; decisions; "remember that" ----------------------------------------

def _lives(m: re.Match[str]) -> Built | None:
    place = re.sub(r"\s+(?:now|these days|at the moment|currently)$", "", clean(m["value"]), flags=re.IGNORECASE)
    return "user-location", f"The user lives in {place}.", "social"


_NOT_WORKPLACES = frozenset("first last least most all times once scale length random".split())


def _works(m: re.Match[str]) -> Built | None:
    value = clean(m["value"])
    if vague(value) or value.split()[0].lower().strip(",") in _NOT_WORKPLACES:  # "(that) works for me", "works at first"
        return None
    return "user-workplace", f"The user works {m['prep'].lower()} {value}.", "social"


def _job(m: re.Match[str]) -> Built | None:
    return "user-occupation", f"The user works as {m['art'] or ''}{clean(m['value'])}.", "social"


def _decided(m: re.Match[str]) -> Built | None:
    value = clean(m["value"])
    return f"decision-{slug(value)}", f"The user decided to {value}.", "decision"


# "I don't remember the address", "you remember that trip": someone's memory, not a request.
_RECALLER_BEFORE = re.compile(r"\b(?:i|we|they|he|she|you)\s+(?:(?:do not|don't|don’t|can't|cannot|could not|couldn't|"
                              r"never|still|also|always|do|did)\s+)?$", re.IGNORECASE)


def _remember(m: re.Match[str]) -> Built | None:
    if _RECALLER_BEFORE.search(m.string[: m.start()]):
        return None
    value = clean(m["value"])
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
    activity = clean(activity)
    if vague(activity) or re.search(r"\byou(?:r|rs)?\b", activity, re.IGNORECASE):  # talk to the assistant
        return None
    if re.search(r"\s+any\s*more$", activity, re.IGNORECASE):  # "I'm not planning to ... anymore"
        activity, neg = re.sub(r"\s+any\s*more$", "", activity, flags=re.IGNORECASE), neg and "no longer "
    what = _WHEN.sub(" ", TRAILING.sub("", activity)).split()
    if prep.lower() == "on" and what and re.fullmatch(r"[a-z]{2,}ing", what[0].lower()):  # "planning on visiting ..."
        what[0] = _base_verb(what[0].lower())
    what = slug(" ".join(what))
    return f"user-plan-{what}", f"The user is {neg}planning {prep.lower()} {activity}.", "decision"


def _planning(m: re.Match[str]) -> Built | None:
    return _plan(m["value"], negation(m), m["prep"])


def _going(m: re.Match[str]) -> Built | None:
    value = clean(m["value"])
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
    return None if activity is None else _plan(activity, negation(m))


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
        key, content = f"user-has-{singular(noun.split()[-1])}", f"The user has {count} {noun}"
        if item["names"]:
            names = " ".join(item["names"].split())
            key, content = f"{key}-{slug(names)}", f"{content} {item['how'].lower()} {names}"
        facts.append((key, content + ".", "social"))
    return facts or None


def _has_not(m: re.Match[str]) -> Built | None:
    noun = " ".join(m["noun"].lower().split())
    return f"user-has-{singular(noun)}", f"The user does not have {m['any'] or ''}{noun}.", "social"


# --- the rules, in no particular order: facts come out in the order they were said ----------------------

_OPINION_VERB = r"(?P<verb>like|love|hate|dislike|enjoy|can't stand|can’t stand|cannot stand)"
_ADVERB = r"(?:(?:really|also|just|absolutely|truly|totally|honestly|still)\s+)"

RULES: tuple[Rule, ...] = (
    rule(r"\b(?:my name is|call me|i am called|i'm called)\s+" + VALUE + END, _name),
    rule(I_AM + r"(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2})" + END, _name_stated),
    rule(r"\bmy\s+(?P<thing>(?:favou?rite\s+)?[a-z][a-z ']{1,40}?)\s+(?:is|are)\s+" + VALUE + END, _my_x_is),
    rule(r"^\W*(?P<value>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,4})\s+is\s+my\s+(?P<thing>"
         + "|".join(sorted(_BEINGS, key=len, reverse=True)) + r")" + END, _is_my),
    rule(r"\bmy\s+(?P<who>[a-z][a-z'’ -]{0,30}?)(?:['’]s\s+name\s+is|\s+is\s+(?:called|named))\s+" + VALUE + END,
         _named),
    rule(r"\bi\s+" + _ADVERB + r"?(?P<neg>(?:do not|don't|don’t)\s+(?:(?:really|much|particularly|especially)\s+)?)?"
         + _OPINION_VERB + r"\s+" + VALUE + END, _opinion),
    rule(I_AM + NEG_STATE + r"(?:(?:really|exactly|actually|also|very|too|that|particularly|overly|super|so)\s+)?"
         r"(?:(?:a|an)\s+(?:(?:really\s+|very\s+)?(?:big|huge|great|massive|real|die-hard|diehard|total)\s+)?fan\s+of"
         r"|(?P<no>no)\s+(?:(?:big|great|real)\s+)?fan\s+of|keen\s+on|fond\s+of)\s+" + VALUE + END, _fan),
    rule(r"\bi\s+(?:really\s+)?prefer\s+" + rf"(?P<value>{CHAR}{{1,80}}?)(?:\s+for\s+(?P<purpose>{CHAR}{{1,60}}?))?" + END,
         _prefer),
    rule(r"\bi\s+(?:live|am based|'m based)\s+in\s+" + VALUE + END, _lives),
    rule(r"\bi\s+work\s+(?P<prep>at|for)\s+" + VALUE + END, _works),
    rule(r"\bi(?:\s+work as|\s+am|'m|’m)\s+(?P<art>an?\s+)?(?P<value>(?:software |data |web )?" + _JOBS
         + rf"{CHAR}{{0,40}}?)" + END, _job),
    rule(r"\bi(?:'ve| have)?\s+decided\s+to\s+" + VALUE + END, _decided),
    # plans: "I'm planning to ...", "I plan to ...", "I intend to ...", "I'm going (to) ... tomorrow"
    rule(I_AM + NEG_STATE + r"(?:(?:also|still|now|really|currently|actually)\s+)?(?:planning|intending(?=\s+to\b))\s+"
         r"(?P<prep>to|on|a|an)\s+" + PHRASE, _planning),
    rule(r"\bi\s+(?:(?P<neg>don't|don’t|do\s+not|no\s+longer)\s+)?(?:(?:also|still|now|really)\s+)?(?:plan|intend)\s+"
         r"(?P<prep>to|on)\s+" + PHRASE, _planning),
    rule(I_AM + NEG_STATE + r"(?:(?:also|now|really|actually)\s+)?going\s+(?P<to>to\s+)?" + PHRASE,
         _going),
    *extract_health.RULES,
    # possessions, pets, family
    rule(r"\bi(?:\s+(?:(?:also|now|still|already|only)\s+)?(?:have\s+got|have|own)|['’]ve\s+got)\s+(?P<value>"
         + _ITEMS + r"(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)" + _ITEMS + r")*)" + END, _has),
    rule(r"\bi\s+(?:don't|don’t|do\s+not)\s+(?:have|own)\s+(?P<any>(?:any|a|an)\s+)?(?P<noun>" + _OWNED + r")" + END,
         _has_not),
    rule(r"\b(?:please\s+)?remember\s+(?:that\s+)?" + VALUE + END, _remember, generic=True),
)
