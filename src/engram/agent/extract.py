"""Fact extraction from an exchange: sclaw's LLM extractor, and a rule-based one for no LLM.

``LLMExtractor`` sends sclaw's prompt and reads one fact per line: blank lines and ``NONE`` give
nothing, bullet and number markers are stripped, and each fact gets a unique id
``{unixnano}-{index}-{seq}``. ``RuleExtractor`` recognises plain first-person statements -
names, "my X is Y", where the user lives or works, likes and dislikes, preferences, decisions -
and gives each a *slot* key (``user-name``, ``user-favourite-editor``, ``user-opinion-python``)
so that saying the same thing again, or changing it, lands on the same entry.

Both honour a request not to keep something ("Don't remember that my PIN is 1234") through the
one rule in ``engram.agent.withhold``: neither reads the sentence that asks it, and a proposed
fact carrying a word the user said only there is dropped (the LLM may meet it in the reply).
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engram.agent import prompts
from engram.agent.enrich import strip_memory_context
from engram.agent.withhold import Withheld, sentences, shown, withholds
from engram.llm.base import ChatProvider, user_message

_seq = itertools.count(1)
_seq_lock = threading.Lock()


def _fact_id(index: int) -> str:
    with _seq_lock:
        seq = next(_seq)
    return f"{time.time_ns()}-{index}-{seq}"


@dataclass(frozen=True, slots=True)
class Fact:
    """One extracted fact. ``key`` is a slot key when the extractor knows one (rule-based)."""

    id: str
    content: str
    source: str = ""
    key: str | None = None
    type: str = "learned"
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


class FactExtractor(Protocol):
    def extract(self, user: str, assistant: str = "", *, source: str = "") -> list[Fact]: ...


class NopExtractor:
    """Extraction disabled: always nothing (sclaw's NopExtractor)."""

    def extract(self, user: str, assistant: str = "", *, source: str = "") -> list[Fact]:
        return []


_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def parse_fact_lines(text: str, *, source: str = "") -> list[Fact]:
    """sclaw's parsing: one fact per line, ``NONE`` means none, bullet markers stripped."""
    facts: list[Fact] = []
    now = time.time()
    for line in text.splitlines():
        content = _BULLET.sub("", line).strip()
        if not content or content.strip('"\'.').upper() == "NONE":
            continue
        facts.append(Fact(_fact_id(len(facts)), content, source, created_at=now))
    return facts


class LLMExtractor:
    """sclaw's ``LLMExtractor``: one provider call per exchange."""

    def __init__(self, provider: ChatProvider, *, temperature: float = 0.0) -> None:
        self.provider = provider
        self.temperature = temperature

    def extract(self, user: str, assistant: str = "", *, source: str = "") -> list[Fact]:
        """Facts from the exchange, without what the user asked not to keep (``withhold``);
        raises ``ProviderError`` when the provider fails."""
        user = strip_memory_context(user)
        prompt = prompts.render("extract", user=shown(user), assistant=assistant)
        reply = self.provider.chat([user_message(prompt)], temperature=self.temperature)
        withheld = Withheld.said_in(user)
        return [f for f in parse_fact_lines(reply.text, source=source) if withheld.allows(f.content)]


# --- rule-based ---------------------------------------------------------------------------------

# A value ends at punctuation, at ", and" / "but", or where "and" starts the user's next
# statement ("I love sci-fi and I live in Lisbon": two facts, not one love of everything after it).
_END = r"(?=\s*(?:[.!?;]|,\s*(?:and|but)\b|\s+but\b|\s+and\s+(?:i|i'm|i’m|my)\b|$))"
_VALUE = r"(?P<value>[^.!?;\n]{1,80}?)"


def _slug(text: str, max_words: int = 4) -> str:
    words = re.findall(r"[a-z0-9+#]+", text.lower())
    words = [w for w in words if w not in {"a", "an", "the", "my", "to", "of"}][:max_words]
    return "-".join(words) or "thing"


def _clean(value: str) -> str:
    return value.strip().strip("\"'").rstrip(",")


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    build: Any  # (match) -> (key, content, type) | None
    # A catch-all ("remember that ..."): stored as said only when no specific rule found a fact
    # inside its value ("remember that I live in Oslo" is the location, once).
    generic: bool = False


def _rule(pattern: str, build: Any, *, generic: bool = False) -> _Rule:
    return _Rule(re.compile(pattern, re.IGNORECASE), build, generic)


# "My name is not important", "call me nobody": a refusal to give a name, not a name.
_REFUSALS = frozenset("not no none nobody nothing never unimportant irrelevant secret private confidential unknown "
                      "withheld anonymous a an the".split())


def _name(m: re.Match[str]) -> tuple[str, str, str] | None:
    value = _clean(m["value"])
    if not re.match(r"^[A-Za-z][\w' -]{0,40}$", value) or len(value.split()) > 3:
        return None
    if value.split()[0].lower() in _REFUSALS:
        return None
    value = " ".join(w[:1].upper() + w[1:] for w in value.split())
    return "user-name", f"The user's name is {value}.", "social"


# Words that follow "I'm" capitalised for emphasis or at a line start, not as a name.
_NOT_NAMES = frozenset("not so sorry just also really very still going back here there fine okay ok good sure happy "
                       "glad tired busy new done ready afraid from in at on with".split())


def _name_stated(m: re.Match[str]) -> tuple[str, str, str] | None:
    """ "I'm Alice": a name only when every word is capitalised as the user wrote it."""
    words = m["value"].split()
    if not words or not all(w[:1].isupper() for w in words) or words[0].lower() in _NOT_NAMES:
        return None
    return _name(m)


def _my_x_is(m: re.Match[str]) -> tuple[str, str, str] | None:
    thing, value = m["thing"].strip().lower(), _clean(m["value"])
    if thing in {"name"} or len(thing.split()) > 4:
        return None
    thing = thing.replace("favorite", "favourite")
    return f"user-{_slug(thing)}", f"The user's {thing} is {value}.", "social"


_VAGUE = frozenset("it that this them these those you him her one so too much very".split())


def _vague(value: str) -> bool:
    """Objects that only make sense in context ("I like it") are not facts on their own."""
    words = value.lower().split()
    return not words or words[0] in _VAGUE


def _opinion(m: re.Match[str]) -> tuple[str, str, str] | None:
    value = _clean(m["value"])
    if _vague(value):
        return None
    verb = m["verb"].lower()
    negative = bool(m["neg"]) or verb in {"hate", "dislike", "can't stand", "cannot stand"}
    phrase = "does not like" if negative else ("loves" if verb == "love" and not m["neg"] else "likes")
    return f"user-opinion-{_slug(value)}", f"The user {phrase} {value}.", "preference"


def _prefer(m: re.Match[str]) -> tuple[str, str, str] | None:
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


def _lives(m: re.Match[str]) -> tuple[str, str, str] | None:
    place = re.sub(r"\s+(?:now|these days|at the moment|currently)$", "", _clean(m["value"]), flags=re.IGNORECASE)
    return "user-location", f"The user lives in {place}.", "social"


def _works(m: re.Match[str]) -> tuple[str, str, str] | None:
    return "user-workplace", f"The user works {m['prep'].lower()} {_clean(m['value'])}.", "social"


def _job(m: re.Match[str]) -> tuple[str, str, str] | None:
    return "user-occupation", f"The user works as {m['art'] or ''}{_clean(m['value'])}.", "social"


def _decided(m: re.Match[str]) -> tuple[str, str, str] | None:
    value = _clean(m["value"])
    return f"decision-{_slug(value)}", f"The user decided to {value}.", "decision"


# "I don't remember the address", "you remember that trip": someone's memory, not a request.
_RECALLER_BEFORE = re.compile(r"\b(?:i|we|they|he|she|you)\s+(?:(?:do not|don't|don’t|can't|cannot|could not|couldn't|"
                              r"never|still|also|always|do|did)\s+)?$", re.IGNORECASE)


def _remember(m: re.Match[str]) -> tuple[str, str, str] | None:
    if _RECALLER_BEFORE.search(m.string[: m.start()]):
        return None
    value = _clean(m["value"])
    content = value[:1].upper() + value[1:]
    return None if len(value) < 3 else ("", content if content.endswith(".") else content + ".", "learned")


_JOBS = (r"(?:engineer|developer|programmer|designer|teacher|doctor|nurse|student|researcher|scientist|writer|"
         r"manager|lawyer|artist)")

_RULES: tuple[_Rule, ...] = (
    _rule(r"\b(?:my name is|call me|i am called|i'm called)\s+" + _VALUE + _END, _name),
    _rule(r"\bi(?:'m|’m|\s+am)\s+(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2})" + _END, _name_stated),
    _rule(r"\bmy\s+(?P<thing>(?:favou?rite\s+)?[a-z][a-z ']{1,40}?)\s+(?:is|are)\s+" + _VALUE + _END, _my_x_is),
    _rule(r"\bi\s+(?P<neg>do not |don't |don’t )?(?P<verb>like|love|hate|dislike|enjoy|can't stand|cannot stand)\s+"
          + _VALUE + _END, _opinion),
    _rule(r"\bi\s+(?:really\s+)?prefer\s+" + r"(?P<value>[^.!?;\n]{1,80}?)(?:\s+for\s+(?P<purpose>[^.!?;\n]{1,60}?))?" + _END,
          _prefer),
    _rule(r"\bi\s+(?:live|am based|'m based)\s+in\s+" + _VALUE + _END, _lives),
    _rule(r"\bi\s+work\s+(?P<prep>at|for)\s+" + _VALUE + _END, _works),
    _rule(r"\bi(?:\s+work as|\s+am|'m|’m)\s+(?P<art>an?\s+)?(?P<value>(?:software |data |web )?" + _JOBS
          + r"[^.!?;\n]{0,40}?)" + _END, _job),
    _rule(r"\bi(?:'ve| have)?\s+decided\s+to\s+" + _VALUE + _END, _decided),
    _rule(r"\b(?:please\s+)?remember\s+(?:that\s+)?" + _VALUE + _END, _remember, generic=True),
)


class RuleExtractor:
    """First-person statements without an LLM; ignores questions (they ask, they don't tell)."""

    def extract(self, user: str, assistant: str = "", *, source: str = "") -> list[Fact]:
        text = strip_memory_context(user)
        facts: list[Fact] = []
        seen: set[str] = set()
        now = time.time()
        withheld = Withheld.said_in(text)
        for sentence in sentences(text):
            if sentence.strip().endswith("?") or withholds(sentence):
                continue
            # Facts in the order they were said, whichever rule found them.
            found = sorted(((m.start(), i, rule, m, built) for i, rule in enumerate(_RULES)
                            for m in rule.pattern.finditer(sentence) if (built := rule.build(m)) is not None),
                           key=lambda item: item[:2])
            specific = [m.span() for _, _, rule, m, _ in found if not rule.generic]
            for _, _, rule, match, built in found:
                if rule.generic and any(start < match.end("value") and end > match.start("value")
                                        for start, end in specific):
                    continue
                key, content, kind = built
                if (key or content) in seen or not withheld.allows(content):
                    continue
                seen.add(key or content)
                facts.append(Fact(_fact_id(len(facts)), content, source, key=key or None, type=kind, created_at=now))
        return facts
