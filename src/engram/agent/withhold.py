"""What the user asked not to keep: one rule for every extractor's proposals.

"Don't remember that my PIN is 1234" asks for the opposite of a remember request: nothing that
sentence says may be stored, whichever extractor reads the message. The rule-based extractor, the
LLM extractor and synthesis all go through this module, so they cannot drift apart:

- ``shown(text)`` is a user message without its withholding sentences: what an extractor reads
  (and what an LLM is sent), so a model never sees what it must not keep;
- ``Withheld.said_in(*texts)`` collects the words the user said *only* in withholding sentences
  (``pin``, ``1234``; not ``name`` when another sentence says "my name is Ada"), and ``allows``
  refuses a proposed fact carrying any of them: a model can still meet them in the assistant's
  reply ("I won't keep your PIN 1234") or in earlier turns, and erring towards forgetting is the
  safe side of a request to forget.

"I don't remember her name" is a statement about someone's memory, not a request: a subject
right before the verb makes it one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.agent.stops import sentences
from engram.text import STOPWORDS, words

_NEGATED_REMEMBER = re.compile(
    r"\b(?:don't|don’t|dont|do not|never|no need to)\s+(?:ever\s+)?"
    r"(?:remember|store|save|record|note|memori[sz]e|write down)\b", re.IGNORECASE)
_SUBJECT_BEFORE = re.compile(r"\b(?:i|we|they|he|she)\s*$", re.IGNORECASE)


def _requests(sentence: str) -> list[re.Match[str]]:
    return [m for m in _NEGATED_REMEMBER.finditer(sentence) if not _SUBJECT_BEFORE.search(sentence[: m.start()])]


def withholds(sentence: str) -> bool:
    """Whether ``sentence`` asks not to keep something ("don't remember that ..."), rather than
    saying something about someone's memory ("I don't remember the address")."""
    return bool(_requests(sentence))


def shown(text: str) -> str:
    """``text`` without the sentences that ask not to be kept."""
    return " ".join(s for s in sentences(text) if s.strip() and not withholds(s))


def _terms(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


@dataclass(frozen=True, slots=True)
class Withheld:
    """The words a user said only in sentences asking not to be kept (see module docstring)."""

    words: frozenset[str] = frozenset()

    @classmethod
    def said_in(cls, *texts: str) -> Withheld:
        """From the user's messages (``[Memory context]`` blocks already stripped)."""
        asked: set[str] = set()
        kept: set[str] = set()
        for text in texts:
            for sentence in sentences(text):
                if withholds(sentence):
                    # The request's own words ("don't remember") are not what it asks about.
                    asked |= _terms(_NEGATED_REMEMBER.sub(" ", sentence))
                else:
                    kept |= _terms(sentence)
        return cls(frozenset(asked - kept))

    def allows(self, content: str) -> bool:
        """Whether a proposed fact carries none of the withheld words."""
        return not self.words or not (_terms(content) & self.words)


__all__ = ["Withheld", "shown", "withholds"]
