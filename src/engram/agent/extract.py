"""Fact extraction from an exchange: sclaw's LLM extractor, and a rule-based one for no LLM.

``LLMExtractor`` sends sclaw's prompt and reads one fact per line: blank lines and ``NONE`` give
nothing, bullet and number markers are stripped, and each fact gets a unique id
``{unixnano}-{index}-{seq}``. ``RuleExtractor`` recognises plain statements about the user -
names, "my X is Y", where the user lives or works, likes and dislikes, preferences, decisions,
plans, diet, allergies and health conditions, pets, family and possessions (the rules: ``extract_rules``) - and gives
each a *slot* key (``user-name``, ``user-favourite-editor``, ``user-opinion-python``) so that
saying the same thing again, or changing it, lands on the same entry.

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
from engram.agent.extract_rules import RULES
from engram.agent.statements import asks, first_person, reported, supposed
from engram.agent.stops import sentences
from engram.agent.withhold import Withheld, shown, withholds
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

class RuleExtractor:
    """Statements about the user without an LLM (``extract_rules``); ignores questions (they ask,
    they don't tell), suppositions ("if I were ..."), someone else's words or beliefs ("she said
    I'm ...") and requests not to keep something."""

    def extract(self, user: str, assistant: str = "", *, source: str = "") -> list[Fact]:
        text = strip_memory_context(user)
        facts: list[Fact] = []
        seen: set[str] = set()
        now = time.time()
        withheld = Withheld.said_in(text)
        for sentence in sentences(text):
            if asks(sentence) or withholds(sentence):
                continue
            sentence = first_person(sentence)  # "Likes cricket" (mem0's plain strings) is the user's
            # Facts in the order they were said, whichever rule found them.
            found = sorted(((m.start(), i, rule, m, built) for i, rule in enumerate(RULES)
                            for m in rule.pattern.finditer(sentence)
                            if not supposed(m) and not reported(m) and (built := rule.facts(m))),
                           key=lambda item: item[:2])
            specific = [m.span() for _, _, rule, m, _ in found if not rule.generic]
            for _, _, rule, match, built in found:
                if rule.generic and any(start < match.end("value") and end > match.start("value")
                                        for start, end in specific):
                    continue
                for key, content, kind in built:
                    if (key or content) in seen or not withheld.allows(content):
                        continue
                    seen.add(key or content)
                    facts.append(Fact(_fact_id(len(facts)), content, source, key=key or None, type=kind,
                                      created_at=now))
        return facts
