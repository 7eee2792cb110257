"""Which sentences tell something about the user, for the rule-based extractor: a question does not
(with or without its "?"), nor what follows "if", "I wish", "maybe" in a sentence, nor what
someone else is said to have said or to believe ("She said I'm vegetarian"); a sentence
without a subject that starts with a verb the rules know ("Likes to play cricket on weekends",
mem0's plain-string style) is the user's own, read as "I like ...". ``RuleExtractor`` applies
these to every rule (``extract_rules``).
"""

from __future__ import annotations

import re

# "Do I like sushi", "am I allergic to nuts", "what is my name": a question even without its "?"
# ("could you remember that I live in Oslo" is a request, though).
_QUESTION = re.compile(
    r"^\W*(?:(?:do|does|did|am|are|is|was|were|can|could|would|should|will|shall|have|has|may|might|must)"
    r"(?:n't|n’t)?\s+(?:i|you|we|my)\b(?!\s+(?:please\s+)?(?:remember|note|save|store|keep|record|write)\b)"
    r"|(?:what|why|how|where|who|which|when|whose)\s+(?:do|does|did|am|are|is|was|were|can|could|would|should|will)\b)",
    re.IGNORECASE)
# Past one of these words a sentence supposes, wishes or doubts rather than tells: "If I were
# vegetarian ...", "I wish I had a dog", "maybe I'm allergic to nuts".
_SUPPOSED = re.compile(r"\b(?:if|unless|suppose|supposing|imagine|pretend|hypothetically|wish|wished|whether|"
                       r"maybe|perhaps|in case)\b", re.IGNORECASE)


def asks(sentence: str) -> bool:
    """Whether ``sentence`` is a question (it asks, it doesn't tell)."""
    sentence = sentence.strip()
    return sentence.endswith("?") or bool(_QUESTION.match(sentence))


def supposed(m: re.Match[str]) -> bool:
    """Whether the match comes after an "if", "I wish", "maybe"... in its sentence."""
    return bool(_SUPPOSED.search(m.string, 0, m.start()))


# "She said I'm vegetarian", "my friend thinks I love jazz", "according to my doctor I ...": past
# one of these verbs, with anyone but the user as its subject, a sentence reports what someone else
# said or believes of the user; the user did not tell it. "I told her I'm vegetarian", "I said I
# live in Oslo", "I think I'm allergic to nuts" are the user's own words, and tell.
_REPORTED = re.compile(
    r"(?P<who>[\w'’]+)\s+(?:(?:have|has|had|do|does|did|will|would|can|could|must|should|might|may|need|to|always|"
    r"also|just|once|never|still|really|probably|apparently|keeps|kept|even)\s+){0,3}"
    r"(?:say|says|said|tell|tells|told|think|thinks|thought|believe|believes|believed|claim|claims|claimed|reckon|"
    r"reckons|reckoned|assume|assumes|assumed|mention|mentions|mentioned|insist|insists|insisted|swear|swears|swore|"
    r"guess|guesses|guessed|suspect|suspects|suspected|figure|figures|figured|imagines|imagined|wrote|writes|texted|"
    r"heard|hears|seems\s+to\s+think)\b|\baccording\s+to\b", re.IGNORECASE)
_USER = frozenset("i i've i’ve i'd i’d i'll i’ll".split())
# Not someone saying it: "Let me tell you, ...", "Needless to say, ...", "That said, ...", "Truth be told".
_NO_SPEAKER = frozenset("me to that this be been needless having".split())


def reported(m: re.Match[str]) -> bool:
    """Whether the match comes after someone other than the user saying or believing it ("She
    said I'm vegetarian"), in its sentence."""
    return any(r["who"] is None or r["who"].lower() not in _USER | _NO_SPEAKER
               for r in _REPORTED.finditer(m.string, 0, m.start()))


# mem0's plain-string style: "Likes to play cricket on weekends" is the user's own statement.
_THIRD_TO_FIRST = {"likes": "like", "loves": "love", "enjoys": "enjoy", "prefers": "prefer", "hates": "hate",
                   "dislikes": "dislike", "lives": "live", "works": "work", "plans": "plan", "intends": "intend",
                   "has": "have", "owns": "own", "is": "am", "is not": "am not", "isn't": "am not", "isn’t": "am not",
                   "does not": "do not", "doesn't": "don't", "doesn’t": "don't", "can't": "can't", "can’t": "can't",
                   "cannot": "cannot", "decided": "decided"}
_VERB = "|".join(sorted((v.replace(" ", r"\s+") for v in _THIRD_TO_FIRST), key=len, reverse=True))
_LEADING_VERB = re.compile(rf"^(?P<lead>\s*)(?P<verb>{_VERB})(?=\s+(?P<next>\w+))", re.IGNORECASE)
_NEXT_VERB = re.compile(rf"(?P<sep>,\s*(?:and\s+)?|\s+and\s+|\s+(?P<but>but)\s+)(?P<verb>{_VERB})\b", re.IGNORECASE)


def _first(verb: str) -> str:
    return "I " + _THIRD_TO_FIRST[" ".join(verb.lower().split())]


def first_person(sentence: str) -> str:
    """A sentence that starts with a verb the rules know, read as the user's: "Likes cricket and
    lives in Pune" -> "I like cricket, and I live in Pune". Any other sentence is returned as it is."""
    m = _LEADING_VERB.match(sentence)
    # "Is Alice ...", "Is it ...": a question or someone else, not "I am ..."; "is going to rain"
    if m is None or (m["verb"].lower().startswith("is") and (not m["next"].islower() or m["next"] == "going")):
        return sentence
    rest = _NEXT_VERB.sub(lambda n: (" but " if n["but"] else ", and ") + _first(n["verb"]), sentence[m.end():])
    return m["lead"] + _first(m["verb"]) + rest
