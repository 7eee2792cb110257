"""Where a sentence ends, for the extractors: at ``.``, ``!`` or ``?`` before a space (or the end)
and at a line break, but not at an abbreviation's dot or an initial's.

"I live in St. Louis", "My doctor is Dr. Smith", "I work at Acme Inc. in Berlin", "My favourite
author is J. R. R. Tolkien": read with every dot before a space as a stop, each was cut at its
first dot ("The user lives in St."). No library engram depends on splits sentences (nltk's punkt
is an optional package's dependency here and needs its model downloaded), so a short list does:

- *titles and other leading abbreviations* (``Mr.``, ``Dr.``, ``St.``, ``e.g.``), and a single
  capital letter (an initial: ``J. R. R. Tolkien``; not ``I``, the pronoun), come before what
  they belong to: their dot is no stop, unless the next word starts a new sentence about someone
  ("... my grade is A. I like tea", where "I", "My", "She" ... begins the next one);
- *trailing abbreviations* (``Inc.``, ``Ltd.``, ``Jr.``) end a name, and often a sentence too:
  their dot is a stop unless the sentence goes on in lower case ("Acme Inc. in Berlin").

``STOP`` is the pattern of a stop that ends a sentence, for the rules' values (``extract_rules``)
and ``sentences`` alike, so the two cannot disagree. It works with or without ``re.IGNORECASE``.
"""

from __future__ import annotations

import re

# Lower case; matched ignoring case. "e.g" and "i.e": their last dot is the one before the space.
_LEADING = (
    "mr mrs ms mx dr prof st mt ft rev fr sgt capt lt col gen gov sen rep pres hon messrs mme mlle e.g i.e cf vs approx"
).split()
_TRAILING = "inc ltd corp co jr sr bros plc llc".split()


def _after(words: list[str]) -> str:
    """A position right after one of ``words`` (each a fixed-width look-behind: Python's ``re``
    takes no look-behind of varying width)."""
    return "(?:" + "|".join(rf"(?<=\b(?i:{re.escape(w)}))" for w in words) + ")"


# The word that starts a new sentence after a leading abbreviation or an initial: a pronoun or a
# possessive, capitalised as a sentence's first word is.
_NEW_SENTENCE = r"(?-i:I|My|We|He|She|It|They|You|Our|His|Her|Their)\b"
_INITIAL = r"(?<=\b(?-i:[A-HJ-Z]))"
# A dot before a space that does not end a sentence.
NOT_A_STOP = (
    rf"(?:(?:{_after(_LEADING)}|{_INITIAL})\.(?=\s+(?!{_NEW_SENTENCE}))"
    rf"|{_after(_TRAILING)}\.(?=\s+(?-i:[a-z0-9])))"
)
# A stop that ends a sentence: before a space or the end of the text.
STOP = rf"(?:(?!{NOT_A_STOP})[.!?](?=\s|$))"

_BREAK = re.compile(rf"(?P<stop>{STOP})\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a message, as the extractors read them: each ends at a stop (kept) or a
    line break; the space between them is dropped."""
    parts: list[str] = []
    start = 0
    for m in _BREAK.finditer(text):
        parts.append(text[start : m.end("stop") if m["stop"] else m.start()])
        start = m.end()
    parts.append(text[start:])
    return parts


__all__ = ["NOT_A_STOP", "STOP", "sentences"]
