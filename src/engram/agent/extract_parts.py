"""The parts every rule of the rule-based extractor is made of (``extract_rules``, ``extract_health``):
where a value ends, what a value is, its slot's spelling, and ``Rule`` itself.
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
END_AT = rf"\s*(?:{STOP}|;|,\s*(?:and|but)\b|\s+but\b|\s+and\s+(?:i|i'm|i’m|my)\b|$)"
END = rf"(?={END_AT})"
CHAR = rf"(?:[^.!?;\n]|[.!?](?=\S)|{NOT_A_STOP})"  # a character of a value: no stop
VALUE = rf"(?P<value>{CHAR}{{1,80}}?)"
# A value that ends at a comma too: "I'm planning to watch a movie tonight, any ideas" plans the
# movie only; "I was diagnosed with celiac disease, so I avoid gluten" names the disease only.
PHRASE = rf"(?P<value>(?:(?!,){CHAR}){{1,80}}?)(?=\s*,|{END_AT})"
I_AM = r"\bi(?:'m|’m|\s+am)\s+"
NEG_STATE = r"(?P<neg>not\s+|no\s+longer\s+)?"  # "I'm not ...", "I'm no longer ...": the same slot, changed


def slug(text: str, max_words: int = 4) -> str:
    words = re.findall(r"[a-z0-9+#]+", text.lower())
    words = [w for w in words if w not in {"a", "an", "the", "my", "to", "of"}][:max_words]
    return "-".join(words) or "thing"


def singular(word: str) -> str:
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


def clean(value: str) -> str:
    return value.strip().strip("\"'").rstrip(",")


# Words after a statement that change nothing in it: "I don't eat meat anymore", "allergic to eggs too".
TRAILING = re.compile(r"\s+(?:anymore|any\s+more|at\s+all|either|too|as\s+well|these\s+days|now|again|ever|instead)$",
                      re.IGNORECASE)


def negation(m: re.Match[str]) -> str:
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


def rule(pattern: str, build: Callable[[re.Match[str]], Built | list[Built] | None], *, generic: bool = False) -> Rule:
    return Rule(re.compile(pattern, re.IGNORECASE), build, generic)


VAGUE = frozenset("it that this them these those you him her one so too much very me us myself everyone everybody "
                  "anyone anybody nobody anything everything something nothing and or but".split())


def vague(value: str) -> bool:
    """Objects that only make sense in context ("I like it") are not facts on their own."""
    words = value.lower().split()
    return not words or words[0] in VAGUE
