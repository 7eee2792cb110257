"""The rule-based extractor's rules of diet and health (``extract_rules`` holds the rest): one diet
(``user-diet``), what the user does not eat or drink (``user-eats-<food>``), one slot per allergen
(``user-allergy-<it>``), intolerance (``user-intolerance-<it>``) and health condition
(``user-health-<it>``), so "I'm no longer allergic to nuts" or "I no longer have asthma" updates that
one and leaves the others.
"""

from __future__ import annotations

import re

from engram.agent.extract_parts import (
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

_DIETS = (r"(?:lacto-ovo[\s-]+vegetarian|lacto-vegetarian|ovo-vegetarian|vegetarian|raw\s+vegan|vegan|pescatarian|"
          r"pescetarian|flexitarian|fruitarian|plant-based)")
_STATE_TAIL = r"(?P<tail>\s+(?:now|too|as\s+well|these\s+days|again|anymore|any\s+more))?"


def _state_negation(m: re.Match[str]) -> str:
    neg = negation(m)
    return "no longer " if neg and re.search(r"any\s*more", m["tail"] or "", re.IGNORECASE) else neg  # "not ... anymore"


def _diet(m: re.Match[str]) -> Built | None:
    return "user-diet", f"The user is {_state_negation(m)}{' '.join(m['diet'].lower().split())}.", "preference"


def _diet_named(m: re.Match[str]) -> Built | None:
    """ "I'm on a keto diet", "I follow a vegan diet": the one diet slot."""
    diet = " ".join(m["diet"].lower().split())
    if vague(diet):
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
    items = [clean(TRAILING.sub("", item)) for item in _LIST_SEP.split(clean(value))]
    return [item for item in items if item and len(item.split()) <= 4]


def _item_slug(item: str) -> str:
    return "-".join(singular(w) for w in slug(item).split("-"))


def _not_eaten(m: re.Match[str]) -> list[Built] | None:
    said = " ".join(m["neg"].lower().replace("’", "'").split())
    verb = m["verb"].lower()
    phrase = {"no longer": f"no longer {verb}s", "can't": f"cannot {verb}", "cannot": f"cannot {verb}",
              "never": f"never {verb}s"}.get(said, f"does not {verb}")
    items = _items(m["value"])
    if not items or any(vague(i) or i.split()[0].lower() in _NOT_FOODS for i in items):
        return None
    return [(f"user-{verb}s-{_item_slug(i)}", f"The user {phrase} {i}.", "preference") for i in items]


def _allergic(m: re.Match[str]) -> list[Built] | None:
    neg, items = negation(m), _items(m["value"])
    if not items or any(vague(i) for i in items):
        return None
    return [(f"user-allergy-{_item_slug(i)}", f"The user is {neg}allergic to {i}.", "social") for i in items]


def _allergy(m: re.Match[str]) -> Built | None:
    """ "I have a peanut allergy": the slot of "I'm allergic to peanuts"."""
    item = clean(m["value"])
    if vague(item):
        return None
    return f"user-allergy-{_item_slug(item)}", f"The user has {m['art'].lower()} {item} allergy.", "social"


def _intolerant(m: re.Match[str]) -> Built | None:
    what = clean(m["value"]).lower()
    if vague(what):
        return None
    neg, to = negation(m), m.groupdict().get("to")
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
    return f"user-health-{slug(condition, 5)}"


def _has_condition(m: re.Match[str]) -> Built | None:
    condition = clean(m["value"])
    if m["verb"].lower().startswith("diagnosed"):
        condition = _SINCE.sub("", condition)
        if vague(condition) or len(condition.split()) > 5 or condition.lower() in _NO_CONDITION:
            return None
        return _condition_slot(condition), f"The user was diagnosed with {clean(m['value'])}.", "social"
    neg = " ".join((m["neg"] or "").lower().replace("’", "'").split())
    suffers = m["verb"].lower().startswith("suffer")
    bare = re.sub(r"^an?\s+", "", condition, flags=re.IGNORECASE)  # "an eating disorder"
    if vague(bare) or len(bare.split()) > 4 or bare.split()[0].lower() in _NO_CONDITION:
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


RULES: tuple[Rule, ...] = (
    rule(I_AM + NEG_STATE + r"(?:(?:a|an)\s+)?(?:(?:strict|full-time|mostly|fully|committed|lifelong|also)\s+)?"
         r"(?P<diet>" + _DIETS + ")" + _STATE_TAIL + END, _diet),
    rule(r"\bi(?:(?:'m|’m|\s+am)\s+" + NEG_STATE + r"on|\s+(?P<follow>follow))\s+(?:a|an|the)\s+"
         r"(?P<diet>(?:[a-z-]+\s+)?[a-z-]+)\s+diet" + _STATE_TAIL + END, _diet_named),
    rule(r"\bi\s+(?:(?:also|really|just|strictly)\s+)?(?P<neg>don't|don’t|do\s+not|never|no\s+longer|can't|can’t|cannot)"
         r"\s+(?:(?:really|ever)\s+)?(?P<verb>eat|drink)\s+" + VALUE + END, _not_eaten),
    rule(I_AM + NEG_STATE + r"(?:(?:very|severely|highly|mildly|slightly|deathly|really|super|extremely|also)\s+)?"
         r"allergic\s+to\s+" + VALUE + END, _allergic),
    rule(r"\bi\s+have\s+(?P<art>a|an)\s+(?:(?:severe|mild|serious|bad|slight)\s+)?(?P<value>[a-z-]+(?:\s+[a-z-]+)?)"
         r"\s+allergy" + END, _allergy),
    rule(I_AM + NEG_STATE + r"(?:(?:very|really|slightly|mildly|severely|also)\s+)?" + _INTOLERANCES
         + r"[\s-]+intolerant" + END, _intolerant),
    rule(I_AM + NEG_STATE + r"(?:(?:very|really|slightly|mildly|severely|also)\s+)?intolerant\s+(?P<to>to|of)\s+"
         r"(?P<value>[a-z-]+(?:\s+[a-z-]+)?)" + END, _intolerant),
    rule(r"\bi\s+have\s+(?:an?\s+)?(?:(?:severe|mild|slight)\s+)?" + _INTOLERANCES + r"\s+intolerance" + END,
         _intolerant),
    rule(r"\bi\s+(?:(?:also|still|now|only)\s+)?(?:(?P<neg>don't|don’t|do\s+not|no\s+longer)\s+)?"
         r"(?P<verb>have|have\s+got|suffer\s+from|live\s+with)\s+(?:(?:mild|severe|chronic|bad|slight)\s+)?"
         r"(?P<value>(?:(?:a|an)\s+)?" + _CONDITIONS + r")" + _STATE_TAIL + END, _has_condition),
    # a diagnosis, and what the user suffers from, end at a comma as a plan does ("..., so I avoid gluten")
    rule(r"\bi\s+(?:(?:also|still|now|only)\s+)?(?P<neg>)(?P<verb>suffer\s+from)\s+" + PHRASE, _has_condition),
    rule(r"\bi(?:\s+was|['’]ve\s+been|\s+have\s+been|['’]m|\s+am|\s+got|\s+just\s+got)?\s+"
         r"(?:(?:just|recently|finally|officially|also)\s+)?(?P<neg>)(?P<verb>diagnosed)\s+with\s+" + PHRASE,
         _has_condition),
    rule(I_AM + NEG_STATE + r"(?:(?P<art>a|an)\s+)?(?P<kind>type\s+[12]\s+)?(?P<adj>" + _CONDITION_ADJ + r")"
         + _STATE_TAIL + END, _condition_adj),
)
